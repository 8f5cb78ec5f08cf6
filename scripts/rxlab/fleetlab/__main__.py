#!/usr/bin/env python3
"""The fleet lab's driver (run through `scripts/lab fleet`, which owns the last-resort cleanup).

The edge topology of deploy/fleet/ made of real processes in network namespaces that exist only
for this run: three sites, each with reachability_exporter (probing two ICMP targets and an HTTP
target in a lab "internet" beyond a core router) and a Prometheus in agent mode
(deploy/fleet/agent.yml and the flags of deploy/fleet/reachability-agent.service) that scrapes it
and remote-writes to a central Prometheus (deploy/fleet/central.yml: the remote-write receiver,
the shipped rules deploy/prometheus/reachability_{rules,alerts}.yml as they are now,
deploy/fleet/fleet.rules.yml, lab copies of the fleet alerts with windows short enough for a
one-minute outage and lab copies of every alert with a `for:` a --for-scale'th as long), which
sends its alerts, as central.yml's `alerting` section says, to an Alertmanager running
deploy/fleet/alertmanager.yml (only its receiver URL and its timers changed: alerting.py) that
delivers to a webhook recording every notification.

One site's uplink is cut for --outage seconds (the core drops its traffic: the site loses its
internet and the central cannot reach it, nor it the central), then restored. Asserted through
the central's HTTP API: nothing arrives from that site during the outage and the central's
instant view of it is its last delivered value; the site-silent alert fires; after the restore
the backlog arrives (delivery delay measured), the site's reachable==0 samples sit at the
timestamps of the exporter's own outage (its history), no gap longer than three scrape
intervals and no sample lost in any site's series, the other sites stayed 1 throughout, the
availability rules computed centrally show the outage (and show that what they recorded during
it saw nothing), the late-outage alert fires after the restore and a `for:` alert never does.
The agent's own counters must show nothing dropped.

Then what an operator receives (delivery.py): for that cut, for a target down for every site and
for another site's internet cut while its path to the central stays up, the notifications the
webhook got (exactly the expected page, the fault location where the central knows it, no
duplicate, every symptom inhibited at Alertmanager, the resolved notifications) and the time
from fault to notification. A closing table lists every check.

Static checks first: promtool check config (agent mode and central), check rules, test rules,
amtool check-config. Traffic: only inside the namespaces made here (10.77.0.0/16, no route to
the host).
"""

import signal
import subprocess
import sys
import time

from ..netns import lab_arguments
from ..util import log
from .alerting import AM_CONFIG
from .scenario import Rows, Scenario
from .topology import FLEET, Fleet


def static_checks(rows):
    checks = [
        ("promtool check config --agent agent.yml", ["check", "config", "--agent", "agent.yml"]),
        ("promtool check config central.yml", ["check", "config", "central.yml"]),
        ("promtool check rules fleet.rules.yml", ["check", "rules", "fleet.rules.yml"]),
        ("promtool test rules fleet.rules.test.yml", ["test", "rules", "fleet.rules.test.yml"]),
        ("amtool check-config alertmanager.yml", ["amtool", "check-config", AM_CONFIG]),
    ]
    for name, argv in checks:
        argv = argv if argv[0] == "amtool" else ["promtool", *argv]
        p = subprocess.run(argv, cwd=FLEET, capture_output=True, text=True, timeout=60)
        out = (p.stdout + p.stderr).strip().splitlines()
        rows.add(name, "SUCCESS", p.returncode == 0, "SUCCESS" if p.returncode == 0 else " / ".join(out[-3:]))


