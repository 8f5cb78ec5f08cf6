#!/usr/bin/env bash
# The fleet lab: the edge topology of deploy/fleet/ (docs/fleet.md) in network namespaces. Three
# sites, each with the built exporter and a Prometheus agent (deploy/fleet/agent.yml, the flags
# of reachability-agent.service) remote-writing to a central Prometheus with the shipped rules;
# one site's uplink is cut for a minute and restored; the central's HTTP API must then hold that
# site's outage at its original timestamps, with no gap and nothing lost, and the rules must show
# it. Ends with a table; exits non-zero on any failed check. About 3 minutes.
#
#   scripts/fleet-lab.sh [--outage=60] [--sites=3] [--keep] ...      (see fleet_lab.py --help)
#   RXLAB_BIN_DIR=/path/to/bin scripts/fleet-lab.sh                   (default: .build/debug)
#
# Never builds: it runs $RXLAB_BIN_DIR/reachability_exporter (a copy of it, made at start).
# Needs root, ip, nft, prometheus and promtool (Debian: prometheus), python3 with PyYAML; without
# them it prints a NOTICE and does not run (it never passes silently).
#
# Traffic: only inside the namespaces made here (10.77.0.0/16; no route to the host). Namespaces
# are rxfleet-<pid>-*; every process in them and the namespaces themselves are removed on exit,
# whatever happens.
set -euo pipefail
cd "$(dirname "$0")/.."
export REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1

missing=()
for tool in ip nft prometheus promtool python3; do command -v "$tool" >/dev/null || missing+=("$tool"); done
python3 -c 'import yaml' 2>/dev/null || missing+=(PyYAML)
if [ "$(id -u)" != 0 ] || ((${#missing[@]})); then
  echo "NOTICE: fleet lab NOT RUN (needs root and ip/nft/prometheus/promtool/python3+PyYAML; missing: ${missing[*]:-none}, uid $(id -u))"
  exit 0
fi

bin="${RXLAB_BIN_DIR:-.build/debug}"
[ -x "$bin/reachability_exporter" ] || { echo "fleet lab: no exporter at $bin/reachability_exporter (build it, or set RXLAB_BIN_DIR)"; exit 1; }

prefix="rxfleet-$$"
keep=""
for a in "$@"; do [ "$a" != --keep ] || keep=1; done
cleanup() {  # the driver cleans up itself; this catches what a killed driver left
  local spaces
  spaces=$(ip netns list | awk '{ print $1 }' | grep "^$prefix-" || true)
  for ns in $spaces; do for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -TERM "$pid" 2>/dev/null || true; done; done
  [ -z "$spaces" ] || sleep 0.5
  for ns in $spaces; do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
  done
  [ -n "$keep" ] || rm -rf /tmp/"$prefix"-* 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

timeout --kill-after=15 "${RXFLEET_TIMEOUT:-420}" \
  python3 -u scripts/fleet_lab.py --prefix="$prefix" --exporter-bin="$bin/reachability_exporter" "$@"
