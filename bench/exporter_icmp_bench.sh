#!/usr/bin/env bash
# ICMP through the whole exporter (scheduler, stagger, prober, verdict, metrics), side by side
# with fping (and prometheus-smokeping-prober) in one run: N loopback targets (127.0.x.y), one
# echo each per second, in a network namespace made for the run (loopback only, deleted on exit).
#
# Every tool is charged per echo it ACTUALLY SENT, and its achieved rate is printed beside the
# N/s asked:
# - the exporter: CPU from /proc/PID/stat over the measured window, echoes sent in that same
#   window from the namespace's ICMP counter (OutEchos, /proc/net/snmp: the exporter is the only
#   sender there), cross-checked against its own counter reachability_icmp_echo_requests_total;
#   its loss as failed probes / probes (one echo each) and its rounds from its own counters
#   between two scrapes outside the window; scheduler lateness p99 from its own histogram.
# - fping: a fixed number of rounds (-c SECONDS_MEASURED, at most 65535/N: fping 5.1 aborts past
#   ~6,553 echoes/s, out of sequence numbers; -p 1000 per target), timed by its own resource
#   usage (getrusage of the child, via python3's os.wait4), divided by the echoes its per-target
#   summary says it sent (sum of xmt). A run that cannot keep the pace is stopped with SIGINT at
#   a deadline (SECONDS_MEASURED + 5 s), after which fping still prints its summary; echoes in
#   flight then count as lost. fping's -i is the minimum gap between ANY two of its echoes, so
#   -i 1 caps it at 1,000 echoes/s whatever N is: it runs at each gap in FPING_INTERVALS
#   (default: 1000/N ms, the pace that asks for N/s; 0, no gap, each round sent in one burst;
#   and 1, the setting this script used before #33).
# The goal (#33) is printed with met/missed per run: the exporter's CPU per echo <= fping's, at
# the full N/s with no loss; at N >= 10000 also scheduler lateness p99 < 50 ms and RSS <= 64 MiB.
# The output names the machine's cores and load: on a shared machine, compare within one run.
# BASELINE=path measures a second exporter binary the same way (before/after comparisons);
# OURS=path measures a given binary instead of building one. Every process started here is
# stopped by PID; bounded: each exporter run is WARMUP + SECONDS_MEASURED (+ scrapes), each fping
# run at most SECONDS_MEASURED + 10 s; RUNS repeats the whole set.
#
#   bench/exporter_icmp_bench.sh                                   # N=1000 SECONDS_MEASURED=15 RUNS=1
#   N=10000 NO_SMOKEPING=1 RUNS=2 bench/exporter_icmp_bench.sh
#   N=3000 BASELINE=/tmp/old/reachability_exporter bench/exporter_icmp_bench.sh
#   OURS=/tmp/rx-bench-bin/reachability_exporter FPING_INTERVALS="0.1 0" N=10000 NO_SMOKEPING=1 bench/exporter_icmp_bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-1000}
SECONDS_=${SECONDS_MEASURED:-15}
WARMUP=${WARMUP:-5}
RUNS=${RUNS:-1}
(( N > 0 && N <= 20000 )) || { echo "N must be in 1...20000" >&2; exit 64; }
(( RUNS > 0 && RUNS <= 5 )) || { echo "RUNS must be in 1...5" >&2; exit 64; }
[ "$(id -u)" = 0 ] || { echo "needs root (network namespace)" >&2; exit 1; }
command -v fping >/dev/null || { echo "missing fping: apt-get install fping" >&2; exit 1; }
SMOKE=${SMOKE:-/usr/bin/prometheus-smokeping-prober}
[ -n "${NO_SMOKEPING:-}" ] || [ -x "$SMOKE" ] || { echo "missing $SMOKE (or set NO_SMOKEPING=1)" >&2; exit 1; }
if [ -z "${OURS:-}" ]; then
  flock /tmp/swift-build.lock swift build -c release --product reachability_exporter >/dev/null
  OURS="$(swift build -c release --show-bin-path)/reachability_exporter"
