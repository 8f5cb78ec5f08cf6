#!/usr/bin/env python3
"""The blackbox side-by-side lab's driver (run through `scripts/lab blackbox-side-by-side`, which
checks the tools, finds the binary and sweeps the namespaces afterwards): reachability_exporter's
/probe against Debian 12's prometheus-blackbox-exporter 0.23.0, the same module file, the same
targets, side by side, in namespaces made for the run (net.py):

    client (both exporters, Prometheus) ── router ── target (nginx HTTP/HTTPS/HTTP2/proxy,
                                                      unbound ×2, banner server, nftables drops)

Phases, each printing PASS/FAIL lines:

1. examples: every module of blackbox's shipped example files (examples/: Debian's 0.23.0
   blackbox.yml and example.yml, byte for byte what the package installs, and upstream's at
   e39d7d4), each in a file of its own, into blackbox (`--config.check`) and ours (started:
   it serves, or exits 78 naming the file, line and key). The lab's own modules (one per
   setting /probe honours; modules.py) must load in both. Every module both load (the examples
   adapted only where they hard-code a host or the CA path) goes into one module file.
2. cases: both exporters on that file; every (module, target, healthy|faulted) case of
   modules.CASES through both /probe (X-Prometheus-Scrape-Timeout-Seconds: 3), the expositions
   compared (compare.py): probe_success, the names only one has, and the values that must agree
   (every metric but the timings); blackbox must say 1 for a healthy case and 0 for a faulted one.
3. refusals: no target, an unknown module, a bad timeout header, a conflicting hostname and
   the debug=true layout, status, body and Content-Type compared (refusals.py).
4. Prometheus: a real Prometheus scrapes both with blackbox's README relabelling, the cases'
   targets as targets; after 3 scrapes probe_success per instance must agree (promcheck.py).

Differences the lab accepts are listed once, each with why (compare.EXPECTED,
compare.ENDPOINT_EXPECTED); any other fails. Tables per module on stdout and in
.build/artifacts/blackbox-side-by-side.md; `blackbox-side-by-side: N passed, N failed`; exit 1
on any failure. About a minute.
"""

import os
import shutil
import signal
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

from ..netns import enter, lab_arguments
from ..util import log
from . import phases, refusals, report
from .exporters import Exporters, blackbox_version
from .modules import OPTIONAL_LAB, module_file
from .net import BLACKBOX_PORT, OURS_PORT, PROMETHEUS_PORT, Lab
from .promcheck import PromCheck, job_names


class Interrupted(BaseException):
    """SIGTERM (scripts/lab's bound, or the user): not an Exception, so no phase swallows it."""


def on_term(_signum, _frame):
    raise Interrupted("SIGTERM")


def phase_examples(lab, args, rep):
    rep.section("1. blackbox's example modules, one file each")
    phases.installed_identical(rep)
    entries = phases.load_entries(lab.ca)
    started = time.time()
    phases.check_examples(lab, args.exporter_bin, entries)
    log(f"({len(entries)} modules checked in {time.time() - started:.1f} s)")
    report.examples_table(rep, entries)
    for e in entries:
        if e.source == "lab":
            bb_ok, bb_msg = e.bb
            ours_ok, refusal = e.ours
            rep.check(bb_ok, f"lab module {e.name}: blackbox loads it", bb_msg)
            why = (
                ""
                if ours_ok
                else f"refused {refusal.get('key')} (line {refusal.get('line')}): {refusal.get('message')}"
            )
            if not ours_ok and e.name in OPTIONAL_LAB:
                rep.note(f"lab module {e.name} not run: ours {why}")
            else:
                rep.check(ours_ok, f"lab module {e.name}: ours loads it", why)
    shared = phases.shared_modules(entries)
    path = os.path.join(lab.work, "blackbox.yml")
    with open(path, "w") as f:
        f.write(module_file([block for _, _, block in shared]))
    refused = {}
    for e in entries:
        if e.source != "lab" and not e.ours[0]:
            refused.setdefault((e.name, e.ours[1].get("key")), []).append(e.source.split()[0])
    refused = sorted((name, f"{key}, {'/'.join(sorted(set(src)))}") for (name, key), src in refused.items())
    log(f"shared module file: {len(shared)} modules ({path})")
    return entries, shared, path, refused


def phase_cases(lab, rep, pool, shared):
    rep.section("2. every case through both /probe")
    cases, without = phases.make_cases(shared)
    for name, e in without:
        rep.note(f"module {name} ({e.source}, prober {e.prober}) has no lab case")
    started = time.time()
    phases.probe_both(cases, pool, (BLACKBOX_PORT, OURS_PORT))
    phases.fetch_debug([c for c in cases if not c.passed], pool, (BLACKBOX_PORT, OURS_PORT))
    log(f"({len(cases)} cases in {time.time() - started:.1f} s)")
    for c in cases:
        detail = "; ".join(c.problems + [d.detail for d in (c.comparison.unexpected() if c.comparison else [])])
        rep.check(c.passed, f"{c.module} {c.target} ({c.kind}: {c.note})", detail)
    report.case_tables(rep, cases)
    return cases


