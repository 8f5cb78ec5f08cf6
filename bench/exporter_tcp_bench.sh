#!/usr/bin/env bash
# TCP probes through the whole exporter, with and without the canary (the cross-check that a
# box on the path is not completing every handshake): N loopback targets (127.0.x.y:PORT, one
# sink accepting on every address), one connect each per second, in a network namespace made
# for the run (loopback only, deleted on exit). For each run: CPU per probe from /proc/PID/stat
# over the measured window, and the TCP packets the run put on the wire per probe, counted by an
# nftables counter in the namespace (SYN, SYN-ACK, ACK, FIN…; the canary's SYN and the reset that
# refuses it). Runs: this build as shipped, this build with `canary_port: 0` (no canary), and
# optionally an older binary (BASELINE=path). Every process started here is stopped by PID.
# Bounded: each run is WARMUP + SECONDS.
#
#   bench/exporter_tcp_bench.sh                        # N=300 SECONDS=15
#   N=500 BASELINE=/tmp/old/reachability_exporter bench/exporter_tcp_bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-300}
SECONDS_=${SECONDS_MEASURED:-15}
WARMUP=${WARMUP:-5}
PORT=${PORT:-7001}
(( N > 0 && N <= 5000 )) || { echo "N must be in 1...5000" >&2; exit 64; }
[ "$(id -u)" = 0 ] || { echo "needs root (network namespace)" >&2; exit 1; }
command -v nft >/dev/null || { echo "missing nft: apt-get install nftables" >&2; exit 1; }
swift build -c release --product reachability_exporter >/dev/null
OURS="$(swift build -c release --show-bin-path)/reachability_exporter"
ns="rx-extcp-$$"
tmp=$(mktemp -d /tmp/rx-extcp.XXXXXX)
pid="" sink=""
cleanup() {
  [ -z "$pid" ] || { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
  [ -z "$sink" ] || { kill "$sink" 2>/dev/null || true; wait "$sink" 2>/dev/null || true; }
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
ip netns add "$ns"
ip -n "$ns" link set lo up
ip netns exec "$ns" nft -f - <<'EOF'
table inet rxbench {
  counter tcp_out { }
  chain output { type filter hook output priority 0; meta l4proto tcp counter name tcp_out; }
}
EOF
ip netns exec "$ns" python3 bench/tcp_sink.py "$PORT" >"$tmp/sink.log" 2>&1 &
sink=$!
for _ in $(seq 50); do grep -q ready "$tmp/sink.log" && break; sleep 0.1; done
hz=$(getconf CLK_TCK)
ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
packets() { ip netns exec "$ns" nft list counter inet rxbench tcp_out | awk '/packets/ { print $2 }'; }

# A configuration file of N tcp probes; CANARY empty: the default canary.
config() { # file canary
  {
    printf 'global: {interval: 1s, timeout: 500ms, path_monitor: false, trust_local_targets: true}\nprobes:\n'
    for ((i = 1; i <= N; i++)); do
      printf '  - {type: tcp, target: "127.0.%d.%d:%d"%s}\n' $(((i >> 8) & 255)) $((i & 255)) "$PORT" \
        "${2:+, tcp: {canary_port: $2\}}"
    done
  } >"$1"
}

exporter() { # name binary config
  local name=$1 bin=$2 file=$3 port=$((20000 + RANDOM % 20000))
  REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1 ip netns exec "$ns" "$bin" --web.listen-address="127.0.0.1:$port" \
    --config.file="$file" --log.level=warn 2>"$tmp/$name.log" &
  pid=$!
  sleep "$WARMUP"
  kill -0 "$pid" 2>/dev/null || { echo "$name FAILED: $(tail -3 "$tmp/$name.log")"; pid=""; return; }
  local counts='/^reachability_probe_(success|failure)s?_total|^reachability_probes_total/ { s[$1 ~ /fail/ ? "f" : "a"] += $NF } END { print s["a"] + 0, s["f"] + 0 }'
  local m0 m1 t0 t1 p0 p1
  m0=$(ip netns exec "$ns" curl -fsS --max-time 60 "http://127.0.0.1:$port/metrics" | awk "$counts")
  p0=$(packets); t0=$(ticks "$pid"); sleep "$SECONDS_"; t1=$(ticks "$pid"); p1=$(packets)
  m1=$(ip netns exec "$ns" curl -fsS --max-time 60 "http://127.0.0.1:$port/metrics" | awk "$counts")
  local rss; rss=$(awk '/VmRSS/ { print $2 }' "/proc/$pid/status")
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
  read -r a0 f0 <<<"$m0"; read -r a1 f1 <<<"$m1"
  awk -v name="$name" -v dt=$((t1 - t0)) -v hz="$hz" -v s="$SECONDS_" -v probes=$((a1 - a0)) -v fails=$((f1 - f0)) \
    -v pk=$((p1 - p0)) -v rss="$rss" 'BEGIN {
    cpu = dt / hz
    printf "%-26s probes=%6d failed=%5d cpu_pct=%6.2f us_per_probe=%7.1f tcp_packets_per_probe=%5.2f rss_mib=%6.1f\n",
      name, probes, fails, cpu * 100 / s, probes ? cpu * 1e6 / probes : 0, probes ? pk / probes : 0, rss / 1024 }'
}

config "$tmp/canary.yml" ""
config "$tmp/nocanary.yml" 0
echo "# exporter TCP: $N targets x 1/s, ${SECONDS_}s measured after ${WARMUP}s, $(nproc) cores, $(date -u +%FT%TZ)"
exporter "with canary (default)" "$OURS" "$tmp/canary.yml"
exporter "canary_port: 0" "$OURS" "$tmp/nocanary.yml"
if [ -n "${BASELINE:-}" ]; then
  # An older binary knows no tcp: section: the file without it.
  grep -v 'canary_port' "$tmp/canary.yml" >"$tmp/baseline.yml"
  exporter "baseline" "$BASELINE" "$tmp/baseline.yml"
fi
