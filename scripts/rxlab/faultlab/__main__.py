#!/usr/bin/env python3
"""The fault lab's driver (run through `scripts/lab fault`, which checks the tools, finds the
binaries and sweeps the namespaces afterwards).

Builds a small network out of namespaces that exist only for this run:

    client (the exporter)  --c1/u1 veth-->  up1 (router + the lab "internet")
                           --c2/u2 veth-->  up2 (backup uplink; only for the uplink phase)

Lab addresses are documentation prefixes: 192.0.2.0/24 and 2001:db8:1::/64 on the primary
link, 203.0.113.0/24 and 2001:db8:2::/64 on the backup, and the "internet" 198.51.100.1
(HTTP :80, HTTPS :443, ICMP), 198.51.100.53 (DNS) and 2001:db8:100::1 on each upstream's
loopback, served by `reachability-lab`. Nothing here has a route to the host: every packet the
lab sends stays inside the namespaces it made.

Faults are real: links set down, carrier lost, routes deleted, nft drop/reject/random-loss
rules, services stopped or swapped for a captive portal, a wrong TLS certificate. Each scenario
is asserted through the exporter's scraped metrics and its history (--history.dir); the run
ends with a table: scenario, expected, observed, detection and recovery times. A scenario that
cannot run (the exporter refuses its flags, ICMP is not permitted, the lab does not come up)
fails the run with its reason; nothing is skipped for a feature that looks absent. The one
skip is asked for: --loss-seconds=0 leaves out the random-loss scenario (reported SKIPPED).

The `router` phase adds real home-router software between a second client and the
lab internet (homerouter.py): dnsmasq's DHCP lease gives the client its address, route
and resolver; the faults are the router's nft blackhole, its WAN link down and an openNDS
captive portal. Two exporters (the default probe-set shape with names through that resolver,
and the explicit probes) watch each fault; besides the verdicts, the overall verdict must
never be `full` while no family is, and `reachability_exporter check` must exit with the
status of the daemon's settled state.

The `locate` phase reuses that home network (and its router) for fault localization and
path-MTU measurement: one exporter with a path-MTU probe per family must name where each fault
sits, the same in its metrics (reachability_fault_info), `check --output=json` and its
history: the gateway vanishing (nothing answers ARP/ND while the home's link stays up) is
`gateway`, the router's uplink down is `upstream`, the router dropping DNS is `dns`, and a
path-MTU black hole (WAN MTU 1400 with the router's "fragmentation needed"/"packet too big"
dropped) is `limited (mtu)` at `upstream` with the measured path MTU near 1400 per family.

The `filtered` phase puts a filtering router with a squid forward proxy between a third client
and a lab internet of real DNS servers (filterednet.py: unbound over UDP, TCP and DNS
over TLS; reachability-lab's HTTP/HTTPS): UDP/53 dropped and rejected, direct web dropped so
that only the proxy (open, or with basic auth) carries it. Several exporters, each one probe
set (DNS per transport, web direct/proxied/from the environment, proxy credentials and proxy
errors), assert the overall verdict and every probe's failure reason through the metrics and
`reachability_exporter check --output=json`; kdig and curl witness each fault.

The `onpath` phase (issue #29) puts a router that answers in place of the internet between two
more clients (one dual-stack, one IPv6-only) and a lab internet of real servers
(onpathnet.py): with its uplink cut it forges echo replies for every address, or
completes every TCP handshake itself; squid intercepts and caches plain HTTP; unbound's dns64
and tayga make the IPv6-only network's NAT64. Each class healthy and cut off, through the
default probe shape and explicit probes: the daemon's verdict and `check --output=json` against
the expectations (never `full` cut off, with a reason that names the imitation).
"""