def phase_refusals(rep, call):
    rep.section("3. refusals and debug=true")
    rows = refusals.run_rows(call, (BLACKBOX_PORT, OURS_PORT))
    for r in rows:
        rep.check(r.passed, f"refusal: {r.what}", "; ".join(r.problems))
    report.refusal_table(rep, rows)
    return rows


def phase_prometheus(rep, prom, cases):
    rep.section("4. Prometheus with blackbox's README relabelling")
    results, ups, least = prom.results()
    rep.check(least >= 3, f"Prometheus scraped every target at least 3 times (least {least:.0f})")
    rows = []
    for module, targets in prom.by_module.items():
        for t in targets:
            bb, ours = results.get((module, t), [None, None])
            kind = next(c.kind for c in cases if c.module == module and c.target == t)
            up = [ups.get((who, module, t)) for who in ("blackbox", "ours")]
            ok = bb is not None and bb == ours
            rows.append([module, t, kind, fmt(bb), fmt(ours), f"{fmt(up[0])} / {fmt(up[1])}", "PASS" if ok else "FAIL"])
            rep.check(ok, f"prometheus {' / '.join(job_names(module))} {t}: probe_success {fmt(bb)} / {fmt(ours)}")
    rep.table(
        ["module", "instance", "kind", "blackbox", "ours", "up bb / ours", "verdict"],
        rows,
        "probe_success per instance",
    )


def fmt(v):
    return "none" if v is None else f"{v:.0f}"


def main():
    ap = lab_arguments("scripts/lab blackbox-side-by-side", __doc__, "", "rxbb-PID")
    ap.add_argument("--keep", action="store_true", help="keep the work directory (logs, module files)")
    ap.add_argument("--jobs", type=int, default=8, help="requests in flight at once (8)")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, on_term)
    started = time.time()
    work = tempfile.mkdtemp(prefix=f"{args.prefix}-", dir="/tmp")
    lab = Lab(args.prefix, work)
    rep = report.Report()
    pool = None
    code = 1
    try:
        log(f"blackbox side-by-side lab: {args.prefix}, work {work}")
        lab.build()
        lab.certificates()
        versions = lab.start_servers()
        versions["blackbox"] = blackbox_version()
        log(f"servers up: nginx {versions['nginx']}, unbound {versions['unbound']}; blackbox {versions['blackbox']}")
        pool = ThreadPoolExecutor(args.jobs, initializer=enter, initargs=(lab.client,))

        def call(fn, *a, **kw):
            return pool.submit(fn, *a, **kw).result(timeout=120)

        entries, shared, modules_path, refused = phase_examples(lab, args, rep)
        exporters = Exporters(lab.client, args.exporter_bin, work, lab.processes)
        exporters.start(modules_path, BLACKBOX_PORT, OURS_PORT, call)
        rep.check(True, f"both exporters serve the shared module file ({len(shared)} modules)")
        cases, _ = phases.make_cases(shared)
        prom = PromCheck(lab, PROMETHEUS_PORT, call)
        prom.start(cases, f"127.0.0.1:{BLACKBOX_PORT}", f"127.0.0.1:{OURS_PORT}")
        cases = phase_cases(lab, rep, pool, shared)
        refusal_rows = phase_refusals(rep, call)
        phase_prometheus(rep, prom, cases)
        rep.section("Differences")
        report.unexplained(rep, cases, refusal_rows)
        report.expected_list(rep)
        report.agreed(rep)
        report.failure_details(rep, cases)
        took = time.time() - started
        rep.section(
            "Summary",
            f"{rep.passed} passed, {rep.failed} failed in {took:.0f} s; "
            f"{len(shared)} modules, {len(cases)} cases; "
            f"example modules ours refuses: {', '.join(f'{n} ({k})' for n, k in refused) or 'none'}",
        )
        path = rep.write(
            f"# blackbox side-by-side: reachability_exporter /probe against blackbox_exporter {versions['blackbox']}\n\n"
            f"Made by `scripts/lab blackbox-side-by-side` ({time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}); "
            f"nginx {versions['nginx']}, unbound {versions['unbound']}. `*` marks an expected difference "
            "(listed with its reason under Expected differences)."
        )
        log(f"\nreport: {path}")
        code = 0 if rep.failed == 0 else 1
    except (Interrupted, KeyboardInterrupt) as e:
        rep.check(False, "the lab ran to its end", f"interrupted ({e or 'SIGINT'})")
        code = 130
    except Exception as e:
        import traceback

        traceback.print_exc()
        rep.check(False, "the lab ran to its end", f"{type(e).__name__}: {e}")
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if pool:
            pool.shutdown(wait=False, cancel_futures=True)
        lab.close()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            log(f"kept {work}")
    log(f"blackbox-side-by-side: {rep.passed} passed, {rep.failed} failed")
    return code


if __name__ == "__main__":
    sys.exit(main())
