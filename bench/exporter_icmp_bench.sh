#!/usr/bin/env bash
# ICMP through the whole exporter (scheduler, stagger, prober, verdict, metrics), side by side
# with fping in one run: N loopback targets (127.0.x.y), one echo each per second, datagram
# sockets, in a network namespace made for the run (loopback only, deleted on exit). CPU of each
# process from /proc/PID/stat over the same measured window; loss from the exporter's own
# counters and from fping's summary. Optionally a second exporter binary (BASELINE=path) is
# measured the same way, for before/after comparisons. Every process started here is stopped by
# PID. Bounded: each run is WARMUP + SECONDS.
#
#   bench/exporter_icmp_bench.sh                     # N=1000 SECONDS=15
#   N=3000 BASELINE=/tmp/old/reachability_exporter bench/exporter_icmp_bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-1000}
SECONDS_=${SECONDS_MEASURED:-15}
WARMUP=${WARMUP:-5}
(( N > 0 && N <= 20000 )) || { echo "N must be in 1...20000" >&2; exit 64; }
[ "$(id -u)" = 0 ] || { echo "needs root (network namespace)" >&2; exit 1; }
command -v fping >/dev/null || { echo "missing fping: apt-get install fping" >&2; exit 1; }
swift build -c release --product reachability_exporter >/dev/null
OURS="$(swift build -c release --show-bin-path)/reachability_exporter"
ns="rx-exicmp-$$"
tmp=$(mktemp -d /tmp/rx-exicmp.XXXXXX)
pid=""
cleanup() {
  [ -z "$pid" ] || { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
ip netns add "$ns"
ip -n "$ns" link set lo up
ip netns exec "$ns" sysctl -qw net.ipv4.ping_group_range="0 2147483647"
hz=$(getconf CLK_TCK)
ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
hosts=()
for ((i = 1; i <= N; i++)); do hosts+=("127.$(((i >> 16) & 255)).$(((i >> 8) & 255)).$((i & 255))"); done

exporter() { # name binary
  local name=$1 bin=$2 args=() port=$((20000 + RANDOM % 20000))
  for h in "${hosts[@]}"; do args+=("--probe.icmp=$h"); done
  REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1 ip netns exec "$ns" "$bin" --web.listen-address="127.0.0.1:$port" \
    --probe.interval=1s --probe.timeout=500ms --probe.icmp.count=1 --probe.trust-local-targets --no-path.monitor \
    --log.level=warn "${args[@]}" 2>"$tmp/$name.log" &
  pid=$!
  sleep "$WARMUP"
  local m0 m1 t0 t1
  m0=$(ip netns exec "$ns" curl -fsS "http://127.0.0.1:$port/metrics" | awk '/^reachability_probe_(success|failure)s?_total|^reachability_probes_total/ { s[$1 ~ /fail/ ? "f" : "a"] += $NF } END { print s["a"] + 0, s["f"] + 0 }')
  t0=$(ticks "$pid"); sleep "$SECONDS_"; t1=$(ticks "$pid")
  m1=$(ip netns exec "$ns" curl -fsS "http://127.0.0.1:$port/metrics" | awk '/^reachability_probe_(success|failure)s?_total|^reachability_probes_total/ { s[$1 ~ /fail/ ? "f" : "a"] += $NF } END { print s["a"] + 0, s["f"] + 0 }')
  local rss; rss=$(awk '/VmRSS/ { print $2 }' "/proc/$pid/status")
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
  read -r a0 f0 <<<"$m0"; read -r a1 f1 <<<"$m1"
  awk -v name="$name" -v dt=$((t1 - t0)) -v hz="$hz" -v s="$SECONDS_" -v n="$N" -v probes=$((a1 - a0)) -v fails=$((f1 - f0)) -v rss="$rss" 'BEGIN {
    cpu = dt / hz
    printf "%-22s probes=%6d failed=%5d cpu_pct=%6.2f us_per_echo=%7.1f rss_mib=%6.1f\n", name, probes, fails, cpu * 100 / s, cpu * 1e6 / (n * s), rss / 1024 }'
}

fping_run() {
  ip netns exec "$ns" fping -c $((WARMUP + SECONDS_ + 2)) -p 1000 -i 1 -q "${hosts[@]}" 2>"$tmp/fping.log" &
  pid=$!
  sleep "$WARMUP"
  local t0 t1; t0=$(ticks "$pid"); sleep "$SECONDS_"; t1=$(ticks "$pid")
  local rss; rss=$(awk '/VmRSS/ { print $2 }' "/proc/$pid/status")
  wait "$pid" 2>/dev/null || true; pid=""
  awk -v dt=$((t1 - t0)) -v hz="$hz" -v s="$SECONDS_" -v n="$N" -v rss="$rss" -F'[ /=,%]+' '
    /xmt\/rcv\/%loss/ { for (i = 1; i <= NF; i++) if ($i == "loss") { x += $(i + 1); r += $(i + 2) } }
    END { cpu = dt / hz; printf "%-22s sent=%6d lost=%5d cpu_pct=%6.2f us_per_echo=%7.1f rss_mib=%6.1f\n", "fping (raw socket)", x, x - r, cpu * 100 / s, cpu * 1e6 / (n * s), rss / 1024 }' "$tmp/fping.log"
}

echo "# exporter ICMP: $N targets x 1/s, 1 echo each, ${SECONDS_}s measured after ${WARMUP}s, $(nproc) cores, $(date -u +%FT%TZ)"
exporter reachability_exporter "$OURS"
[ -z "${BASELINE:-}" ] || exporter "baseline" "$BASELINE"
fping_run
