"""Proof that `history export --format=openmetrics` backfills a real Prometheus TSDB (issue #18).

1. A real exporter (loopback only: a TCP listener on 127.0.0.1 is its "internet",
   --probe.trust-local-targets) keeps a history while the listener runs, stops (an outage)
   and runs again.
2. `reachability_exporter history export` writes the verdict series as OpenMetrics;
   `promtool tsdb create-blocks-from openmetrics` imports them into a fresh TSDB.
3. A Prometheus on that TSDB (no scrapes) answers a range query: the outage is there, at the
   times the history's own report gives, and so are the healthy stretches around it.

usage: scripts/lab backfill     (python3 -m rxlab.backfill EXPORTER_BINARY underneath)
Every process is started here and stopped by its PID; everything lives in one temp dir.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from . import procs, util
from .prom import Prometheus, start_prometheus
from .util import Listener, free_port

ENV = dict(os.environ, REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS="1")


def wait_http(url, limit=20.0):
    """util.wait_http; the proof fails when `url` never answers."""
    body = util.wait_http(url, limit)
    if body is None:
        raise SystemExit(f"FAIL: {url} did not answer in {limit} s")
    return body


def stop(proc):
    procs.stop(proc, grace=10, kill_wait=5)


class Run:
    """The run's temp dir, the processes started (stopped by PID in `close`, in the order they
    were started) and the TCP listener the exporter probes."""

    def __init__(self, binary):
        self.binary = binary
        self.tmp = tempfile.mkdtemp(prefix="rx-backfill-")
        self.history = os.path.join(self.tmp, "history")
        self.processes = []
        self.listener = None

    def close(self):
        for p in self.processes:
            stop(p)
        if self.listener:
            self.listener.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)


def start_exporter(run, target):
    """The exporter probing 127.0.0.1:`target` every second, keeping its history in run.history."""
    web = free_port()
    exporter = subprocess.Popen(
        [
            run.binary,
            f"--web.listen-address=127.0.0.1:{web}",
            f"--probe.tcp=127.0.0.1:{target}",
            "--probe.trust-local-targets",
            "--no-path.monitor",
            "--probe.interval=1s",
            "--probe.timeout=500ms",
            "--probe.fail-after=1",
            "--probe.recover-after=1",
            f"--history.dir={run.history}",
        ],
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=open(os.path.join(run.tmp, "exporter.log"), "w"),
    )
    run.processes.append(exporter)
    wait_http(f"http://127.0.0.1:{web}/metrics")
    return exporter


def record_outage(run):
    """Phase 1: the exporter records 8 s with the listener up, 8 s without it (the outage) and
    8 s with it back, then stops: (time of the cut, time it came back)."""
    target = free_port()
    run.listener = Listener(target)
    run.listener.start()
    exporter = start_exporter(run, target)
    time.sleep(8)
    run.listener.stop()
    cut = time.time()
    time.sleep(8)
    run.listener = Listener(target)
    run.listener.start()
    restored = time.time()
    time.sleep(8)
    stop(exporter)
    return cut, restored


def history_outage(run, cut, restored):
    """The one overall outage the history's own report gives (SystemExit if not exactly one)."""
    report = json.loads(
        subprocess.check_output(
            [run.binary, "history", f"--history.dir={run.history}", "--since=1h", "--output=json"], env=ENV
        )
    )
    outages = [o for o in report["outages"] if o["scope"] == "overall"]
    if len(outages) != 1:
        raise SystemExit(f"FAIL: expected one overall outage in the history, got {outages}")
    outage = outages[0]
    print(
        f"history: outage {outage['state']} ({outage.get('reason')}) from {outage['start_unix']:.1f} to "
        f"{outage['end_unix']:.1f} ({outage['end_unix'] - outage['start_unix']:.1f} s; listener cut at {cut:.1f}, "
        f"back at {restored:.1f})"
    )
    return outage


