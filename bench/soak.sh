#!/usr/bin/env bash
# Soak (not in CI): the release exporter probes TARGETS loopback TCP targets every second and is
# scraped every SCRAPE seconds for DURATION (default one hour); every SAMPLE seconds it prints
# RSS, open fds, threads, rounds and probe failures, and at the end the growth of each.
#
#   bench/soak.sh                         (DURATION=3600 SAMPLE=60 TARGETS=100 SCRAPE=1)
#
# Loopback only, in a network namespace made for the run (deleted on exit); processes started
# here are stopped by PID. Fails when RSS grows more than 20% + 10 MB, or fds/threads grow by
# more than 8, between the first sample and the last.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-3600}
SAMPLE=${SAMPLE:-60}
TARGETS=${TARGETS:-100}
SCRAPE=${SCRAPE:-1}
[ "$(id -u)" = 0 ] || { echo "bench/soak.sh needs root (network namespace)" >&2; exit 1; }
if [ -z "${RXLOAD_NO_BUILD:-}" ]; then swift build -c release --product reachability_exporter 2>&1 | grep -E 'error' || true; fi
BIN="$(swift build -c release --show-bin-path)/reachability_exporter"

source bench/netns.sh
bench_netns rxsoak
ip netns exec "$ns" python3 -u bench/tcp_sink.py 9 >"$work/sink.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q ready "$work/sink.out" && break; sleep 0.05; done
flags=()
for ((i = 0; i < TARGETS; i++)); do flags+=("--probe.tcp=127.0.$((i / 250)).$((i % 250 + 1)):9"); done
# One closed port and one resolver lookup, so failure and DNS paths soak too.
flags+=("--probe.tcp=127.0.0.1:1" "--probe.dns=localhost")
port=10361
REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1 ip netns exec "$ns" "$BIN" --web.listen-address=127.0.0.1:$port --no-path.monitor \
  --probe.interval=1s --probe.timeout=500ms "${flags[@]}" 2>"$work/exporter.log" &
epid=$!
pids+=("$epid")
url="http://127.0.0.1:$port/metrics"
for _ in $(seq 200); do inns curl -fsS -o /dev/null "http://127.0.0.1:$port/-/ready" 2>/dev/null && break; sleep 0.1; done

# The scraper: one scrape every SCRAPE seconds, as Prometheus would, for the whole run.
(end=$((SECONDS + DURATION)); while ((SECONDS < end)); do inns curl -fsS -o "$work/last.prom" "$url" || echo x >>"$work/scrape-errors"; sleep "$SCRAPE"; done) &
pids+=($!)

sample() {
  local rss fds threads rounds fails
  rss=$(awk '/VmRSS/ { print $2 }' "/proc/$epid/status")
  threads=$(awk '/Threads/ { print $2 }' "/proc/$epid/status")
  fds=$(find "/proc/$epid/fd" -mindepth 1 -maxdepth 1 | wc -l)
  rounds=$(awk '/^reachability_rounds_total / { print $2 }' "$work/last.prom" 2>/dev/null || echo 0)
  fails=$(awk '/^reachability_probe_failures_total/ { s += $NF } END { printf "%.0f", s }' "$work/last.prom" 2>/dev/null || echo 0)
  echo "$rss $fds $threads ${rounds:-0} ${fails:-0}"
}
sleep 5  # warm-up: the first rounds and scrapes allocate what the process keeps
printf '%8s %10s %6s %8s %8s %10s\n' elapsed rss_kB fds threads rounds failures
start=$SECONDS
first=""
while true; do
  kill -0 "$epid" 2>/dev/null || { echo "FAIL: the exporter exited"; tail -20 "$work/exporter.log"; exit 1; }
  s=$(sample)
  [ -n "$first" ] || first=$s
  read -r rss fds threads rounds fails <<<"$s"
  printf '%7ss %10s %6s %8s %8s %10s\n' "$((SECONDS - start))" "$rss" "$fds" "$threads" "$rounds" "$fails"
  ((SECONDS - start < DURATION)) || break
  sleep "$SAMPLE"
done
read -r rss0 fds0 threads0 _ _ <<<"$first"
errors=0
[ ! -f "$work/scrape-errors" ] || errors=$(wc -l <"$work/scrape-errors")
echo "soak: ${DURATION}s, RSS ${rss0} -> ${rss} kB, fds ${fds0} -> ${fds}, threads ${threads0} -> ${threads}, scrape errors ${errors}"
status=0
((rss <= rss0 * 6 / 5 + 10240)) || { echo "FAIL: RSS grew"; status=1; }
((fds <= fds0 + 8)) || { echo "FAIL: fds grew"; status=1; }
((threads <= threads0 + 8)) || { echo "FAIL: threads grew"; status=1; }
((errors == 0)) || { echo "FAIL: scrapes failed"; status=1; }
exit $status
