#!/usr/bin/env bash
# HTTP probes through the whole exporter (scheduler, stagger, HTTP prober, verdict, metrics)
# against prometheus-blackbox-exporter scraped on /probe at the same rate, side by side in one
# run: N targets (paths of one loopback server answering 204), one probe each per second; the
# blackbox exporter gets N /probe requests a second from a paced keep-alive driver. Then our
# /probe gets the same driver, the same module file and the same N a second. CPU of each
# exporter process only (/proc/PID/stat over the same window); the 204 server and the driver are
# not counted. Loopback only; every process started here is stopped by PID; bounded in time.
#
#   bench/exporter_http_bench.sh               # N=1000 SECONDS_MEASURED=15
#   N=300 BASELINE=/tmp/old/reachability_exporter bench/exporter_http_bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-1000}
SECONDS_=${SECONDS_MEASURED:-15}
WARMUP=${WARMUP:-5}
(( N > 0 && N <= 5000 )) || { echo "N must be in 1...5000" >&2; exit 64; }
BLACKBOX=${BLACKBOX:-/usr/bin/prometheus-blackbox-exporter}
[ -x "$BLACKBOX" ] || { echo "missing $BLACKBOX: apt-get install prometheus-blackbox-exporter" >&2; exit 1; }
flock /tmp/swift-build.lock swift build -c release --product reachability_exporter >/dev/null
OURS="$(swift build -c release --show-bin-path)/reachability_exporter"
tmp=$(mktemp -d /tmp/rx-exhttp.XXXXXX)
pids=()
pid=""
cleanup() {
  for p in "${pids[@]}" $pid; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}" $pid; do wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
hz=$(getconf CLK_TCK)
ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# The 204 server: Python, threaded, HTTP/1.1 keep-alive, on 127.0.0.1.
python3 - "$tmp/server_port" <<'EOF' &
import http.server, os, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        self.send_response(204); self.end_headers()
    do_HEAD = do_GET
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer.request_queue_size = 1024
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1] + ".tmp", "w").write(str(s.server_address[1])); os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.serve_forever()
EOF
pids+=($!)
for _ in $(seq 100); do [ -s "$tmp/server_port" ] && break; sleep 0.1; done
sport=$(cat "$tmp/server_port")

exporter() { # name binary
  local name=$1 bin=$2 args=() port; port=$(free_port)
  for ((i = 0; i < N; i++)); do args+=("--probe.http=http://127.0.0.1:$sport/t$i"); done
  REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1 "$bin" --web.listen-address="127.0.0.1:$port" \
    --probe.interval=1s --probe.timeout=900ms --probe.trust-local-targets --no-path.monitor \
    --log.level=warn "${args[@]}" 2>"$tmp/$name.log" &
  pid=$!
  sleep "$WARMUP"
  local counts='/^reachability_probe_(success|failure)s?_total|^reachability_probes_total/ { s[$1 ~ /fail/ ? "f" : "a"] += $NF } END { print s["a"] + 0, s["f"] + 0 }'
  local m0 m1 t0 t1
  m0=$(curl -fsS --max-time 30 "http://127.0.0.1:$port/metrics" | awk "$counts")
  t0=$(ticks "$pid"); sleep "$SECONDS_"; t1=$(ticks "$pid")
  m1=$(curl -fsS --max-time 30 "http://127.0.0.1:$port/metrics" | awk "$counts")
  local rss; rss=$(awk '/VmRSS/ { print $2 }' "/proc/$pid/status")
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
  read -r a0 f0 <<<"$m0"; read -r a1 f1 <<<"$m1"
  awk -v name="$name" -v dt=$((t1 - t0)) -v hz="$hz" -v s="$SECONDS_" -v probes=$((a1 - a0)) -v fails=$((f1 - f0)) -v rss="$rss" 'BEGIN {
    cpu = dt / hz
    printf "%-28s probes=%6d failed=%5d rate=%6.0f/s cpu_pct=%6.2f us_per_probe=%7.1f rss_mib=%6.1f\n", name, probes, fails, probes / s, cpu * 100 / s, probes ? cpu * 1e6 / probes : 0, rss / 1024 }'
}