fi
[ -x "$OURS" ] || { echo "not an executable: $OURS" >&2; exit 1; }
paced=$(awk -v n="$N" 'BEGIN { printf "%g", 1000 / n }')
# Unique gaps, in order.
read -ra gaps <<<"${FPING_INTERVALS:-$paced 0 1}"
FPING_INTERVALS=$(printf '%s\n' "${gaps[@]}" | awk '!seen[$1 + 0]++' | tr '\n' ' ')
ns="rx-exicmp-$$"
tmp=$(mktemp -d /tmp/rx-exicmp.XXXXXX)
pid=""
cleanup() {
  [ -z "$pid" ] || { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
ip netns add "$ns"
ip -n "$ns" link set lo up
ip netns exec "$ns" sysctl -qw net.ipv4.ping_group_range="0 2147483647"
hz=$(getconf CLK_TCK)
ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
# Echo requests sent in the namespace so far (the kernel's count, ping and raw sockets alike).
out_echos() {
  ip netns exec "$ns" awk '/^Icmp:/ { if (!h) { for (i = 2; i <= NF; i++) if ($i == "OutEchos") c = i; h = 1 } else print $c }' /proc/net/snmp
}
hosts=()
for ((i = 1; i <= N; i++)); do hosts+=("127.$(((i >> 16) & 255)).$(((i >> 8) & 255)).$((i & 255))"); done
results="$tmp/results" # run tool setting sent_per_s loss_pct cpu_pct us_per_echo rss_mib lateness note
: >"$results"

exporter() { # run name binary
  local run=$1 name=$2 bin=$3 args=() port=$((20000 + RANDOM % 20000))
  for h in "${hosts[@]}"; do args+=("--probe.icmp=$h"); done
  REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1 ip netns exec "$ns" "$bin" --web.listen-address="127.0.0.1:$port" \
    --probe.interval=1s --probe.timeout=500ms --probe.icmp.count=1 --probe.trust-local-targets --no-path.monitor \
    --log.level=warn "${args[@]}" 2>"$tmp/$name.log" &
  pid=$!
  sleep "$WARMUP"
  kill -0 "$pid" 2>/dev/null || { echo "$name exited: $(tail -3 "$tmp/$name.log")" >&2; pid=""; return 1; }
  # The exporter's own counters (echoes sent and answered, probes run and failed) move as probes
  # finish; a scrape renders replies before requests (10,000 series apart at 10,000 targets), so
  # their difference is not loss. With one echo per probe, a lost echo is a failed probe: its loss
  # is failed probes / probes between the scrapes. The echoes of the CPU window come from the namespace's own ICMP counter (OutEchos in
  # /proc/net/snmp, read with the CPU ticks; only this exporter sends in the namespace).
  local counts='/^reachability_icmp_echo_requests_total/ { req += $NF } /^reachability_icmp_echo_replies_total/ { rep += $NF }
    /^reachability_rounds_total/ { rounds += $NF }
    /^reachability_probe_(success|failure)s?_total|^reachability_probes_total/ { s[$1 ~ /fail/ ? "f" : "a"] += $NF }
    END { printf "%d %d %d %d %d", req, rep, s["a"], s["f"], rounds }'
  local w0 w1 t0 t1 k0 k1
  ip netns exec "$ns" curl -fsS --max-time 60 "http://127.0.0.1:$port/metrics" >"$tmp/m0"
  t0=$(ticks "$pid"); k0=$(out_echos); w0=$EPOCHREALTIME
  sleep "$SECONDS_"
  t1=$(ticks "$pid"); k1=$(out_echos); w1=$EPOCHREALTIME
  ip netns exec "$ns" curl -fsS --max-time 60 "http://127.0.0.1:$port/metrics" >"$tmp/m1"
  local m0 m1; m0=$(awk "$counts" "$tmp/m0"); m1=$(awk "$counts" "$tmp/m1")
  # Scheduler lateness over the window: the smallest bucket bound holding 99 % of the starts.
  local late
  late=$(awk -F'[ "]' '/^reachability_scheduler_lateness_seconds_bucket/ { le = $2; v[FILENAME, le] = $NF; les[le] = 1 }
    END { n = 0; for (le in les) { d[le] = v[ARGV[2], le] - v[ARGV[1], le]; if (le == "+Inf") total = d[le] }
      best = "+Inf"; bv = 1e99
      for (le in les) if (le != "+Inf" && d[le] >= 0.99 * total && le + 0 < bv) { bv = le + 0; best = le }
      printf "%s", best }' "$tmp/m0" "$tmp/m1")
  local rss; rss=$(awk '/VmRSS/ { print $2 }' "/proc/$pid/status")
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
  read -r q0 r0 a0 f0 n0 <<<"$m0"; read -r q1 r1 a1 f1 n1 <<<"$m1"
  awk -v run="$run" -v name="$name" -v dt=$((t1 - t0)) -v hz="$hz" -v w="$(awk -v a="$w0" -v b="$w1" 'BEGIN { print b - a }')" \
    -v sent=$((k1 - k0)) -v req=$((q1 - q0)) -v treq="$q1" -v trep="$r1" -v rounds=$((n1 - n0)) \
    -v probes=$((a1 - a0)) -v fails=$((f1 - f0)) -v rss="$rss" -v late="$late" 'BEGIN {
    cpu = dt / hz
    printf "%s\t%s\t1 echo/s per target\t%.0f\t%.3f\t%.1f\t%.1f\t%.1f\t<=%ss\t%d echoes in %.1fs; its counters between the scrapes: %d rounds, %d echoes, %d probes, %d failed; since start: %d echoes, %d replies (read %s)\n",
      run, name, sent / w, probes ? fails * 100 / probes : 100, cpu * 100 / w, sent ? cpu * 1e6 / sent : 0, rss / 1024, late, sent, w, rounds, req, probes, fails, treq, trep, "replies first" }' >>"$results"
  tail -1 "$results"
}

# fping 5.1 (raw socket as root, one thread): SECONDS_ rounds, each target once a second, at most
# one echo per GAP ms across all targets. CPU is its own: getrusage of the child (os.wait4, in
# microseconds; its peak RSS from /proc), which gets SIGINT at the deadline (fping then prints its summary) and SIGKILL 5 s
# later. Echoes are what its summary says it sent; its rate is echoes / max(elapsed, rounds x 1 s)
# (the time the rounds are asked to take; a run that keeps the pace ends about a second early).
rusage_py='
import os, signal, sys, threading, time
deadline, out, cmd = float(sys.argv[1]), sys.argv[2], sys.argv[3:]
t0 = time.monotonic()
pid = os.posix_spawnp(cmd[0], cmd, os.environ)
threading.Timer(deadline, os.kill, (pid, signal.SIGINT)).start()
threading.Timer(deadline + 5, os.kill, (pid, signal.SIGKILL)).start()
hwm = [0]  # its peak RSS after exec, in KiB (ru_maxrss would count the spawning copy)
def watch():
    while True:
        try:
            with open(f"/proc/{pid}/status") as f:
                hwm[0] = max([hwm[0]] + [int(x.split()[1]) for x in f if x.startswith("VmHWM")])
        except (OSError, ValueError):
            return
        time.sleep(0.5)
threading.Thread(target=watch, daemon=True).start()
_, status, ru = os.wait4(pid, 0)
elapsed = time.monotonic() - t0
with open(out, "w") as f:
    f.write(f"{elapsed:.3f} {ru.ru_utime:.6f} {ru.ru_stime:.6f} {hwm[0]}\n")
os._exit(0)'
# fping 5.1 keeps each of its 65,535 sequence numbers for 10 s: past 6,553 echoes a second it
# aborts ("not enough sequence numbers available"), so it runs at most 65535/N rounds.
fping_rounds=$((65535 / N < SECONDS_ ? 65535 / N : SECONDS_))
(( fping_rounds > 0 )) || fping_rounds=1
fping_run() { # run gap
  local run=$1 gap=$2 deadline=$((SECONDS_ + 5)) k0 k1
  k0=$(out_echos)
  ip netns exec "$ns" python3 -c "$rusage_py" "$deadline" "$tmp/fping.time" \
    fping -c "$fping_rounds" -p 1000 -i "$gap" -q "${hosts[@]}" 2>"$tmp/fping.log"
  k1=$(out_echos)
  awk -v run="$run" -v gap="$gap" -v kernel=$((k1 - k0)) -v n="$N" -v k="$fping_rounds" -v d="$deadline" -v tf="$tmp/fping.time" -F'[ /=,%]+' '
    /xmt\/rcv\/%loss/ { for (i = 1; i <= NF; i++) if ($i == "loss") { x += $(i + 1); r += $(i + 2) } }
    /^fping/ { err = $0 }
    END {
      getline line < tf; split(line, t, " "); el = t[1]; cpu = t[2] + t[3]; rss = t[4]
      span = el > k ? el : k
      note = el >= d - 0.05 ? "stopped at the " d "s deadline" : k " rounds"
      if (err != "") note = note "; " err
      printf "%s\tfping -p 1000 -i %s\t%d targets, gap %s ms\t%.0f\t%.3f\t%.1f\t%.1f\t%.1f\t-\t%d echoes (kernel: %d), %d replies in %.1fs, %s\n",
        run, gap, n, gap, x / span, x ? (x - r) * 100 / x : 100, cpu * 100 / span, x ? cpu * 1e6 / x : 0, rss / 1024, x, kernel, r, el, note }' "$tmp/fping.log" >>"$results"
  tail -1 "$results"
}

# prometheus-smokeping-prober 0.6.1 (Debian), datagram sockets like ours, one echo a second per
# host; charged per request its own counters say it sent.
smokeping_run() { # run
  local run=$1 port=$((20000 + RANDOM % 20000))
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
    awk -v run="$run" -v dt=$((t1 - t0)) -v hz="$hz" -v s="$SECONDS_" -v rss="$rss" -v w=$((60 + WARMUP)) 'BEGIN {
      printf "%s\tsmokeping_prober\t-\t0\t-\t%.1f\t-\t%.1f\t-\tnot serving /metrics after %d s (still setting up its pingers)\n", run, dt / hz * 100 / s, rss / 1024, w }' >>"$results"
    tail -1 "$results"
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
  awk -v run="$run" -v dt=$((t1 - t0)) -v hz="$hz" -v s="$SECONDS_" -v req=$((r1 - r0)) -v resp=$((p1 - p0)) -v rss="$rss" 'BEGIN {
    cpu = dt / hz
    printf "%s\tsmokeping_prober\t-i 1s, datagram\t%.0f\t%.3f\t%.1f\t%.1f\t%.1f\t-\trequests %d, responses %d\n",
      run, req / s, req ? (req - resp) * 100 / req : 100, cpu * 100 / s, req ? cpu * 1e6 / req : 0, rss / 1024, req, resp }' >>"$results"
  tail -1 "$results"
}

