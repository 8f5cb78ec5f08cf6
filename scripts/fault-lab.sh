#!/usr/bin/env bash
# The fault lab: the built exporter in a network namespace of its own, behind one or
# two upstream namespaces that play the internet (reachability-lab serves HTTP, HTTPS with a
# lab CA, and DNS there), with real faults injected: links and carrier down, routes deleted,
# nft drop and random-loss rules, DNS dead, captive portals, a wrong TLS certificate, IPv6
# broken, the primary uplink dead, a flapping link, a vanished gateway, a path-MTU black hole.
# Every scenario is asserted through the exporter's metrics and its history (--history.dir);
# the run ends with a table of expected and observed verdicts with detection and recovery
# times. A scenario that cannot run (ICMP not permitted, a flag refused) fails the run; only
# --loss-seconds=0 skips one, on request.
#
#   scripts/fault-lab.sh [--loss-seconds=90] [--only=single,loss,icmp,uplinks,router,locate,filtered,onpath] ...  (see fault_lab.py --help)
#   RXLAB_BIN_DIR=/path/to/bin scripts/fault-lab.sh ...   (prebuilt binaries; no swift build)
#   RXLAB_LAB_BIN=/path/to/reachability-lab ...            (the lab services from elsewhere than that dir)
#
# The router phase puts real home-router software between the exporter and the lab internet:
# dnsmasq (DHCP + caching DNS forwarder), openNDS (captive portal), NAT and nft faults on a
# router namespace (scripts/lab_router.py). It needs dnsmasq, opennds, busybox, iptables-legacy,
# conntrack; without them that phase FAILS (it is not skipped).
#
# The locate phase (scripts/faultlab/locate_phase.py) reuses the router phase's home network
# (and needs the same tools) for fault localization and path MTU: the gateway vanishing while
# the home's link stays up must be located at `gateway`, the router's uplink down at `upstream`,
# only DNS dead at `dns`, and a WAN of 1400 bytes with "fragmentation needed"/"packet too big"
# dropped must be `limited (mtu)` at `upstream` with the path MTU measured within 20 bytes, in
# the metrics (reachability_fault_info, reachability_path_mtu_bytes), `check --output=json`
# and the history.
#
# The filtered phase (scripts/lab_filtered.py) puts a filtering router with a squid forward proxy
# (open on :3128, basic auth on :3129) between the exporter and unbound (DNS over UDP, TCP and
# TLS, a lab CA) plus the lab's HTTP/HTTPS: UDP/53 dropped or rejected, direct web dropped. It
# needs unbound, squid (its basic_ncsa_auth helper), kdig (knot-dnsutils), curl and conntrack;
# without them that phase FAILS too.
#
# The onpath phase (scripts/lab_onpath.py, issue #29) puts a router that answers in place of the
# internet between two clients (dual-stack; IPv6-only) and a lab internet of real servers: with
# its uplink cut it forges echo replies (nft DNAT) or completes every TCP handshake (a silent
# listener); squid intercepts and caches plain HTTP; unbound's dns64 and tayga play NAT64 with a
# network-specific prefix. It needs dnsmasq, unbound, tayga, squid, conntrack, curl and kdig.
#   scripts/fault-lab.sh --only=onpath    (under 2 minutes)
#
# Traffic: only inside the namespaces made here (documentation prefixes, no route to the host).
# Namespaces are named rxlab-<pid>-*, and every process in them and the namespaces themselves
# are removed on exit, whatever happens. Needs root, ip, nft and openssl; without them it
# prints a NOTICE and does not run (it never passes silently).
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
for tool in ip nft openssl python3; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if [ "$(id -u)" != 0 ] || ((${#missing[@]})); then
  echo "NOTICE: fault lab NOT RUN (needs root and ip/nft/openssl/python3; missing: ${missing[*]:-none}, uid $(id -u))"
  exit 0
fi

if [ -z "${RXLAB_NO_BUILD:-}" ] && [ -z "${RXLAB_BIN_DIR:-}" ]; then  # RXLAB_NO_BUILD=1: use what is built already
  swift build --product reachability_exporter 2>&1 | grep -E 'error' || true
  swift build --product reachability-lab 2>&1 | grep -E 'error' || true
fi
bin="${RXLAB_BIN_DIR:-}"  # RXLAB_BIN_DIR=DIR: binaries built elsewhere (implies RXLAB_NO_BUILD)
[ -n "$bin" ] || bin="$(swift build --show-bin-path)"
lab_bin="${RXLAB_LAB_BIN:-$bin/reachability-lab}"
[ -x "$bin/reachability_exporter" ] && [ -x "$lab_bin" ] || { echo "fault lab: build failed"; exit 1; }

prefix="rxlab-$$"
keep=""
for a in "$@"; do [ "$a" != --keep ] || keep=1; done
cleanup() {
  local spaces
  spaces=$(ip netns list | awk '{ print $1 }' | grep "^$prefix-" || true)
  for ns in $spaces; do for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -TERM "$pid" 2>/dev/null || true; done; done
  [ -z "$spaces" ] || sleep 0.3
  for ns in $spaces; do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
  done
  rm -rf /etc/netns/"$prefix"-* 2>/dev/null || true  # the router phase's resolv.conf for its home namespace
  [ -n "$keep" ] || rm -rf /tmp/"$prefix"-* 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

python3 -u scripts/fault_lab.py --prefix="$prefix" --exporter-bin="$bin/reachability_exporter" --lab-bin="$lab_bin" "$@"
