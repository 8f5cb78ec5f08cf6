#!/usr/bin/env bash
# Scrape-path benchmark, side by side in one run:
#   ours:  reachability-bench serve-synthetic (production registry, exposition and HTTP server)
#          with 1,000 targets' worth of series (~26,000)
#   peer:  prometheus-smokeping-prober pinging 1,000 loopback addresses (127.0.x.y), whose
#          output is ~26,000 series
# Each is measured twice: plain, and with Accept-Encoding: gzip (as Prometheus asks), bytes
# on the wire included. For each: idle CPU rate first, then `wrk -t2 -c16 -d${DURATION}s` on /metrics; CPU per scrape
# = (CPU during the run - idle rate x duration) / scrapes served. CPU from /proc/PID/stat.
# Everything runs inside a network namespace made for the run (loopback only, deleted on exit),
# where net.ipv4.ping_group_range lets smokeping_prober use its default datagram ICMP sockets:
# in raw mode it burns both cores at 1,000 targets, which would swamp the comparison.
# Every process started here is stopped by PID on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGETS=${TARGETS:-1000}
DURATION=${DURATION:-10}
IDLE=${IDLE:-5}
SEQ=${SEQ:-50}
for tool in wrk curl prometheus-smokeping-prober; do
  command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install wrk curl prometheus-smokeping-prober" >&2; exit 1; }
done
swift build -c release --product reachability-bench >/dev/null
BENCH="$(swift build -c release --show-bin-path)/reachability-bench"
[ "$(id -u)" = 0 ] || { echo "needs root (network namespace)" >&2; exit 1; }
ns="rxbench-$$"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; sleep 0.2; ip netns del "$ns" 2>/dev/null || true; }
trap cleanup EXIT
ip netns add "$ns"
ip -n "$ns" link set lo up
ip netns exec "$ns" sysctl -qw net.ipv4.ping_group_range="0 2147483647"
inns() { ip netns exec "$ns" "$@"; }

hosts=()
for ((i = 0; i < TARGETS; i++)); do hosts+=("127.0.$((i / 250)).$((i % 250 + 1))"); done

cpu_ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)

measure() { # name pid url [extra header for wrk and curl]
  local name=$1 pid=$2 url=$3 hdr=()
  [ -z "${4:-}" ] || hdr=(-H "$4")
  local series; series=$(inns curl -fsS "$url" | grep -vc '^#')
  local bytes; bytes=$(inns curl -fsS "${hdr[@]}" -o /dev/null -w '%{size_download}' "$url")
  local t0; t0=$(cpu_ticks "$pid"); sleep "$IDLE"; local t1; t1=$(cpu_ticks "$pid")
  local out; out=$(inns wrk -t2 -c16 -d"${DURATION}s" "${hdr[@]}" "$url" 2>&1)
  local t2; t2=$(cpu_ticks "$pid")
  # Sequential scrapes, one connection each, as Prometheus does: robust even for a slow peer.
  local s0; s0=$(date +%s.%N); local c0; c0=$(cpu_ticks "$pid")
  for ((k = 0; k < SEQ; k++)); do inns curl -fsS "${hdr[@]}" -o /dev/null "$url"; done
  local c1; c1=$(cpu_ticks "$pid"); local s1; s1=$(date +%s.%N)
  local reqs; reqs=$(awk '/requests in/ { print $1 }' <<<"$out")
  local rps; rps=$(awk '/Requests\/sec/ { print $2 }' <<<"$out")
  local errors; errors=$(awk '/Non-2xx|Socket errors/ { print }' <<<"$out")
  python3 - "$name" "$series" "$t0" "$t1" "$t2" "$reqs" "$rps" "$hz" "$IDLE" "$DURATION" "$c0" "$c1" "$s0" "$s1" "$SEQ" "$errors" "$bytes" <<'PY'
import sys
name, series, t0, t1, t2, reqs, rps, hz, idle, dur, c0, c1, s0, s1, seq, errors, size = sys.argv[1:]
t0, t1, t2, reqs, hz, idle, dur = int(t0), int(t1), int(t2), int(reqs), int(hz), float(idle), float(dur)
c0, c1, s0, s1, seq = int(c0), int(c1), float(s0), float(s1), int(seq)
idle_rate = (t1 - t0) / hz / idle
busy = (t2 - t1) / hz - idle_rate * dur
per = busy / max(reqs, 1) * 1000
seq_per = ((c1 - c0) / hz - idle_rate * (s1 - s0)) / seq * 1000
print(f"{name:<27} series={series:>6} bytes={size:>8} idle_cpu={idle_rate*100:5.1f}% | wrk: scrapes={reqs:>6} req/s={float(rps):8.1f} cpu/scrape={per:7.2f} ms | sequential x{seq}: cpu/scrape={seq_per:7.2f} ms {errors}")
with open("/tmp/rx-scrape-bench.tsv", "a") as f:
    f.write(f"{name}\t{series}\t{per:.4f}\t{rps}\t{seq_per:.4f}\t{size}\n")
PY
}

