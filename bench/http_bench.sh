#!/usr/bin/env bash
# CPU per HTTP probe: our HTTPProber (bench/http_probe_bench, release build) versus
# prometheus-blackbox-exporter's http prober, side by side in one run, against the same
# loopback server answering 204. CPU comes from /proc/PID/stat (utime + stime) of each prober
# process only; the server and curl are not counted. Loopback only; bounded in count and time.
#
#   bench/http_bench.sh            # N=1000 probes each
#   N=3000 bench/http_bench.sh
set -euo pipefail
N=${N:-1000}
(( N > 0 && N <= 20000 )) || { echo "N must be in 1...20000" >&2; exit 64; }
cd "$(dirname "$0")/.."
BLACKBOX=${BLACKBOX:-/usr/bin/prometheus-blackbox-exporter}
TMP=$(mktemp -d /tmp/rx-http-bench.XXXXXX)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$TMP"
}
trap cleanup EXIT

echo "building http_probe_bench (release)..." >&2
flock /tmp/swift-build.lock timeout 900 swift build -c release --product http_probe_bench >"$TMP/build.log" 2>&1 \
    || { tail -20 "$TMP/build.log" >&2; exit 1; }
BIN="$(swift build -c release --show-bin-path)/http_probe_bench"

# The shared 204 server: Python, HTTP/1.0 (closes each connection), on 127.0.0.1 port 0.
python3 - "$TMP/server_port" <<'EOF' &
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(204); self.end_headers()
    do_HEAD = do_GET
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1] + ".tmp", "w").write(str(s.server_address[1])); __import__("os").rename(sys.argv[1] + ".tmp", sys.argv[1])
s.serve_forever()
EOF
PIDS+=($!)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
BB_PORT=$(free_port)

cat >"$TMP/blackbox.yml" <<'EOF'
modules:
  http_2xx:
    prober: http
    timeout: 5s
    http:
      method: GET
      preferred_ip_protocol: ip4
EOF
"$BLACKBOX" --config.file="$TMP/blackbox.yml" --web.listen-address="127.0.0.1:$BB_PORT" >"$TMP/blackbox.log" 2>&1 &
BB_PID=$!
PIDS+=("$BB_PID")

for _ in $(seq 100); do
    [[ -s "$TMP/server_port" ]] && curl -fs "http://127.0.0.1:$BB_PORT/-/healthy" >/dev/null 2>&1 && break
    sleep 0.1
done
SERVER_PORT=$(cat "$TMP/server_port")
TARGET="http://127.0.0.1:$SERVER_PORT/"
PROBE="http://127.0.0.1:$BB_PORT/probe?module=http_2xx&target=$TARGET"
curl -fs "$PROBE" | grep -q '^probe_success 1' || { echo "blackbox probe failed" >&2; cat "$TMP/blackbox.log" >&2; exit 1; }

ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }   # utime + stime
HZ=$(getconf CLK_TCK)

# blackbox_exporter: warm up, then N probes through one keep-alive curl (curl's own CPU is not counted).
curl -fs -o /dev/null "$PROBE&warm=[1-20]"
t0=$(ticks "$BB_PID"); w0=$(date +%s%N)
timeout 300 curl -fs "$PROBE&i=[1-$N]" | grep -c '^probe_success 1' >"$TMP/bb_ok" || true
t1=$(ticks "$BB_PID"); w1=$(date +%s%N)
BB_OK=$(cat "$TMP/bb_ok")

# ours: the driver measures its own /proc/self/stat around N probes after a warm-up.
OURS=$(timeout 300 "$BIN" "$TARGET" "$N")

awk -v n="$N" -v hz="$HZ" -v bt=$((t1 - t0)) -v bw=$(((w1 - w0) / 1000000)) -v bok="$BB_OK" -v ours="$OURS" 'BEGIN {
    split(ours, kv, " "); for (i in kv) { split(kv[i], p, "="); o[p[1]] = p[2] }
    printf "target: 204 on loopback, %d probes each, sequential, CLK_TCK=%d\n", n, hz
    printf "%-28s %10s %14s %12s %10s\n", "prober", "ok", "cpu ms/probe", "wall ms/probe", "cpu ticks"
    printf "%-28s %10d %14.3f %12.3f %10d\n", "reachability HTTPProber", n - o["failures"], o["cpu_ticks"] * 1000 / hz / n, o["wall_ms"] / n, o["cpu_ticks"]
    printf "%-28s %10d %14.3f %12.3f %10d\n", "blackbox_exporter /probe", bok, bt * 1000 / hz / n, bw / n, bt
    printf "(ours by getrusage: %.3f ms/probe)\n", o["cpu_us"] / 1000 / n
}'
