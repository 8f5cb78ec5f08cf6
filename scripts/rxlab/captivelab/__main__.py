#!/usr/bin/env python3
"""The captive lab's driver (run through `scripts/lab captive`, which checks the tools and sweeps
the namespaces afterwards): issue #43, the network's own word. A hotspot announces its RFC 8908
captive-portal API by DHCPv4 option 114 (dnsmasq -> busybox udhcpc -> the hook), DHCPv6 option
103 (dnsmasq -> ISC dhclient -6 -> the hook) or IPv6 RA option 37 (a crafted RA, read by the
exporter from rtnetlink; the RA also carries PREF64, RFC 8781); nginx serves the API over HTTPS
with a lab CA; while captive the router forwards nothing. Each row runs in namespaces of its own
(net.py) and asserts:

  dhcp4_captive         option 114 on a lease renewal: portal (captive_portal_api) within one
                        round (5 s interval, 2 s timeout, fail_after 3, recover_after 2); check
                        exit 3 with the login URL (JSON and text), the metrics, the status page's
                        login link; after login full within one round
  ra_captive            the same from RA option 37; check solicits an RA and lists PREF64
  ra_late_start         the RA went out before the daemon started: it solicits one and is
                        portal from its first round
  ra_solicit_daemon, ra_solicit_check   a router that only answers solicitations: the
                        daemon (within one round of its start) and check each solicit and
                        say portal
  dhcp6_captive         the same from DHCPv6 option 103 (dhclient -6), the API at an IPv6 literal
  false_while_intercepting  the API says false while the router DNATs port 80 to a 302
                        portal: portal by the probes, never full
  hostile_tls, hostile_body, hostile_strings   hostile APIs (another name's certificate, an
                        untrusted CA, http://, a redirect, 1 byte/s, 10 MB, text/html, invalid
                        JSON, captive missing, a repeated key, control characters, markup, a
                        100 KB and a 3 KB URL, an http:// login URL): only the error counter
                        moves; full throughout; no hostile text in any label
  hook_files            untrusted hook files (symlink, world/group-writable, group-writable
                        directory, another owner, FIFO) are ignored; a proper one is not

Each daemon row runs `check` too and says whether it agrees. Rows run side by side (--jobs,
default 4). Prints `PASS|FAIL row: details` per row and `captive: N passed, N failed`; exit 1
when any row failed. `--network-only` checks the network without the exporter (DHCP options as
the clients' scripts see them, RA options on rtnetlink, RS answered, the API and its hostile
twins, captive and intercepting routers). The binary is copied into the work directory first.
No traffic leaves the namespaces; the exporter runs with REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1
and lab targets only."""

import os
import shutil
import sys
import tempfile
import time

from .. import certs
from ..faultlab.addresses import LAB_NAME, V4_NET, V6_NET
from ..netns import lab_arguments
from ..rowlab import run_rows
from ..util import log
from . import api, netcheck, rows_announce, rows_guard, rows_hostile
from .common import Result
from .net import Bench

# (name, namespace tag, function, Bench.build options); the longest first.
ROWS = [
    ("hostile_strings", "h3", rows_hostile.hostile("hostile_strings"), {}),
    ("hook_files", "k1", rows_guard.hook_files, {}),
    ("hostile_tls", "h1", rows_hostile.hostile("hostile_tls"), {}),
    ("hostile_body", "h2", rows_hostile.hostile("hostile_body"), {}),
    ("dhcp4_captive", "d4", rows_announce.dhcp4_captive, {"static4": False}),
    ("ra_captive", "ra", rows_announce.ra_captive, {}),
    ("ra_late_start", "rl", rows_announce.ra_late_start, {}),
    ("ra_solicit_daemon", "sd", rows_announce.solicit_only(daemon=True), {}),
    ("ra_solicit_check", "sc", rows_announce.solicit_only(daemon=False), {}),
    ("dhcp6_captive", "d6", rows_announce.dhcp6_captive, {}),
    ("false_while_intercepting", "fi", rows_guard.false_while_intercepting, {}),
]
ORDER = ["dhcp4_captive", "ra_captive", "ra_late_start", "ra_solicit_daemon", "ra_solicit_check",
         "dhcp6_captive", "false_while_intercepting", "hostile_tls", "hostile_body",
         "hostile_strings", "hook_files", "network"]  # fmt: skip
NETWORK = ("network", "n0", netcheck.network, {"static4": False})
LIVE = []


def play(args, work, name, tag, fn, options, stop):
    started = time.time()
    bench = Bench(args.prefix, tag, args.exporter_bin, work)
    LIVE.append(bench)
    try:
        if stop.is_set():
            raise RuntimeError("interrupted")
        bench.build(**options)
        result = fn(bench)
        if bench.start_solicitations is not None:  # reported: ra_late_start is the row that requires one
            result.note(f"router solicitations at the daemon's start: {bench.start_solicitations}")
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


def prepare(work, binary):
    """The lab CA and its leaves, a rogue CA's, the hostile answers; a copy of the exporter."""
    certs.make_ca(work, "rxcap-ca")
    sans = f"IP:{api.LAN4},IP:{api.LAN6},IP:{V4_NET},IP:{V6_NET},DNS:{LAB_NAME}"
    certs.make_leaf(work, "server", api.LAN4, sans)
    certs.make_leaf(work, "other", "other.example", "DNS:other.example")
    certs.make_ca(work, "rxcap-rogue-ca", name="rogueca")
    certs.make_leaf(work, "rogue", api.LAN4, sans, ca="rogueca")
    api.write_shared(os.path.join(work, "hostile"))
    if not binary:
        return None
    copy = os.path.join(work, "bin", "reachability_exporter")
    os.makedirs(os.path.dirname(copy), exist_ok=True)
    shutil.copy2(binary, copy)
    return copy


def main():
    ap = lab_arguments(
        "scripts/lab captive", __doc__, "--prefix and --exporter-bin are given by scripts/lab.", "rxcap-PID"
    )
    ap.add_argument("--keep", action="store_true", help="keep the work directory (logs of every row)")
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("RXCAPTIVE_JOBS", "4")), help="rows at once")
    ap.add_argument("--only", action="append", default=[], help="run only this row (repeatable)")
    ap.add_argument("--network-only", action="store_true", help="check the network alone, without the exporter")
    args = ap.parse_args()
    started = time.time()
    work = tempfile.mkdtemp(prefix=f"{args.prefix}-")
    rows = [NETWORK] if args.network_only else [r for r in ROWS if not args.only or r[0] in args.only]
    log(
        f"captive lab: {len(rows)} rows, {args.jobs} at a time, exporter {args.exporter_bin}, namespaces {args.prefix}-*"
    )

    def setup():
        args.exporter_bin = prepare(work, None if args.network_only else args.exporter_bin)

    return run_rows(
        "captive lab",
        "captive",
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
