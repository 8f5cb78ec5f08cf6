#!/usr/bin/env bash
# Passive evidence (#31): what one read of the host's TCP connections costs the exporter
# (--passive.mode=observe: a NETLINK_SOCK_DIAG dump per family with tcp_info, decoded and
# classified), at SOCKETS established connections, side by side with `ss -tin` (iproute2: the
# same netlink dump with tcp_info, printed as text) in the same run.
#
# Two network namespaces made for the run (deleted on exit, also on failure): "host" holds the
# exporter and the near ends of the connections (198.51.100.1 on a veth), "peer" the far ends
# (203.0.113.1), so the exporter's namespace holds exactly one socket per connection and every
# one of them counts (a public-looking destination, established): SOCKETS counts connections and
# sockets alike, the far ends are not in the exporter's namespace and not counted. Every 20th
# connection (5 %) receives 32 bytes every 2 s (a trickle: `receiving`), the rest are quiet.
# Stages grow the same set of connections (none, then 100, 900 more, 9,000 more); the stage with
# none measures the floor: the kernel walks its whole TCP established hash (shared with the host
# unless net.ipv4.tcp_child_ehash_entries is set) once per family, whatever the namespace holds.
#
# Per stage and run:
# - the exporter with --passive.mode=observe --passive.interval=1s (one TCP probe to the peer
#   every 10 s, no path monitor, no default targets), scraped 4 times a second for WINDOW s
#   after WARMUP s: each distinct reachability_passive_read_duration_seconds is one read (its
#   wall time: dump + decode + classification); the read thread's own CPU (thread "passive-0",
#   /proc/PID/task/TID/schedstat: dump and decode only); the process's CPU from /proc/PID/stat
#   over the window and its RSS;
# - the same exporter, same flags and scrapes, with --passive.mode=off: the difference is what
#   passive reading adds (per read, and as a share of a core at a 2 s interval, the default);
# - `ss -tin state established state syn-sent` (the states the exporter asks the kernel for) run
#   as many times as the exporter read, output to /dev/null: its wall time per run (process
#   start included) and CPU (getrusage of the children).
# Goals (#31: "the cost of reading stays small with many sockets"): at 10,000 connections a read
# takes <= 10 ms on average, and reading every 2 s costs <= 1 % of a core; printed met/missed.
# EHASH=BUCKETS gives the exporter's namespace a TCP established hash of its own (made from a
# parent namespace with net.ipv4.tcp_child_ehash_entries=BUCKETS; the host's sysctls are not
# touched): how much of a read is the walk of the host's table.
# Bounded: every wait has a deadline, every helper a lifetime; every process started here is
# stopped by PID. RUNS repeats the measurements of each stage (not the connections).
#
#   bench/passive_read_bench.sh                                   # SOCKETS="0 100 1000 10000" RUNS=1 WINDOW=12
#   OURS=/tmp/rx-bench-s11/reachability_exporter RUNS=2 bench/passive_read_bench.sh
#   SOCKETS="10000 20000" WINDOW=20 bench/passive_read_bench.sh
#   EHASH=16384 SOCKETS="0 10000" bench/passive_read_bench.sh     # the namespace's own, smaller TCP hash
set -euo pipefail
cd "$(dirname "$0")/.."
read -ra stages <<<"${SOCKETS:-0 100 1000 10000}"
WINDOW=${WINDOW:-12}
WARMUP=${WARMUP:-3}
RUNS=${RUNS:-1}
(( WINDOW >= 10 && WINDOW <= 120 )) || { echo "WINDOW must be in 10...120 (s)" >&2; exit 64; }
(( RUNS > 0 && RUNS <= 5 )) || { echo "RUNS must be in 1...5" >&2; exit 64; }
EHASH=${EHASH:-}
[ -z "$EHASH" ] || { [[ "$EHASH" =~ ^[0-9]+$ ]] && (( EHASH > 0 && EHASH <= 16777216 )); } || { echo "EHASH must be in 1...16777216" >&2; exit 64; }
prev=-1
for n in "${stages[@]}"; do
  [[ "$n" =~ ^[0-9]+$ ]] && (( n > prev && n <= 50000 )) || { echo "SOCKETS: ascending counts in 0...50000" >&2; exit 64; }
  prev=$n
