#!/usr/bin/env bash
# CPU per ICMP probe: reachability's ICMP engine (icmp-bench) against prometheus-smokeping-prober
# and fping, at 1, 100 and 1000 targets/s (each target pinged once a second), with ping
# (datagram) sockets and raw sockets (fping: raw, as root). Everything runs inside a network
# namespace this script creates (loopback only, ping_group_range opened there), one tool at a
# time, so nothing leaves the machine and the tools never see each other's replies.
#
# usage: bench/icmp_bench.sh [seconds-per-point (default 15)] [rates (default "1 100 1000")]
# needs: root, ip, curl, prometheus-smokeping-prober, fping; builds icmp-bench in release mode.
set -euo pipefail

MEASURE=${1:-15}
RATES=${2:-"1 100 1000"}
WARMUP=3
PORT=19374
NS="rx-icmpbench-$$"
SMOKE=/usr/bin/prometheus-smokeping-prober
cd "$(dirname "$0")/.."

flock /tmp/swift-build.lock swift build -c release --product icmp-bench >/dev/null
BIN="$(swift build -c release --show-bin-path)/icmp-bench"
HZ=$(getconf CLK_TCK)
WORK=$(mktemp -d)
SMOKE_PID=""

cleanup() {
    if [[ -n "$SMOKE_PID" ]] && kill -0 "$SMOKE_PID" 2>/dev/null; then kill "$SMOKE_PID"; wait "$SMOKE_PID" 2>/dev/null || true; fi
    ip netns del "$NS" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
trap "exit 130" INT TERM HUP PIPE

ip netns add "$NS"
ip -n "$NS" link set lo up
ip netns exec "$NS" sysctl -qw net.ipv4.ping_group_range="0 2147483647"
printf 'targets: []\n' >"$WORK/smokeping.yml"

# The i-th target, i from 1: 127.0.0.1 … 127.0.3.232 for 1000 (the same list icmp-bench uses).
targets() { for ((i = 1; i <= $1; i++)); do printf '127.%d.%d.%d ' $(((i >> 16) & 255)) $(((i >> 8) & 255)) $((i & 255)); done; }

# utime + stime of a process, in clock ticks.
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# "requests responses" summed over every host of the smokeping exposition.
scrape() {
    { ip netns exec "$NS" curl -sf --max-time 60 "http://127.0.0.1:$PORT/metrics" || true; } | awk '
        /^smokeping_requests_total/ { req += $NF }
        /^smokeping_response_duration_seconds_count/ { resp += $NF }
        END { printf "%d %d\n", req, resp }'
}

smokeping() {  # targets mode
    local n=$1 mode=$2 flag=""
    [[ "$mode" == raw ]] && flag="--privileged"
    # shellcheck disable=SC2046
    ip netns exec "$NS" "$SMOKE" --config.file="$WORK/smokeping.yml" --web.listen-address="127.0.0.1:$PORT" \
        -i 1s $flag --log.level=error $(targets "$n") >"$WORK/smokeping.log" 2>&1 &
    SMOKE_PID=$!
    # With many targets it sets up every pinger before it listens: wait for it (at most 30 s).
    for ((k = 0; k < 60; k++)); do
        ip netns exec "$NS" curl -sf --max-time 2 -o /dev/null "http://127.0.0.1:$PORT/metrics" && break
        sleep 0.5
    done
    sleep "$WARMUP"
    if ! kill -0 "$SMOKE_PID" 2>/dev/null; then echo "tool=smokeping mode=$mode targets=$n FAILED: $(tail -3 "$WORK/smokeping.log")"; SMOKE_PID=""; return; fi
    local t0 s0 t1 s1
    # Scrapes stay outside the CPU window (rendering 1000 hosts' histograms costs smokeping CPU too).
    s0=$(scrape); t0=$(ticks "$SMOKE_PID")
    sleep "$MEASURE"
    t1=$(ticks "$SMOKE_PID"); s1=$(scrape)
    kill "$SMOKE_PID"; wait "$SMOKE_PID" 2>/dev/null || true; SMOKE_PID=""
    read -r r0 p0 <<<"$s0"; read -r r1 p1 <<<"$s1"
    # Counted between the two scrapes. Requests in flight at either edge can make the loss read
    # slightly off (even negative); whole-run totals are worse, as smokeping loses pings at start-up.
    awk -v n="$n" -v m="$mode" -v dt=$((t1 - t0)) -v hz="$HZ" -v s="$MEASURE" -v req=$((r1 - r0)) -v resp=$((p1 - p0)) 'BEGIN {
        cpu = dt / hz
        printf "tool=smokeping mode=%s targets=%d probes=%d replies=%d loss_pct=%.3f cpu_s=%.3f cpu_pct=%.2f us_per_probe=%.1f\n",
            m, n, req, resp, req ? (req - resp) * 100 / req : 100, cpu, cpu * 100 / s, req ? cpu * 1e6 / req : 0 }'
}

