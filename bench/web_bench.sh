#!/usr/bin/env bash
# The secured endpoint, side by side in one run: reachability_exporter (release build) against
# prometheus-blackbox-exporter, each serving its own /metrics under the SAME web config file,
# in three modes:
#   plain     no web config
#   tls       tls_server_config (EC P-256 certificate, TLS 1.2 and 1.3)
#   tls+auth  the same, plus basic_auth_users with a bcrypt hash (cost 10)
# and two ways of scraping:
#   keep-alive   wrk -t2 -c16 on kept connections (what Prometheus does between scrapes)
#   new conn     wrk with "Connection: close": a TCP connect, and a full TLS handshake, per scrape
# Each row: scrapes/s and CPU per scrape of the server process (utime + stime from
# /proc/PID/stat, the process's idle rate subtracted), and the ratio ours/peer. The bodies differ
# (ours: the exporter's own families for one probe; the peer's: its Go runtime metrics); both
# sizes are printed.
#
# Everything runs in a network namespace made for the run (loopback only, deleted on exit);
# every process started here is stopped by PID. Bounded: 6 modes x 2 servers x DURATION s.
#
#   bench/web_bench.sh                 # DURATION=8
#   DURATION=15 bench/web_bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-8}
IDLE=${IDLE:-3}
(( DURATION > 0 && DURATION <= 120 )) || { echo "DURATION must be in 1...120" >&2; exit 64; }
for tool in wrk curl openssl python3 prometheus-blackbox-exporter; do
  command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install wrk curl openssl prometheus-blackbox-exporter" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "needs root (network namespace)" >&2; exit 1; }
echo "building reachability_exporter (release)..." >&2
swift build -c release --product reachability_exporter >/dev/null
OURS="$(swift build -c release --show-bin-path)/reachability_exporter"