# The driver's parts, in this package: addresses.py (the lab's addresses and port), lab.py
# (namespaces, lab services, exporter processes), runner.py (Row, Runner, the table), faults.py
# (nft rulesets, probe flags), phases.py (single, loss, icmp, uplinks), router_phase.py (router,
# on homerouter.py's network), locate_phase.py (locate), filtered_phase.py (filtered, on
# filterednet.py's) and onpath_phase.py (onpath, on onpathnet.py's; each class run by
# onpath_run.py). Namespaces, processes, certificates and the scrape parser are the shared ones
# of rxlab. This file is the driver: arguments, the phases in order, the summary.
import signal
import sys
import time

from ..netns import lab_arguments
from ..util import log
from .filtered_phase import phase_filtered
from .lab import Lab
from .locate_phase import phase_locate
from .onpath_phase import phase_onpath
from .phases import phase_icmp_policy, phase_loss, phase_single_uplink, phase_uplinks
from .router_phase import phase_router
from .runner import Row, Runner


def main():
    ap = lab_arguments(
        "scripts/lab fault",
        __doc__,
        "--prefix, --exporter-bin and --lab-bin are given by scripts/lab (RX_BIN_DIR, RXLAB_LAB_BIN).",
        "rxlab-PID",
    )
    ap.add_argument("--lab-bin", required=True)
    ap.add_argument("--loss", type=int, default=5, help="random loss percent")
    ap.add_argument("--loss-seconds", type=float, default=90, help="duration of the random-loss scenario")
    ap.add_argument("--hold", type=float, default=6, help="how long 'stays full' scenarios are watched")
    ap.add_argument("--flaps", type=int, default=5)
    ap.add_argument("--flap-down", type=float, default=1.0)
    ap.add_argument("--flap-up", type=float, default=2.0)
    ap.add_argument("--keep", action="store_true", help="keep the work directory (logs, certificates)")
    ap.add_argument(
        "--only", default="", help="comma-separated phases: single,loss,icmp,uplinks,router,locate,filtered,onpath"
    )
    args = ap.parse_args()
    lab = Lab(args)
    started = time.time()
    runner = Runner(lab, args)
    failed, current = True, "lab setup"
    try:
        phases = [p for p in (args.only or "single,loss,icmp,uplinks,router,locate,filtered,onpath").split(",") if p]
        known = (
            ("single", phase_single_uplink),
            ("loss", phase_loss),
            ("icmp", phase_icmp_policy),
            ("uplinks", phase_uplinks),
            ("router", phase_router),
            ("locate", phase_locate),
            ("filtered", phase_filtered),
            ("onpath", phase_onpath),
        )
        unknown = set(phases) - {name for name, _ in known}
        if unknown:
            raise RuntimeError(f"unknown phase(s) {', '.join(sorted(unknown))}")
        lab.build()
        lab.enter_client()
        log(f"fault lab: namespaces {lab.prefix}-*, ICMP and history (--history.dir) asserted in every phase")
        for name, phase in known:
            if name in phases:
                current = f"phase {name}"
                log(f"phase {name}:")
                phase_started = time.time()
                phase(runner, lab, args)
                log(f"phase {name}: {time.time() - phase_started:.0f}s")
        failed = any(row.status == "FAIL" for row in runner.rows)
    except Exception as e:  # a broken lab or a scenario that cannot run fails the run, with the reason
        log(f"fault lab aborted in {current}: {e}")
        log(runner.tail_log())
        row = Row(f"{current} (aborted)", "runs to the end")
        row.observed = str(e).splitlines()[0][:120] if str(e) else type(e).__name__
        runner.rows.append(row)
    except KeyboardInterrupt:
        log("fault lab interrupted")
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the cleanup short
        lab.stop_exporter()
        lab.close()
    log("")
    runner.table()
    counts = {s: sum(1 for row in runner.rows if row.status == s) for s in ("PASS", "FAIL", "SKIPPED")}
    log(
        f"fault lab: {counts['PASS']} passed, {counts['FAIL']} failed, {counts['SKIPPED']} skipped "
        f"in {time.time() - started:.0f}s"
    )
    if counts["SKIPPED"]:
        log(
            "NOTICE: fault lab scenarios skipped on request (not passes): "
            + ", ".join(row.scenario for row in runner.rows if row.status == "SKIPPED")
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
