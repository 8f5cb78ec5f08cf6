#!/usr/bin/env python3
"""The truth lab's driver (run through `scripts/lab truth BINARY`, which checks the tools and
sweeps the namespaces afterwards): issue #42, "never a false full". Each row plays a healthy
phase and a fault with real software (nftables on a forwarding router, dnsmasq, Python HTTP(S)
and stream servers) in namespaces of its own (net.py), measures how long the exporter takes,
and asserts the EXPECTED behaviour:

  conntrack_full        prefer; the router drops NEW connections while a download keeps
                        flowing: overall leaves full (-> limited) within 30 s
  own_and_onlink        prefer; the only receiving connections go to the host's own public
                        address and an on-link IPv6 neighbour; upstream cut: limited about as
                        fast as without passive evidence, never full through the outage
  stall_round           prefer; the router drops a running download: a probe round starts
                        within 3 s (default passive settings:
                        two RTOs and one 2 s read)
  budget_restart        a tiny budget spent, the exporter restarted: the uplink is its last
                        verdict or unknown, never limited (no_probes); the budgets file holds
                        nftables' count within 5 %
  long_interval_backup  a backup probed every 10 s loses one of its rounds: stays full; really
                        down, flips after 3 of its own rounds
  not_run               no default route for ~10 rounds: no probe failure counted, no loss on
                        the status page
  one_family_portal     IPv4 port 80 DNATed to a portal (302), IPv6 untouched: ipv4 is portal
                        (default shape with --probe.http.each-family, and probes pinned by
                        family in the file)

Each row also runs `reachability_exporter check` where it means something and says whether it
agrees with the daemon. Rows run side by side (--jobs, default 2; the longest, the backup row,
first). Prints `PASS|FAIL row: details` per row and `truth: N passed, N failed`; exit 1 when any
row failed. About 80 s."""

import os
import sys
import tempfile
import time

from .. import certs
from ..faultlab.addresses import LAB_NAME, V4_NET, V6_NET
from ..netns import lab_arguments
from ..rowlab import run_rows
from ..util import log
from . import rows_misc, rows_passive, rows_uplink
from .common import Result
from .net import Bench

# (name, namespace tag, function, Bench.build options); the longest first.
ROWS = [
    ("long_interval_backup", "r5", rows_uplink.long_interval_backup, {"second": "backup"}),
    ("conntrack_full", "r1", rows_passive.conntrack_full, {}),
    ("own_and_onlink", "r2", rows_passive.own_and_onlink, {}),
    ("stall_round", "r3", rows_passive.stall_round, {}),
    ("budget_restart", "r4", rows_uplink.budget_restart, {"second": "up"}),
    ("not_run", "r6", rows_misc.not_run, {}),
    ("one_family_portal", "r7", rows_misc.one_family_portal, {"dns": True}),
]
ORDER = ["conntrack_full", "own_and_onlink", "stall_round", "budget_restart", "long_interval_backup", "not_run",
         "one_family_portal"]  # fmt: skip


LIVE = []  # the benches of rows running now: an interrupt closes them from the main thread


def play(args, work, name, tag, fn, options, stop):
    started = time.time()
    bench = Bench(args.prefix, tag, args.exporter_bin, work)
    LIVE.append(bench)
    try:
        if stop.is_set():
            raise RuntimeError("interrupted")
        bench.build(**options)
        result = fn(bench)
    except Exception as e:  # a row that cannot play fails, with the reason
        result = Result()
        result.want(False, f"{type(e).__name__}: {str(e).strip()[:300]}")
    finally:
        LIVE.remove(bench)
        bench.close()
    line = "; ".join(result.details + [f"{time.time() - started:.0f}s"])
    if result.problems:
        line += " -- " + "; ".join(result.problems)
    log(f"  ... {name} done ({time.time() - started:.0f}s)")
    return ("FAIL" if result.problems else "PASS"), line


def main():
    ap = lab_arguments(
        "scripts/lab truth BINARY", __doc__, "--prefix and --exporter-bin are given by scripts/lab.", "rxtruth-PID"
    )
    ap.add_argument("--keep", action="store_true", help="keep the work directory (logs of every row)")
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("RXTRUTH_JOBS", "2")), help="rows at once")
    ap.add_argument("--only", action="append", default=[], help="run only this row (repeatable)")
    args = ap.parse_args()
    started = time.time()
    work = tempfile.mkdtemp(prefix=f"{args.prefix}-")
    rows = [r for r in ROWS if not args.only or r[0] in args.only]
    log(f"truth lab: {len(rows)} rows, {args.jobs} at a time, exporter {args.exporter_bin}, namespaces {args.prefix}-*")

    def setup():
        certs.make_ca(work, "rxtruth-ca")
        certs.make_leaf(work, "server", LAB_NAME, f"IP:{V4_NET},IP:{V6_NET},DNS:{LAB_NAME}")

    return run_rows(
        "truth lab",
        "truth",
        rows,
        ORDER,
        lambda r, stop: play(args, work, *r, stop),
        args.jobs,
        work,
        args.keep,
        started,
        LIVE,
        setup,
    )


if __name__ == "__main__":
    sys.exit(main())
