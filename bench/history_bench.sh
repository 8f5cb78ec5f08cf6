#!/usr/bin/env bash
# History report benchmark: a month of 1-second rounds (about 2.6 million round records, plus
# transitions and daily restarts) written through the real HistoryStore (daily and 64 MiB
# rotation), then `reachability_exporter history` (release build) summarising it. Prints the
# wall and CPU time of the report and checks that it found the outages the scenario contains.
#
#   bench/history_bench.sh            # DAYS=30 INTERVAL=1 PROBES=2
#
# Disk: about 1.2 GB in a temporary directory (removed on exit). No network traffic at all.
set -euo pipefail
cd "$(dirname "$0")/.."
DAYS=${DAYS:-30}
INTERVAL=${INTERVAL:-1}
PROBES=${PROBES:-2}
RUNS=${RUNS:-3}

if [ -z "${SKIP_BUILD:-}" ]; then  # SKIP_BUILD=1: use the release binaries already built
  swift build -c release --product history_bench >/dev/null
  swift build -c release --product reachability_exporter >/dev/null
fi
BIN="$(swift build -c release --show-bin-path)"
dir=$(mktemp -d /tmp/rx-history-bench.XXXXXX)
trap 'rm -rf "$dir"' EXIT

echo "generating $DAYS days at ${INTERVAL}s with $PROBES probes per round in $dir"
gen=$("$BIN/history_bench" generate "$dir" --days "$DAYS" --interval "$INTERVAL" --probes "$PROBES")
echo "$gen"
want=$(sed -n 's/.*overall_outages=\([0-9]*\).*/\1/p' <<<"$gen")
echo "on disk: $(du -sh "$dir" | cut -f1) in $(find "$dir" -mindepth 1 -maxdepth 1 | wc -l) files"

# Warm the page cache once so the runs measure decoding, not the disk.
cat "$dir"/* >/dev/null
for ((i = 1; i <= RUNS; i++)); do
  out=$( { /usr/bin/time -f 'TIME %e %U %S %M' "$BIN/reachability_exporter" history --history.dir="$dir" \
           --since="$((DAYS + 1))d" --output=json >"$dir/report.json"; } 2>&1 )
  read -r _ wall user sys rss <<<"$(grep '^TIME' <<<"$out")"
  got=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(sum(1 for o in r["outages"] if o["scope"]=="overall"), r["records"]["rounds"], r["records"]["corrupt"])' "$dir/report.json")
  read -r outages rounds corrupt <<<"$got"
  echo "run $i: report of $rounds rounds in ${wall}s wall, ${user}s user + ${sys}s sys CPU, max RSS ${rss} KB; overall outages $outages (want $want), corrupt $corrupt"
  [ "$outages" = "$want" ] && [ "$corrupt" = 0 ] || { echo "WRONG REPORT"; exit 1; }
done
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