def export_and_import(run):
    """Phase 2: `history export --format=openmetrics` into a file, promtool's
    create-blocks-from openmetrics into a fresh TSDB: the TSDB's directory."""
    om = os.path.join(run.tmp, "backfill.om")
    with open(om, "w") as f:
        subprocess.check_call(
            [
                run.binary,
                "history",
                "export",
                f"--history.dir={run.history}",
                "--since=1h",
                "--step=1s",
                "--labels=job=reachability,instance=backfill:10361,site=lab",
            ],
            env=ENV,
            stdout=f,
        )
    size = os.path.getsize(om)
    lines = sum(1 for _ in open(om))
    tsdb = os.path.join(run.tmp, "tsdb")
    out = subprocess.run(
        ["promtool", "tsdb", "create-blocks-from", "openmetrics", om, tsdb], capture_output=True, text=True
    )
    if out.returncode != 0:
        raise SystemExit(f"FAIL: promtool create-blocks-from openmetrics: {out.stdout}{out.stderr}")
    print(f"export: {lines} lines, {size} bytes; promtool imported them into {len(os.listdir(tsdb))} block(s)")
    return tsdb


def serve_tsdb(run, tsdb):
    """A Prometheus on that TSDB, with no scrapes: its API once it answers."""
    config = os.path.join(run.tmp, "prometheus.yml")
    with open(config, "w") as f:
        f.write("global: {scrape_interval: 1h}\n")
    port = free_port()
    log = os.path.join(run.tmp, "prometheus.log")
    run.processes.append(start_prometheus(config, tsdb, port, log, "--storage.tsdb.retention.time=3650d"))
    wait_http(f"http://127.0.0.1:{port}/api/v1/status/buildinfo", 30)
    return Prometheus(f"http://127.0.0.1:{port}")


def check_backfilled(prom, outage):
    """Phase 3: the backfilled series shows the outage at the history's times, healthy around it,
    and the verdict mid-outage is not `full` (SystemExit if not)."""
    start, end = outage["start_unix"] - 6, outage["end_unix"] + 6
    data = prom.data(
        "/api/v1/query_range",
        query='reachability_internet_reachable{job="reachability",instance="backfill:10361",site="lab"}',
        start=f"{start:.3f}",
        end=f"{end:.3f}",
        step="1",
    )
    series = data["result"]
    if len(series) != 1:
        raise SystemExit(f"FAIL: expected one backfilled series, got {len(series)}: {data}")
    values = [(float(t), float(v)) for t, v in series[0]["values"]]
    down = [t for t, v in values if v == 0]
    up_before = [t for t, v in values if v == 1 and t < outage["start_unix"]]
    up_after = [t for t, v in values if v == 1 and t > outage["end_unix"]]
    ok = (
        down
        and up_before
        and up_after
        and min(down) >= outage["start_unix"] - 1
        and max(down) <= outage["end_unix"] + 1
        and len(down) >= int(outage["end_unix"] - outage["start_unix"]) - 1
    )
    print(
        f"prometheus: {len(values)} samples in [{start:.0f}, {end:.0f}]; 0 from {min(down) if down else None} "
        f"to {max(down) if down else None} ({len(down)} samples), 1 before ({len(up_before)}) and after "
        f"({len(up_after)})"
    )
    state = prom.result(
        'reachability_connectivity_info{instance="backfill:10361",scope="overall",state!="full"}',
        at=(outage["start_unix"] + outage["end_unix"]) / 2,
    )
    print(f"prometheus: mid-outage verdict {[(r['metric']['state'], r['metric']['reason']) for r in state]}")
    if not ok or len(state) != 1:
        raise SystemExit("FAIL: the outage did not come back through Prometheus as the history recorded it")


def main():
    run = Run(sys.argv[1])
    try:
        cut, restored = record_outage(run)
        outage = history_outage(run, cut, restored)
        tsdb = export_and_import(run)
        check_backfilled(serve_tsdb(run, tsdb), outage)
        print("backfill proof: OK")
    finally:
        run.close()


if __name__ == "__main__":
    main()