ns="rxwebbench-$$"
tmp=$(mktemp -d /tmp/rx-web-bench.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
ip netns add "$ns"
ip -n "$ns" link set lo up
inns() { ip netns exec "$ns" "$@"; }

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=localhost \
  -addext subjectAltName=IP:127.0.0.1,DNS:localhost -keyout "$tmp/server.key" -out "$tmp/server.pem" 2>/dev/null
password=bench-secret
hash=$(python3 -c 'import crypt, sys; print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << 10)))' "$password" 2>/dev/null)
tls="tls_server_config:
  cert_file: $tmp/server.pem
  key_file: $tmp/server.key"
printf '%s\n' "$tls" >"$tmp/tls.yml"
printf '%s\nbasic_auth_users:\n  prometheus: %s\n' "$tls" "$hash" >"$tmp/tls-auth.yml"
printf 'modules:\n  tcp_connect:\n    prober: tcp\n' >"$tmp/blackbox.yml"
auth="Authorization: Basic $(printf 'prometheus:%s' "$password" | base64)"

cpu_ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
rm -f "$tmp/rows.tsv"

start_pair() { # web-config-file-or-empty
  local cfg=$1 webflag=()
  [ -z "$cfg" ] || webflag=(--web.config.file="$cfg")
  # Ours: one TCP probe to a closed loopback port every 30 s (the body is the exporter's own
  # families); no path monitor.
  # `ip netns exec` execs the command, so $! is the server itself (not a shell around it).
  ip netns exec "$ns" "$OURS" --web.listen-address=127.0.0.1:9301 "${webflag[@]}" --probe.tcp=127.0.0.1:9 \
    --probe.trust-local-targets --no-path.monitor --probe.interval=30s --probe.timeout=1s --log.level=warn \
    2>"$tmp/ours.log" &
  pids+=($!); ours=$!
  ip netns exec "$ns" prometheus-blackbox-exporter --config.file="$tmp/blackbox.yml" --web.listen-address=127.0.0.1:9302 \
    "${webflag[@]}" --log.level=warn 2>"$tmp/peer.log" &
  pids+=($!); peer=$!
}

stop_pair() {
  kill "$ours" "$peer" 2>/dev/null || true
  wait "$ours" "$peer" 2>/dev/null || true
}

measure() { # mode scheme name pid port extra-wrk-args...
  local mode=$1 scheme=$2 name=$3 pid=$4 port=$5; shift 5
  local url="$scheme://127.0.0.1:$port/metrics" curlauth=()
  [[ $mode != *auth* ]] || curlauth=(-H "$auth")
  local bytes; bytes=$(inns curl -sk "${curlauth[@]}" -o /dev/null -w '%{size_download}' "$url")
  local code; code=$(inns curl -sk "${curlauth[@]}" -o /dev/null -w '%{http_code}' "$url")
  [ "$code" = 200 ] || { echo "$name ($mode) answered $code, not 200" >&2; exit 1; }
  local t0; t0=$(cpu_ticks "$pid"); sleep "$IDLE"; local t1; t1=$(cpu_ticks "$pid")
  local out; out=$(inns wrk -t2 -c16 -d"${DURATION}s" "$@" "$url" 2>&1)
  local t2; t2=$(cpu_ticks "$pid")
  local reqs; reqs=$(awk '/requests in/ { print $1 }' <<<"$out")
  local bad; bad=$(awk '/Non-2xx/ { print $NF }' <<<"$out")
  [ -z "$bad" ] || { echo "$name ($mode): $bad non-2xx answers under load" >&2; echo "$out" >&2; exit 1; }
  python3 - "$mode" "$name" "$bytes" "$t0" "$t1" "$t2" "${reqs:-0}" "$hz" "$IDLE" "$DURATION" >>"$tmp/rows.tsv" <<'PY'
import sys
mode, name, size, t0, t1, t2, reqs, hz, idle, dur = sys.argv[1:]
t0, t1, t2, reqs, hz, idle, dur = int(t0), int(t1), int(t2), int(reqs), int(hz), float(idle), float(dur)
busy = (t2 - t1) / hz - (t1 - t0) / hz / idle * dur
print(f"{mode}\t{name}\t{size}\t{reqs / dur:.1f}\t{busy / max(reqs, 1) * 1e6:.1f}")
PY
}

wait_up() { # scheme port mode
  local curlauth=()
  [[ $3 != *auth* ]] || curlauth=(-H "$auth")
  for _ in $(seq 100); do
    inns curl -skf --max-time 1 "${curlauth[@]}" -o /dev/null "$1://127.0.0.1:$2/metrics" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "no answer on $1://127.0.0.1:$2 ($3):" >&2; cat "$tmp/ours.log" "$tmp/peer.log" >&2; exit 1
}

for mode in plain tls tls+auth; do
  case $mode in
    plain) cfg="" scheme=http ;;
    tls) cfg="$tmp/tls.yml" scheme=https ;;
    tls+auth) cfg="$tmp/tls-auth.yml" scheme=https ;;
  esac
  start_pair "$cfg"
  wait_up "$scheme" 9301 "$mode"
  wait_up "$scheme" 9302 "$mode"
  extra=()
  [[ $mode != *auth* ]] || extra=(-H "$auth")
  measure "$mode keep-alive" "$scheme" ours "$ours" 9301 "${extra[@]}"
  measure "$mode keep-alive" "$scheme" blackbox "$peer" 9302 "${extra[@]}"
  measure "$mode new conn" "$scheme" ours "$ours" 9301 "${extra[@]}" -H "Connection: close"
  measure "$mode new conn" "$scheme" blackbox "$peer" 9302 "${extra[@]}" -H "Connection: close"
  stop_pair
done

echo "web endpoint benchmark: wrk -t2 -c16 -d${DURATION}s per row, $(nproc) cores, $(date -u +%FT%TZ)"
python3 - "$tmp/rows.tsv" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
by = {}
for mode, name, size, rps, cpu in rows:
    by.setdefault(mode, {})[name] = (int(size), float(rps), float(cpu))
print(f"{'mode':<22} {'ours/s':>9} {'blackbox/s':>11} {'ratio':>6} | {'ours µs':>8} {'bb µs':>8} {'less CPU':>8} | bytes ours/bb")
worst = None
for mode, d in by.items():
    o, p = d["ours"], d["blackbox"]
    ratio, cpu = o[1] / max(p[1], 0.01), p[2] / max(o[2], 0.01)
    worst = min(worst or ratio, ratio)
    print(f"{mode:<22} {o[1]:>9.0f} {p[1]:>11.0f} {ratio:>5.2f}x | {o[2]:>8.0f} {p[2]:>8.0f} {cpu:>7.2f}x | {o[0]}/{p[0]}")
print(f"lowest throughput ratio ours/blackbox: {worst:.2f}x")
PY