# fping (as root it opens a raw socket): the same targets, each once a second (-p 1000), for
# MEASURE rounds (-c; at most 65535/n), at two gaps between any two of its echoes (-i): 1000/n ms
# (at least 1, at most 10), spreading a round over the second, and 0, each round in one burst.
# Charged per echo it actually sent (the sum of xmt in its own summary), by its own CPU
# (getrusage of the child); rate = echoes / max(elapsed, rounds x 1 s). -i is a gap across ALL
# targets: -i 1 caps fping at 1,000 echoes/s (it reaches ~850-900), so CPU sampled over a window
# must not be divided by n echoes a second (what this function did before #33).
rusage_py='
import os, signal, sys, threading, time
deadline, out, cmd = float(sys.argv[1]), sys.argv[2], sys.argv[3:]
t0 = time.monotonic()
pid = os.posix_spawnp(cmd[0], cmd, os.environ)
threading.Timer(deadline, os.kill, (pid, signal.SIGINT)).start()
threading.Timer(deadline + 5, os.kill, (pid, signal.SIGKILL)).start()
_, status, ru = os.wait4(pid, 0)
with open(out, "w") as f:
    f.write(f"{time.monotonic() - t0:.3f} {ru.ru_utime + ru.ru_stime:.6f}\n")
os._exit(0)'
fping_point() {  # targets
    local n=$1 paced gap rounds=$MEASURE
    paced=$(awk -v n="$n" 'BEGIN { i = 1000 / n; if (i > 10) i = 10; if (i < 1) i = 1; printf "%g", i }')
    # fping 5.1 aborts with more than 65,535 echoes in 10 s (its sequence numbers run out).
    (( n * rounds <= 65535 )) || rounds=$((65535 / n > 0 ? 65535 / n : 1))
    for gap in "$paced" 0; do
        # shellcheck disable=SC2046
        ip netns exec "$NS" python3 -c "$rusage_py" $((MEASURE + 5)) "$WORK/fping.time" \
            fping -c "$rounds" -p 1000 -i "$gap" -q $(targets "$n") 2>"$WORK/fping.log"
        awk -v n="$n" -v gap="$gap" -v k="$rounds" -v tf="$WORK/fping.time" -F'[ /=,%]+' '
            /xmt\/rcv\/%loss/ { for (i = 1; i <= NF; i++) if ($i == "loss") { xmt += $(i + 1); rcv += $(i + 2) } }
            END {
                getline line < tf; split(line, t, " "); el = t[1]; cpu = t[2]; span = el > k ? el : k
                printf "tool=fping mode=raw gap_ms=%s targets=%d probes=%d replies=%d rate=%.0f/s loss_pct=%.3f cpu_s=%.3f cpu_pct=%.2f us_per_probe=%.1f\n",
                    gap, n, xmt, rcv, xmt / span, xmt ? (xmt - rcv) * 100 / xmt : 100, cpu, cpu * 100 / span, xmt ? cpu * 1e6 / xmt : 0 }' "$WORK/fping.log"
    done
}

echo "# $(date -u +%FT%TZ) $(nproc) cores, kernel $(uname -r); ${MEASURE}s measured after ${WARMUP}s warm-up per point"
for n in $RATES; do
    for mode in datagram raw; do
        ip netns exec "$NS" timeout $((MEASURE + WARMUP + 20)) "$BIN" --targets "$n" --mode "$mode" --seconds "$MEASURE" --warmup "$WARMUP"
        smokeping "$n" "$mode"
    done
    if command -v fping >/dev/null; then fping_point "$n"; else echo "tool=fping: not installed (apt-get install fping)"; fi
done