# The module file both exporters serve /probe from.
cat >"$tmp/blackbox.yml" <<'EOF2'
modules:
  http_204:
    prober: http
    timeout: 5s
    http:
      method: GET
      valid_status_codes: [204]
      preferred_ip_protocol: ip4
EOF2

# One exporter answering /probe?module=http_204&target=… at N requests a second: the same
# module file, the same driver, the same window for blackbox_exporter and for ours.
probe_run() { # label command...
  local label=$1 port; shift; port=$(free_port)
  "$@" --web.listen-address="127.0.0.1:$port" >"$tmp/probe.log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/-/healthy" >/dev/null 2>&1 && break; sleep 0.1; done
  curl -fs "http://127.0.0.1:$port/probe?module=http_204&target=http://127.0.0.1:$sport/t0" | grep -q '^probe_success 1' \
    || { echo "$label: probe failed" >&2; cat "$tmp/probe.log" >&2; exit 1; }
  # The driver: 8 threads, each a keep-alive connection paced to N/8 requests a second, for
  # WARMUP + SECONDS_ + 1 s; it writes "ok total" of the measured window when done.
  python3 - "$port" "$sport" "$N" "$WARMUP" "$SECONDS_" "$tmp/driver" <<'EOF2' &
import http.client, sys, threading, time
port, sport, n, warm, meas, out = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
threads = 8
start = time.monotonic() + 0.2
lock = threading.Lock()
ok = total = 0
def run(k):
    global ok, total
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    i = 0
    while True:
        due = start + (i * threads + k) / n
        if due > start + warm + meas + 1: break
        d = due - time.monotonic()
        if d > 0: time.sleep(d)
        c.request("GET", f"/probe?module=http_204&target=http://127.0.0.1:{sport}/t{(i * threads + k) % n}")
        body = c.getresponse().read()
        if start + warm <= due < start + warm + meas:
            with lock:
                total += 1; ok += b"probe_success 1" in body
        i += 1
ts = [threading.Thread(target=run, args=(k,)) for k in range(threads)]
for t in ts: t.start()
for t in ts: t.join()
open(out, "w").write(f"{ok} {total}\n")
EOF2
  local driver=$!
  pids+=("$driver")
  sleep "$WARMUP"
  local t0 t1; t0=$(ticks "$pid"); sleep "$SECONDS_"; t1=$(ticks "$pid")
  local rss; rss=$(awk '/VmRSS/ { print $2 }' "/proc/$pid/status")
  wait "$driver" || true
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
  read -r ok total <"$tmp/driver"
  awk -v name="$label" -v dt=$((t1 - t0)) -v hz="$hz" -v s="$SECONDS_" -v ok="$ok" -v total="$total" -v rss="$rss" 'BEGIN {
    cpu = dt / hz
    printf "%-28s probes=%6d failed=%5d rate=%6.0f/s cpu_pct=%6.2f us_per_probe=%7.1f rss_mib=%6.1f\n", name, total, total - ok, total / s, cpu * 100 / s, total ? cpu * 1e6 / total : 0, rss / 1024 }'
}

echo "# exporter HTTP: $N targets x 1/s against a loopback 204, ${SECONDS_}s measured after ${WARMUP}s, $(nproc) cores, $(date -u +%FT%TZ)"
[ -n "${NO_OURS:-}" ] || exporter reachability_exporter "$OURS"
[ -z "${BASELINE:-}" ] || exporter baseline "$BASELINE"
probe_run "blackbox_exporter /probe" "$BLACKBOX" --config.file="$tmp/blackbox.yml" --log.level=warn
# Ours on /probe: one loopback probe of its own (it needs a target), every second, beside the load.
probe_run "reachability /probe" env REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1 "$OURS" \
  --modules.file="$tmp/blackbox.yml" --probe.http="http://127.0.0.1:$sport/self" \
  --probe.interval=1s --probe.timeout=900ms --probe.trust-local-targets --no-path.monitor --log.level=warn
