#!/usr/bin/env bash
# ICMP through the whole exporter (scheduler, stagger, prober, verdict, metrics), side by side
# with fping and prometheus-smokeping-prober in one run: N loopback targets (127.0.x.y), one echo each per second, datagram
# sockets, in a network namespace made for the run (loopback only, deleted on exit). CPU of each
# process from /proc/PID/stat over the same measured window; loss from the exporter's own
# counters, from fping's summary and from smokeping's request/response counters; the exporter's
# scheduler lateness p99 from its own histogram. Optionally a second exporter binary (BASELINE=path) is
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
SMOKE=${SMOKE:-/usr/bin/prometheus-smokeping-prober}
[ -n "${NO_SMOKEPING:-}" ] || [ -x "$SMOKE" ] || { echo "missing $SMOKE (or set NO_SMOKEPING=1)" >&2; exit 1; }
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
  local counts='/^reachability_probe_(success|failure)s?_total|^reachability_probes_total/ { s[$1 ~ /fail/ ? "f" : "a"] += $NF } END { print s["a"] + 0, s["f"] + 0 }'
  ip netns exec "$ns" curl -fsS --max-time 60 "http://127.0.0.1:$port/metrics" >"$tmp/m0"
  m0=$(awk "$counts" "$tmp/m0")
  t0=$(ticks "$pid"); sleep "$SECONDS_"; t1=$(ticks "$pid")
  ip netns exec "$ns" curl -fsS --max-time 60 "http://127.0.0.1:$port/metrics" >"$tmp/m1"
  m1=$(awk "$counts" "$tmp/m1")
  # Scheduler lateness over the window: the smallest bucket bound holding 99 % of the starts.
  local late
  late=$(awk -F'[ "]' '/^reachability_scheduler_lateness_seconds_bucket/ { le = $2; v[FILENAME, le] = $NF; les[le] = 1 }
    END { n = 0; for (le in les) { d[le] = v[ARGV[2], le] - v[ARGV[1], le]; if (le == "+Inf") total = d[le] }
      best = "+Inf"; bv = 1e99
      for (le in les) if (le != "+Inf" && d[le] >= 0.99 * total && le + 0 < bv) { bv = le + 0; best = le }
      printf "%s", best }' "$tmp/m0" "$tmp/m1")
  local rss; rss=$(awk '/VmRSS/ { print $2 }' "/proc/$pid/status")
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
  read -r a0 f0 <<<"$m0"; read -r a1 f1 <<<"$m1"
  awk -v name="$name" -v dt=$((t1 - t0)) -v hz="$hz" -v s="$SECONDS_" -v n="$N" -v probes=$((a1 - a0)) -v fails=$((f1 - f0)) -v rss="$rss" -v late="$late" 'BEGIN {
    cpu = dt / hz
    printf "%-22s probes=%6d failed=%5d cpu_pct=%6.2f us_per_echo=%7.1f rss_mib=%6.1f lateness_p99<=%ss\n", name, probes, fails, cpu * 100 / s, cpu * 1e6 / (n * s), rss / 1024, late }'
}

# prometheus-smokeping-prober 0.6.1 (Debian), datagram sockets like ours, one echo a second per host.
smokeping_run() {
  local port=$((20000 + RANDOM % 20000))
  printf 'targets: []\n' >"$tmp/smokeping.yml"
  ip netns exec "$ns" "$SMOKE" --config.file="$tmp/smokeping.yml" --web.listen-address="127.0.0.1:$port" \
    -i 1s --log.level=error "${hosts[@]}" >"$tmp/smokeping.log" 2>&1 &
  pid=$!
  # It sets up every pinger before it listens: wait for it (at most 60 s).
  for ((k = 0; k < 120; k++)); do
    ip netns exec "$ns" curl -sf --max-time 2 -o /dev/null "http://127.0.0.1:$port/metrics" && break
    sleep 0.5
  done
  sleep "$WARMUP"
  kill -0 "$pid" 2>/dev/null || { echo "smokeping_prober FAILED: $(tail -3 "$tmp/smokeping.log")"; pid=""; return; }
  if ! ip netns exec "$ns" curl -sf --max-time 5 -o /dev/null "http://127.0.0.1:$port/metrics"; then
    local t0 t1; t0=$(ticks "$pid"); sleep "$SECONDS_"; t1=$(ticks "$pid")
    local rss; rss=$(awk '/VmRSS/ { print $2 }' "/proc/$pid/status")
    kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
    awk -v dt=$((t1 - t0)) -v hz="$hz" -v s="$SECONDS_" -v rss="$rss" -v w=$((60 + WARMUP)) 'BEGIN {
      printf "%-22s not serving /metrics after %d s (still setting up its pingers): cpu_pct=%6.2f rss_mib=%6.1f\n", "smokeping_prober", w, dt / hz * 100 / s, rss / 1024 }'
    return
  fi
  local sc='/^smokeping_requests_total/ { req += $NF } /^smokeping_response_duration_seconds_count/ { resp += $NF } END { printf "%d %d", req, resp }'
  local s0 s1 t0 t1
  s0=$(ip netns exec "$ns" curl -fsS --max-time 60 "http://127.0.0.1:$port/metrics" | awk "$sc")
  t0=$(ticks "$pid"); sleep "$SECONDS_"; t1=$(ticks "$pid")
  s1=$(ip netns exec "$ns" curl -fsS --max-time 60 "http://127.0.0.1:$port/metrics" | awk "$sc")
  local rss; rss=$(awk '/VmRSS/ { print $2 }' "/proc/$pid/status")
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
  read -r r0 p0 <<<"$s0"; read -r r1 p1 <<<"$s1"
  awk -v dt=$((t1 - t0)) -v hz="$hz" -v s="$SECONDS_" -v n="$N" -v req=$((r1 - r0)) -v resp=$((p1 - p0)) -v rss="$rss" 'BEGIN {
    cpu = dt / hz
    printf "%-22s sent=%6d lost=%5d cpu_pct=%6.2f us_per_echo=%7.1f rss_mib=%6.1f (sent/s %.0f of %d asked)\n", "smokeping_prober", req, req - resp, cpu * 100 / s, req ? cpu * 1e6 / req : 0, rss / 1024, req / s, n }'
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
[ -n "${NO_SMOKEPING:-}" ] || smokeping_run