def arguments():
    """The lab's options, parsed and checked (--isolate defaults to the site after --cut)."""
    ap = lab_arguments(
        "scripts/lab fleet",
        __doc__,
        "--prefix and --exporter-bin are given by scripts/lab (RX_BIN_DIR).",
        "rxfleet-PID",
    )
    ap.add_argument("--prometheus", default="prometheus")
    ap.add_argument("--sites", type=int, default=3, help="2..9 (ReachabilityTargetDown needs 3 sites or more)")
    ap.add_argument("--cut", type=int, default=2, help="which site loses its uplink (1-based)")
    ap.add_argument("--outage", type=float, default=60)
    ap.add_argument("--baseline", type=float, default=20, help="seconds of healthy fleet before the cut")
    ap.add_argument("--post", type=float, default=35, help="seconds after the restore before the final checks")
    ap.add_argument("--catchup-timeout", type=float, default=60)
    ap.add_argument("--settle", type=float, default=10, help="the last seconds left out of the sample accounting")
    ap.add_argument("--scrape-interval", type=int, default=2, help="the agents' scrape interval (s)")
    ap.add_argument("--eval-interval", type=int, default=2, help="the central's rule evaluation interval (s)")
    ap.add_argument("--probe-interval", default="1s")
    ap.add_argument("--probe-timeout", default="500ms")
    ap.add_argument(
        "--silent-window", type=int, default=30, help="ReachabilitySiteSilent's window in the lab variant (s)"
    )
    ap.add_argument(
        "--for-scale",
        type=float,
        default=20,
        help="every alert with a `for:` gets a lab copy (lab=short_for) waiting this many times less",
    )
    ap.add_argument(
        "--restart-agent-at",
        type=float,
        default=0,
        help="kill and restart the cut site's agent this many seconds into the outage (0: never). Shows Prometheus "
        "issue #8809: remote write resumes from the restart, the buffered samples before it are not "
        "sent, so the sample rows fail",
    )
    ap.add_argument(
        "--am-timer-scale",
        type=float,
        default=30,
        help="Alertmanager's group_wait, group_interval and repeat_interval are the shipped ones divided by this",
    )
    ap.add_argument(
        "--isolate", type=int, default=0, help="whose internet is cut later (1-based; default: after --cut)"
    )
    ap.add_argument("--notify-timeout", type=float, default=60, help="longest wait for a notification (s)")
    ap.add_argument(
        "--hold", type=float, default=45, help="longest wait, after a fault's notification, for its symptoms (s)"
    )
    ap.add_argument(
        "--settle-notifications", type=float, default=5, help="seconds to wait for stray notifications after a phase"
    )
    ap.add_argument("--keep", action="store_true", help="keep the work directory (configs, logs, WALs)")
    args = ap.parse_args()
    if not 2 <= args.sites <= 9 or not 1 <= args.cut <= args.sites:
        ap.error("--sites must be 2..9 and --cut one of them")
    args.isolate = args.isolate or args.cut % args.sites + 1
    if not 1 <= args.isolate <= args.sites:
        ap.error("--isolate must be one of the sites")
    return args


def main():
    args = arguments()

    def stop(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, stop)

    started = time.time()
    rows = Rows()
    fleet = None
    stage = "static checks"
    try:
        log("static checks (deploy/fleet):")
        static_checks(rows)
        stage = "lab setup"
        fleet = Fleet(args)
        fleet.build()
        fleet.start()
        log(
            f"fleet lab: namespaces {args.prefix}-*, {args.sites} sites, scrape every {args.scrape_interval}s, "
            f"rules every {args.eval_interval}s, setup {time.time() - started:.0f}s"
        )
        stage = "scenario"
        Scenario(fleet, args, rows).run()
        dead = fleet.dead()
        rows.add("every lab process ran to the end", "none exited", not dead, ", ".join(dead) or "all running")
    except (Exception, KeyboardInterrupt) as e:
        log(f"fleet lab aborted in {stage}: {e}")
        if fleet:
            for name, _, path in fleet.processes:
                if name in fleet.dead() or name == "central":
                    log(f"--- {name} (last lines)\n{fleet.tail(path, 8)}")
        rows.add(f"{stage} (aborted)", "runs to the end", False, (str(e).splitlines() or [type(e).__name__])[0][:140])
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the cleanup short
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if fleet:
            fleet.close()
    log("")
    rows.table()
    failed = sum(1 for r in rows if r.status != "PASS")
    log(f"fleet lab: {len(rows) - failed} passed, {failed} failed in {time.time() - started:.0f}s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
