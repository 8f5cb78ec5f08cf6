#!/usr/bin/env bash
# Where the exporter's memory goes at N ICMP targets (#33): RSS (anonymous and file pages) at
# each step of its life, so each step's share can be read off: started with its probes and
# series made but not yet scraped, after its first scrape, after five more, after an idle pause.
# Also the size of one scrape (bytes, series) and of its gzip. Loopback targets 127.x.y.z in a
# namespace made here (deleted on exit); the exporter is stopped by PID. Bounded: about
# WARMUP + 30 s.
#
#   bench/memory_breakdown.sh                      # N=10000
#   N=1000 OURS=/path/to/reachability_exporter bench/memory_breakdown.sh
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-10000}
WARMUP=${WARMUP:-8}
(( N > 0 && N <= 20000 )) || { echo "N must be in 1...20000" >&2; exit 64; }
[ "$(id -u)" = 0 ] || { echo "needs root (network namespace)" >&2; exit 1; }
if [ -z "${OURS:-}" ]; then
  flock /tmp/swift-build.lock swift build -c release --product reachability_exporter >/dev/null
  OURS="$(swift build -c release --show-bin-path)/reachability_exporter"
fi
source bench/netns.sh
bench_netns rx-mem
inns sysctl -qw net.ipv4.ping_group_range="0 2147483647"
args=()
for ((i = 1; i <= N; i++)); do args+=("--probe.icmp=127.$(((i >> 16) & 255)).$(((i >> 8) & 255)).$((i & 255))"); done
port=$((20000 + RANDOM % 20000))
REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1 ip netns exec "$ns" "$OURS" --web.listen-address="127.0.0.1:$port" \
  --probe.interval=1s --probe.timeout=500ms --probe.icmp.count=1 --probe.trust-local-targets --no-path.monitor \
  --log.level=warn "${args[@]}" >/dev/null 2>"$work/log" &
pid=$!; pids+=("$pid")
mem() { # step
  kill -0 "$pid" 2>/dev/null || { echo "exited: $(tail -3 "$work/log")" >&2; exit 1; }
  awk -v step="$1" '/^VmRSS/ { r = $2 } /^RssAnon/ { a = $2 } /^RssFile/ { f = $2 } /^Threads/ { t = $2 }
    END { printf "%-44s %9.1f %9.1f %9.1f %8d\n", step, r / 1024, a / 1024, f / 1024, t }' "/proc/$pid/status"
}
echo "# memory at $N ICMP targets, 1/s, $(date -u +%FT%TZ), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
printf '%-44s %9s %9s %9s %8s\n' step "RSS MiB" "anon MiB" "file MiB" threads
sleep 1; mem "started (1 s)"
sleep "$((WARMUP - 1))"; mem "probing ${WARMUP} s, never scraped"
inns curl -fsS --max-time 60 -o "$work/m" "http://127.0.0.1:$port/metrics"
mem "after the first scrape"
for _ in 1 2 3 4 5; do inns curl -fsS --max-time 60 -o /dev/null "http://127.0.0.1:$port/metrics"; done
mem "after five more"
inns curl -fsS --max-time 60 -H 'Accept-Encoding: gzip' -o "$work/m.gz" "http://127.0.0.1:$port/metrics"
mem "after a gzip scrape"
sleep 10; mem "10 s later, not scraped"
series=$(grep -vc '^#' "$work/m")
awk -v b="$(stat -c %s "$work/m")" -v z="$(stat -c %s "$work/m.gz")" -v s="$series" -v n="$N" 'BEGIN {
  printf "one scrape: %.1f MiB, %d samples (%.1f per target), %.0f B per sample; its gzip %.1f MiB\n", b / 1048576, s, s / n, b / s, z / 1048576 }'
echo "samples per family (top 12):"
grep -v '^#' "$work/m" | sed -E 's/[{ ].*//; s/_(bucket|sum|count)$//' | sort | uniq -c | sort -rn | head -12