echo "# exporter ICMP: $N targets x 1/s asked, 1 echo each; exporter ${SECONDS_}s measured after ${WARMUP}s; fping $fping_rounds rounds at gaps: $FPING_INTERVALS(ms); $RUNS run(s); $(date -u +%FT%TZ)"
(( fping_rounds == SECONDS_ )) || echo "# fping runs $fping_rounds rounds, not $SECONDS_: fping 5.1 holds each of its 65,535 sequence numbers for 10 s and aborts ('not enough sequence numbers available') past ~6,553 echoes/s sustained"
echo "# $(nproc) cores, kernel $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg): a shared machine, other work may run at the same time; compare figures within one run"
for ((run = 1; run <= RUNS; run++)); do
  exporter "$run" reachability_exporter "$OURS"
  [ -z "${BASELINE:-}" ] || exporter "$run" baseline "$BASELINE"
  for gap in $FPING_INTERVALS; do fping_run "$run" "$gap"; done
  [ -n "${NO_SMOKEPING:-}" ] || smokeping_run "$run"
done

echo
echo "# per echo actually sent; rate = echoes sent per second (asked: $N/s); shared $(nproc)-core machine, load average now $(cut -d' ' -f1-3 /proc/loadavg)"
awk -F'\t' '{ printf "%-3s %-26s %9s %8s %8s %10s %8s %11s  %s\n", $1, $2, $4 "/s", $5 "%", $6 "%", $7, $8, $9, $10 }
  BEGIN { printf "%-3s %-26s %9s %8s %8s %10s %8s %11s  %s\n", "run", "tool", "sent", "lost", "CPU", "us/echo", "RSS MiB", "late p99", "counted" }' "$results"
