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
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

from . import procs
from .prom import Prometheus
from .util import free_port

ENV = dict(os.environ, REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS="1")


class Listener(threading.Thread):
    """Accepts and closes TCP connections on 127.0.0.1:port until stopped."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen(64)
        self.sock.settimeout(0.2)
        self.stopped = threading.Event()

    def run(self):
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
                conn.close()
            except OSError:
                continue
        self.sock.close()

    def stop(self):
        self.stopped.set()
        self.join(2)


def wait_http(url, limit=20.0):
    end = time.time() + limit
    while time.time() < end:
        try:
            with urllib.request.urlopen(url, timeout=1) as r:
                return r.read()
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"FAIL: {url} did not answer in {limit} s")


def stop(proc):
    procs.stop(proc, grace=10, kill_wait=5)


def main():
    binary = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="rx-backfill-")
    exporter = prometheus = listener = None
    try:
        history = os.path.join(tmp, "history")
        target = free_port()
        listener = Listener(target)
        listener.start()
        web = free_port()
        exporter = subprocess.Popen(
            [
                binary,
                f"--web.listen-address=127.0.0.1:{web}",
                f"--probe.tcp=127.0.0.1:{target}",
                "--probe.trust-local-targets",
                "--no-path.monitor",
                "--probe.interval=1s",
                "--probe.timeout=500ms",
                "--probe.fail-after=1",
                "--probe.recover-after=1",
                f"--history.dir={history}",
            ],
            env=ENV,
            stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(tmp, "exporter.log"), "w"),
        )
        wait_http(f"http://127.0.0.1:{web}/metrics")
        time.sleep(8)
        listener.stop()
        cut = time.time()
        time.sleep(8)
        listener = Listener(target)
        listener.start()
        restored = time.time()
        time.sleep(8)
        stop(exporter)
        exporter = None

        report = json.loads(
            subprocess.check_output(
                [binary, "history", f"--history.dir={history}", "--since=1h", "--output=json"], env=ENV
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

        om = os.path.join(tmp, "backfill.om")
        with open(om, "w") as f:
            subprocess.check_call(
                [
                    binary,
                    "history",
                    "export",
                    f"--history.dir={history}",
                    "--since=1h",
                    "--step=1s",
                    "--labels=job=reachability,instance=backfill:10361,site=lab",
                ],
                env=ENV,
                stdout=f,
            )
        size = os.path.getsize(om)
        lines = sum(1 for _ in open(om))
        tsdb = os.path.join(tmp, "tsdb")
        out = subprocess.run(
            ["promtool", "tsdb", "create-blocks-from", "openmetrics", om, tsdb], capture_output=True, text=True
        )
        if out.returncode != 0:
            raise SystemExit(f"FAIL: promtool create-blocks-from openmetrics: {out.stdout}{out.stderr}")
        print(f"export: {lines} lines, {size} bytes; promtool imported them into {len(os.listdir(tsdb))} block(s)")

        config = os.path.join(tmp, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global: {scrape_interval: 1h}\n")
        port = free_port()
        prometheus = subprocess.Popen(
            [
                "prometheus",
                f"--config.file={config}",
                f"--storage.tsdb.path={tsdb}",
                f"--web.listen-address=127.0.0.1:{port}",
                "--storage.tsdb.retention.time=3650d",
            ],
            stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(tmp, "prometheus.log"), "w"),
        )
        wait_http(f"http://127.0.0.1:{port}/api/v1/status/buildinfo", 30)
        prom = Prometheus(f"http://127.0.0.1:{port}")
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
        print("backfill proof: OK")
    finally:
        stop(exporter)
        stop(prometheus)
        if listener:
            listener.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