done
max=$prev
[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces)" >&2; exit 1; }
command -v ss >/dev/null || { echo "missing ss: apt-get install iproute2" >&2; exit 1; }
if [ -z "${OURS:-}" ]; then
  flock /tmp/swift-build.lock swift build -c release --product reachability_exporter >/dev/null
  OURS="$(swift build -c release --show-bin-path)/reachability_exporter"
fi
[ -x "$OURS" ] || { echo "not an executable: $OURS" >&2; exit 1; }
# One descriptor per connection in each helper, plus room.
ulimit -n $((max + 1024))

helper=bench/passive_read_bench.py
ns="rx-passive-$$"
peer="rx-passive-peer-$$"
outer="rx-passive-outer-$$"
tmp=$(mktemp -d /tmp/rx-passive.XXXXXX)
pids=()
pid=""
cleanup() {
  [ -z "$pid" ] || pids+=("$pid")
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  for n in "$ns" "$peer" "$outer"; do ip netns del "$n" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
if [ -z "$EHASH" ]; then
  ip netns add "$ns"
else
  # A namespace made from $outer gets a table of tcp_child_ehash_entries buckets; a process that
  # unshares it there lends it to `ip netns attach`, then goes.
  ip netns add "$outer"
  ip netns exec "$outer" sysctl -qw net.ipv4.tcp_child_ehash_entries="$EHASH"
  parent_ns=$(ip netns exec "$outer" readlink /proc/self/ns/net)
  ip netns exec "$outer" unshare -n sleep 30 &
  lender=$!
  pids+=("$lender")
  for ((k = 0; k < 50; k++)); do
    [ "$(cat "/proc/$lender/comm" 2>/dev/null)" = sleep ] && [ "$(readlink "/proc/$lender/ns/net")" != "$parent_ns" ] && break
    sleep 0.1
  done
  ip netns attach "$ns" "$lender"
  kill "$lender"; wait "$lender" 2>/dev/null || true
fi
ip netns add "$peer"
ip -n "$ns" link set lo up
ip -n "$peer" link set lo up
ip -n "$ns" link add vh type veth peer name vp netns "$peer"
ip -n "$ns" addr add 198.51.100.1/24 dev vh
ip -n "$peer" addr add 203.0.113.1/24 dev vp
ip -n "$ns" link set vh up
ip -n "$peer" link set vp up
ip -n "$ns" route add 203.0.113.0/24 dev vh
ip -n "$peer" route add 198.51.100.0/24 dev vp

ports=8001,8002,8003,8004
probe_port=8000
lifetime=900 # helpers exit by themselves after this many seconds
ip netns exec "$peer" python3 "$helper" serve 203.0.113.1 "$ports" "$probe_port" 2 "$lifetime" >"$tmp/serve.out" 2>"$tmp/serve.err" &
pids+=($!)
for ((k = 0; k < 50; k++)); do [ -s "$tmp/serve.out" ] && break; sleep 0.1; done
grep -q ready "$tmp/serve.out" || { echo "server not ready: $(cat "$tmp/serve.err")" >&2; exit 1; }

hz=$(getconf CLK_TCK)
ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
# Nanoseconds on a CPU of the exporter's passive read thread (0 when it has none).
read_thread_ns() {
  local t
  for t in /proc/"$1"/task/*; do
    [ "$(cat "$t/comm" 2>/dev/null)" = passive-0 ] && { cut -d' ' -f1 "$t/schedstat"; return; }
  done
  echo 0
}
results="$tmp/results"
: >"$results"

# Runs in the script's own shell (not a subshell), so the EXIT trap knows $pid; writes
# "reads mean_ms max_ms thread_ms_per_read cpu_pct rss_mib sockets receiving quiet stalled" to $tmp/run-MODE.
exporter_run() { # mode
  local mode=$1 port=$((20000 + RANDOM % 20000)) k t0 t1 c0 c1 w0 w1 rss
  REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1 ip netns exec "$ns" "$OURS" --web.listen-address="127.0.0.1:$port" \
    --no-path.monitor --probe.tcp="203.0.113.1:$probe_port" --probe.interval=10s \
    --passive.mode="$mode" --passive.interval=1s --log.level=warn 2>"$tmp/exporter-$mode.log" &
  pid=$!
  for ((k = 0; k < 100; k++)); do
    ip netns exec "$ns" curl -sf --max-time 2 -o /dev/null "http://127.0.0.1:$port/metrics" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  sleep "$WARMUP"
  kill -0 "$pid" 2>/dev/null || { echo "exporter exited: $(tail -3 "$tmp/exporter-$mode.log")" >&2; pid=""; return 1; }
  t0=$(ticks "$pid"); c0=$(read_thread_ns "$pid"); w0=$EPOCHREALTIME
  ip netns exec "$ns" python3 "$helper" scrape "http://127.0.0.1:$port/metrics" "$WINDOW" 0.25 >"$tmp/scrape-$mode"
  t1=$(ticks "$pid"); c1=$(read_thread_ns "$pid"); w1=$EPOCHREALTIME
  rss=$(awk '/VmRSS/ { print $2 }' "/proc/$pid/status")
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
  # The first value seen is the read before the window began; the rest fall inside it.
  awk -v dt=$((t1 - t0)) -v hz="$hz" -v dc=$((c1 - c0)) -v rss="$rss" -v w0="$w0" -v w1="$w1" '
    $1 == "read" { n++; s += $2; if ($2 > m) m = $2 }
    $1 == "sockets" { so = $2 } $1 == "connections" { c[$2] = $3 }
    END { w = w1 - w0; inside = n > 1 ? n - 1 : 1
      printf "%d %.3f %.3f %.3f %.2f %.1f %s %s %s %s\n", n, n ? s * 1000 / n : 0, m * 1000, dc / 1e6 / inside,
        dt / hz * 100 / w, rss / 1024, so, c["receiving"], c["quiet"], c["stalled"] }' "$tmp/scrape-$mode" >"$tmp/run-$mode"
}

echo "# passive read cost: stages ${stages[*]}${EHASH:+ (EHASH=$EHASH)} connections (one socket each in the exporter's namespace), ${WINDOW}s per exporter run after ${WARMUP}s, --passive.interval=1s, $RUNS run(s); $(date -u +%FT%TZ)"
# The kernel walks every bucket of the TCP established hash for each family's dump, whatever the
# namespace holds: with net.ipv4.tcp_child_ehash_entries=0 (the default) a new namespace shares
# the host's table, so its size sets a floor under every read (the 0 stage measures it).
ehash=$(ip netns exec "$ns" sysctl -n net.ipv4.tcp_ehash_entries)
echo "# TCP established hash of the exporter's namespace: ${ehash#-} buckets, $( ((ehash < 0)) && echo "the host's table (shared with every namespace)" || echo "its own"); walked whole once per family and dump"
echo "# $(nproc) cores, kernel $(uname -r), $(ss -V), load average $(cut -d' ' -f1-3 /proc/loadavg): a shared machine (other agents' work runs at the same time); compare figures within one run"
have=0
stage=0
for n in "${stages[@]}"; do
  stage=$((stage + 1))
  if ((n > have)); then
    ip netns exec "$ns" python3 "$helper" connect 198.51.100.1 203.0.113.1 "$ports" $((n - have)) "$lifetime" \
      >"$tmp/connect-$stage.out" 2>"$tmp/connect-$stage.err" &
    pids+=($!)
    for ((k = 0; k < 1200; k++)); do
      [ -s "$tmp/connect-$stage.out" ] && break
      kill -0 "${pids[-1]}" 2>/dev/null || break
      sleep 0.1
    done
    grep -q connected "$tmp/connect-$stage.out" || { echo "connections failed: $(cat "$tmp/connect-$stage.err")" >&2; exit 1; }
    have=$n
    sleep 3 # the trickle reaches every receiving connection (2 s)
  else
    echo "connected 0 0" >"$tmp/connect-$stage.out"
  fi
  counted=$(ip netns exec "$ns" ss -tnH state established state syn-sent | wc -l)
  echo "# $n connections open ($(cut -d' ' -f2,3 "$tmp/connect-$stage.out" | awk '{ printf "%d more in %s s", $1, $2 }'); ss lists $counted established sockets in the exporter's namespace)"
  for ((run = 1; run <= RUNS; run++)); do
    exporter_run observe
    exporter_run off
    read -r reads mean mx thr cpu_on rss_on so recv quiet stalled <"$tmp/run-observe"
    read -r _ _ _ _ cpu_off rss_off _ _ _ _ <"$tmp/run-off"
    ssr=$((reads > 10 ? reads : 10))
    read -r ss_mean ss_max ss_cpu <<<"$(ip netns exec "$ns" python3 "$helper" ss "$ssr" 0.1 -tin state established state syn-sent)"
    printf '%s\n' "$n	$run	$reads	$mean	$mx	$thr	$ss_mean	$ss_max	$ss_cpu	$cpu_on	$cpu_off	$rss_on	$rss_off	$so	$recv	$quiet	$stalled	$ssr" >>"$results"
    echo "  run $run: $reads reads, ours ${mean}/${mx} ms (read thread ${thr} ms CPU), ss ${ss_mean}/${ss_max} ms (${ss_cpu} ms CPU) x$ssr, CPU on/off ${cpu_on}/${cpu_off} %, RSS ${rss_on}/${rss_off} MiB; seen: $so sockets, $recv receiving, $quiet quiet, $stalled stalled"
  done
done

echo
echo "# per read; 'ours' = reachability_passive_read_duration_seconds (wall: dump + decode + classification), 'thread' = CPU of the read thread (dump + decode); ss = wall of one \`ss -tin\` run (process start included) and its CPU; CPU % = the exporter's share of one core at --passive.interval=1s, passive on / off; added per read = (on - off) x ${WINDOW}s / reads"
echo "# shared $(nproc)-core machine, load average now $(cut -d' ' -f1-3 /proc/loadavg)"
fmt="%-7s %-3s %-5s %-15s %-8s %-15s %-8s %-10s %-12s %-12s %-10s %-11s %s\n"
# shellcheck disable=SC2059 # the format is ours
printf "$fmt" sockets run reads "ours ms mean/max" "thread" "ss ms mean/max" "ss CPU" "ours/ss" "CPU % on/off" "added/read" "@2s core" "RSS on/off" "seen (recv/quiet/stalled)"
awk -F'\t' -v fmt="$fmt" -v w="$WINDOW" '{
  inside = $3 > 1 ? $3 - 1 : 1
  added = ($10 - $11) / 100 * w / inside * 1000
  printf fmt, $1, $2, $3, sprintf("%.2f/%.2f", $4, $5), sprintf("%.2f", $6), sprintf("%.2f/%.2f", $7, $8), sprintf("%.2f", $9),
    sprintf("%.2fx", ($7 > 0 ? $4 / $7 : 0)), sprintf("%.2f/%.2f", $10, $11), sprintf("%.2f ms", added),
    sprintf("%.2f %%", added / 2000 * 100), sprintf("%.1f/%.1f", $12, $13), sprintf("%s (%s/%s/%s)", $14, $15, $16, $17) }' "$results"
echo
echo "# goals (#31, 'the cost of reading stays small with many sockets'): at 10,000 connections a read <= 10 ms on average; reading every 2 s <= 1 % of a core"
awk -F'\t' -v w="$WINDOW" '
  function v(ok) { return ok ? "met" : "MISSED" }
  $1 >= 10000 { any = 1; inside = $3 > 1 ? $3 - 1 : 1; added = ($10 - $11) / 100 * w / inside * 1000
    printf "%d connections, run %d: read %.2f ms mean (max %.2f): <= 10 ms %s; added CPU %.2f ms per read = %.2f %% of a core at 2 s: <= 1 %% %s; ours/ss %.2fx (ss %.2f ms)\n",
      $1, $2, $4, $5, v($4 <= 10), added, added / 20, v(added / 20 <= 1), ($7 > 0 ? $4 / $7 : 0), $7
    if ($3 < 10) printf "  (only %d reads seen: fewer than 10)\n", $3 }
  END { if (!any) print "no stage at 10,000 or more connections: goals not evaluated" }' "$results"
