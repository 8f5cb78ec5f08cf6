#!/usr/bin/env bash
# Load: wrk hammers /metrics (-t2 -c64) while the exporter probes 1,000 loopback targets every
# second. Reports wrk's throughput and errors (must be zero), probe failures during the run,
# the scheduler's lateness (reachability_scheduler_lateness_seconds: how late each staggered
# probe started) idle versus under load, and the exporter's RSS before and after.
#
#   bench/load.sh                      (TARGETS=1000 IDLE=15 DURATION=30 RUNS=3 CONNECTIONS=64 PROBE=tcp)
#
# PROBE=tcp connects to 127.0.x.y:9 where a sink accepts (bench/tcp_sink.py); PROBE=icmp pings
# 127.0.x.y (needs a build with ICMP). Everything runs in a network namespace made for the run
# (loopback only, deleted on exit); processes started here are stopped by PID. Bounded: about
# IDLE + RUNS x DURATION + 10 seconds. Release build.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGETS=${TARGETS:-1000}
IDLE=${IDLE:-15}
DURATION=${DURATION:-30}
CONNECTIONS=${CONNECTIONS:-64}
PROBE=${PROBE:-tcp}
RUNS=${RUNS:-3}
rss3=""; rss_prev=""
[ "$(id -u)" = 0 ] || { echo "NOTICE: bench/load.sh needs root (network namespace); not run"; exit 0; }
command -v wrk >/dev/null || { echo "missing wrk: apt-get install wrk" >&2; exit 1; }
if [ -z "${RXLOAD_NO_BUILD:-}" ]; then swift build -c release --product reachability_exporter 2>&1 | grep -E 'error' || true; fi
BIN="$(swift build -c release --show-bin-path)/reachability_exporter"
[ -x "$BIN" ] || { echo "no release build at $BIN" >&2; exit 1; }

source bench/netns.sh
bench_netns rxload

flags=()
for ((i = 0; i < TARGETS; i++)); do
  host="127.0.$((i / 250)).$((i % 250 + 1))"
  if [ "$PROBE" = icmp ]; then flags+=("--probe.icmp=$host"); else flags+=("--probe.tcp=$host:9"); fi
done
if [ "$PROBE" = tcp ]; then
  ip netns exec "$ns" python3 -u bench/tcp_sink.py 9 >"$work/sink.out" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do grep -q ready "$work/sink.out" && break; sleep 0.05; done
fi
port=10361
# --web.max-connections above wrk's count: at exactly 64 (the default), wrk's reconnects race the
# release of the slots of connections it just closed and get 503 (by design, counted in
# reachability_exporter_http_rejected_connections_total, reported below).
REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1 ip netns exec "$ns" "$BIN" --web.listen-address=127.0.0.1:$port --no-path.monitor \
  --web.max-connections=$((CONNECTIONS * 2)) \
  --probe.interval=1s --probe.timeout=500ms "${flags[@]}" 2>"$work/exporter.log" &
epid=$!
pids+=("$epid")
url="http://127.0.0.1:$port/metrics"
for _ in $(seq 200); do inns curl -fsS -o /dev/null "http://127.0.0.1:$port/-/ready" 2>/dev/null && break; sleep 0.1; done
rss() { awk '/VmRSS/ { print $2 }' "/proc/$epid/status"; }
scrape() { inns curl -fsS "$url" >"$1"; }
sum() { awk -v m="$2" '$1 ~ "^"m"(\\{|$)" { s += $NF } END { printf "%.0f", s }' "$1"; }

sleep 3  # warm-up rounds
scrape "$work/a.prom"; rss0=$(rss)
sleep "$IDLE"
scrape "$work/b.prom"; rss1=$(rss)
wrk_out=$(inns wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" --timeout 10s "$url" 2>&1)
scrape "$work/c.prom"; rss2=$(rss)
# More identical runs: memory that is a high-water mark levels off, a leak keeps growing.
wrk_out2=""
rss_runs="$rss2"
rss_prev=$rss2 # the highest after any earlier run: a leak ends above it, a high-water mark does not
for ((k = 1; k < RUNS; k++)); do
  wrk_out2+=$(inns wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" --timeout 10s "$url" 2>&1)
  [ -z "$rss3" ] || [ "$rss3" -le "$rss_prev" ] || rss_prev=$rss3
  rss3=$(rss); rss_runs+=" $rss3"
done
scrape "$work/d.prom"
rss3=${rss3:-$rss2}
series=$(grep -vc '^#' "$work/c.prom")

idle_late=$(python3 bench/hist.py "$work/a.prom" "$work/b.prom" reachability_scheduler_lateness_seconds)
load_late=$(python3 bench/hist.py "$work/b.prom" "$work/c.prom" reachability_scheduler_lateness_seconds)
probes_idle=$(( $(sum "$work/b.prom" reachability_probes_total) - $(sum "$work/a.prom" reachability_probes_total) ))
probes_load=$(( $(sum "$work/c.prom" reachability_probes_total) - $(sum "$work/b.prom" reachability_probes_total) ))
fail_idle=$(( $(sum "$work/b.prom" reachability_probe_failures_total) - $(sum "$work/a.prom" reachability_probe_failures_total) ))
fail_load=$(( $(sum "$work/c.prom" reachability_probe_failures_total) - $(sum "$work/b.prom" reachability_probe_failures_total) ))
reqs=$(awk '/requests in/ { print $1 }' <<<"$wrk_out")
rps=$(awk '/Requests\/sec/ { print $2 }' <<<"$wrk_out")
lat=$(awk '/^    Latency/ { print $2" avg, "$4" max" }' <<<"$wrk_out")
errors=$(grep -E 'Socket errors|Non-2xx' <<<"$wrk_out$wrk_out2" || true)
rounds_idle=$(( $(sum "$work/b.prom" reachability_rounds_total) - $(sum "$work/a.prom" reachability_rounds_total) ))
rounds_load=$(( $(sum "$work/c.prom" reachability_rounds_total) - $(sum "$work/b.prom" reachability_rounds_total) ))

echo "load: $TARGETS $PROBE targets every 1s, $series series per scrape; wrk -t2 -c$CONNECTIONS -d${DURATION}s on /metrics"
echo "  wrk: $reqs scrapes, $rps/s, latency $lat, errors: ${errors:-none}"
echo "  connections rejected (503) by --web.max-connections: $(sum "$work/d.prom" reachability_exporter_http_rejected_connections_total)"
echo "  rounds: $rounds_idle in ${IDLE}s idle, $rounds_load in ${DURATION}s under load (one per second expected)"
echo "  probes idle: $probes_idle run, $fail_idle failed; under load: $probes_load run, $fail_load failed"
echo "  scheduler lateness idle:       $idle_late"
echo "  scheduler lateness under load: $load_late"
echo "  RSS: ${rss0} kB after warm-up, ${rss1} kB after idle; after each of $RUNS wrk runs: $rss_runs kB"
status=0
[ -z "$errors" ] || { echo "FAIL: wrk saw errors"; status=1; }
[ "$fail_load" = 0 ] || { echo "FAIL: probes failed under load"; status=1; }
[ "$rss3" -lt $((rss_prev * 11 / 10 + 10240)) ] || { echo "FAIL: RSS still grows run after run ($rss_runs kB: the last above every earlier one by more than 10 % + 10 MiB)"; status=1; }
[ "$rounds_load" -ge $((DURATION / 2)) ] || echo "WARN: the scheduler ran $rounds_load rounds in ${DURATION}s under load: probing is starved"
exit $status