rm -f /tmp/rx-scrape-bench.tsv
log=$(mktemp)
# `ip netns exec` execs the command, so $! is the server itself.
ip netns exec "$ns" "$BENCH" serve-synthetic --targets "$TARGETS" --listen 127.0.0.1:0 >"$log" &
pids+=($!); ours=$!
for _ in $(seq 100); do grep -q listening "$log" && break; sleep 0.05; done
ours_url="http://$(awk '/listening/ { print $2 }' "$log")/metrics"

port=$((20000 + RANDOM % 20000))
peerlog=$(mktemp)
# --ping.interval=30s: the peer's exposition is the same ~26,000 series, but its pinging (a full
# core at 1,000 pings/s here) no longer drowns the scrape-path measurement.
ip netns exec "$ns" prometheus-smokeping-prober --ping.interval=30s --web.listen-address="127.0.0.1:$port" "${hosts[@]}" 2>"$peerlog" &
pids+=($!); peer=$!
for _ in $(seq 900); do inns curl -fsS -o /dev/null "http://127.0.0.1:$port/metrics" 2>/dev/null && break; sleep 0.1; done
inns curl -fsS -o /dev/null "http://127.0.0.1:$port/metrics" || { echo "smokeping_prober did not start:"; tail -5 "$peerlog"; exit 1; }
sleep 35  # both warm up: every peer target has pinged at least once

echo "scrape benchmark: $TARGETS targets, wrk -t2 -c16 -d${DURATION}s, $(nproc) cores"
measure "reachability_exporter" "$ours" "$ours_url"
measure "smokeping_prober" "$peer" "http://127.0.0.1:$port/metrics"
# What Prometheus sends (Accept-Encoding: gzip): the bytes on the wire and the CPU it costs.
measure "reachability_exporter gzip" "$ours" "$ours_url" "Accept-Encoding: gzip"
measure "smokeping_prober gzip" "$peer" "http://127.0.0.1:$port/metrics" "Accept-Encoding: gzip"
python3 - <<'PY'
rows = [l.rstrip("\n").split("\t") for l in open("/tmp/rx-scrape-bench.tsv")]
ours, peer = float(rows[0][2]), float(rows[1][2])
sq_ours, sq_peer = float(rows[0][4]), float(rows[1][4])
print(f"CPU per scrape under wrk: ours {ours:.2f} ms, smokeping_prober {peer:.2f} ms -> {peer / ours:.1f}x less; throughput {float(rows[0][3]) / max(float(rows[1][3]), 0.01):.1f}x")
print(f"CPU per sequential scrape: ours {sq_ours:.2f} ms, smokeping_prober {sq_peer:.2f} ms -> {sq_peer / sq_ours:.1f}x less")
gz, gzp = rows[2], rows[3]
print(f"gzip: ours {int(rows[0][5])} -> {int(gz[5])} bytes ({int(rows[0][5]) / int(gz[5]):.1f}x smaller), "
      f"CPU per scrape {sq_ours:.2f} -> {float(gz[4]):.2f} ms sequential; "
      f"smokeping_prober {int(rows[1][5])} -> {int(gzp[5])} bytes, {sq_peer:.2f} -> {float(gzp[4]):.2f} ms; "
      f"gzip CPU per scrape ours vs peer: {float(gzp[4]) / float(gz[4]):.1f}x less")
PY