echo
echo "# goal (#33): the exporter's CPU per echo <= fping's, at the full $N/s with no loss$( ((N >= 10000)) && printf '; lateness p99 < 50 ms; RSS <= 64 MiB')"
awk -F'\t' -v n="$N" '
  $2 == "reachability_exporter" { us[$1] = $7; rate[$1] = $4; loss[$1] = $5; late[$1] = $9; rss[$1] = $8; runs[$1] = 1 }
  $2 ~ /^fping/ { k = ++nf[$1]; fn[$1, k] = $2; fus[$1, k] = $7; frate[$1, k] = $4; floss[$1, k] = $5 }
  function v(ok) { return ok ? "met" : "MISSED" }
  END {
    for (r = 1; r in runs; r++) {
      full = rate[r] >= 0.99 * n && loss[r] + 0 == 0
      printf "run %d: ours %.1f us/echo at %d/s, %s%% lost: full rate with no loss %s\n", r, us[r], rate[r], loss[r], v(full)
      for (k = 1; k <= nf[r]; k++)
        printf "run %d:   vs %-22s %6.1f us/echo at %5d/s (%5.1f%% of asked), %s%% lost: ours %.2fx -> %s\n",
          r, fn[r, k], fus[r, k], frate[r, k], frate[r, k] * 100 / n, floss[r, k], fus[r, k] ? us[r] / fus[r, k] : 0, (fus[r, k] > 0 ? v(us[r] <= fus[r, k]) : "n/a")
      if (n >= 10000) {
        sub(/^<=/, "", late[r]); sub(/s$/, "", late[r])
        printf "run %d: lateness p99 <= %ss: < 50 ms %s; RSS %.1f MiB: <= 64 MiB %s\n", r, late[r], v(late[r] != "+Inf" && late[r] + 0 <= 0.05), rss[r], v(rss[r] <= 64)
      }
    }
  }' "$results"
