"""The row runner the truth and captive labs share: rows side by side in a thread pool, an
interrupt (SIGTERM) closing the benches that run, `PASS|FAIL row: details` in a fixed order,
and the summary line. Each row is `(name, ...)`; `play(row, stop)` returns (status, line)."""

import shutil
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from .util import log


def run_rows(lab, summary, rows, order, play, jobs, work, keep, started, live, setup=lambda: None):
    """Plays `rows` `jobs` at a time after `setup()`; `live` is the list of running benches
    (closed on an interrupt); `work` is removed unless `keep`. Returns 1 when any row failed."""
    stop = threading.Event()
    results = {}

    def interrupted(_signum, _frame):
        stop.set()
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupted)
    pool = None
    try:
        setup()
        pool = ThreadPoolExecutor(max_workers=max(1, jobs))
        futures = {r[0]: pool.submit(play, r, stop) for r in rows}
        for name, f in futures.items():
            results[name] = f.result()
        pool.shutdown()
    except KeyboardInterrupt:
        stop.set()
        log(f"{lab} interrupted: closing the rows' namespaces")
        for bench in list(live):
            bench.close()  # the rows' next step fails; their threads end
        if pool:
            pool.shutdown(wait=True, cancel_futures=True)
    finally:
        if keep:
            log(f"{lab}: logs kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    log("")
    for name in order:
        if name in results:
            status, line = results[name]
            log(f"{status} {name}: {line}")
        elif any(r[0] == name for r in rows):
            log(f"FAIL {name}: did not run")
    passed = sum(1 for s, _ in results.values() if s == "PASS")
    failed = len(rows) - passed
    log(f"{summary}: {passed} passed, {failed} failed ({time.time() - started:.0f}s)")
    return 1 if failed else 0
