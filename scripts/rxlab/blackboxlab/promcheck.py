"""The blackbox side-by-side lab's Prometheus: one real Prometheus in the client namespace scrapes
both exporters with the relabelling of blackbox's README (spec Appendix A, unchanged but for the
exporter's address; one job per module and exporter, the module in `params`), the lab's targets
as its targets. After a few scrapes, `probe_success` per instance must be the same for both jobs
of a module, healthy targets and faulted ones alike."""

import os
import subprocess
import time

from ..prom import Prometheus, PrometheusError
from ..util import tail

# blackbox's README, the first block (Appendix A.2), for one module and one exporter.
JOB = """  - job_name: '{job}'
    metrics_path: /probe
    params:
      module: [{module}]
    static_configs:
      - targets:
{targets}
    relabel_configs:
      - source_labels: [__address__]
        target_label: __param_target
      - source_labels: [__param_target]
        target_label: instance
      - target_label: __address__
        replacement: {address}  # The blackbox exporter's real hostname:port.
"""

INTERVAL = 4  # seconds between scrapes; each probe's timeout is scrape_timeout - 0.5 = 2.5 s
SCRAPES = 3  # scrapes of every target before probe_success is compared
BOUND = 45  # seconds to wait for them


def job_names(module):
    return f"blackbox_{module}", f"ours_{module}"


def config(cases, bb_address, our_address):
    by_module = {}
    for c in cases:
        by_module.setdefault(c.module, [])
        if c.target not in by_module[c.module]:
            by_module[c.module].append(c.target)
    jobs = []
    for module, targets in by_module.items():
        listed = "\n".join(f"        - '{t}'" for t in targets)
        for job, address in zip(job_names(module), (bb_address, our_address), strict=True):
            jobs.append(JOB.format(job=job, module=module, targets=listed, address=address))
    head = f"global:\n  scrape_interval: {INTERVAL}s\n  scrape_timeout: 3s\nscrape_configs:\n"
    return head + "".join(jobs), by_module


class PromCheck:
    def __init__(self, lab, port, call):
        self.lab, self.port, self.call = lab, port, call
        self.proc = None
        self.api = Prometheus(f"http://127.0.0.1:{port}", fetch=self.fetch)

    def fetch(self, url, timeout):
        from ..prom import local_fetch

        return self.call(local_fetch, url, timeout)

    def start(self, cases, bb_address, our_address):
        text, self.by_module = config(cases, bb_address, our_address)
        w = self.lab.work
        path = os.path.join(w, "prometheus.yml")
        with open(path, "w") as f:
            f.write(text)
        check = subprocess.run(["promtool", "check", "config", path], capture_output=True, text=True)
        if check.returncode != 0:
            raise RuntimeError(f"promtool check config: {check.stdout}{check.stderr}")
        self.log = os.path.join(w, "prometheus.log")
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen(
                ["ip", "netns", "exec", self.lab.client, "prometheus", f"--config.file={path}",
                 f"--storage.tsdb.path={w}/tsdb", f"--web.listen-address=127.0.0.1:{self.port}"],
                stdout=subprocess.DEVNULL, stderr=out,
            )  # fmt: skip
        self.lab.processes.append(self.proc)
        self.started = time.time()
        return path

    def results(self):
        """{(module, target): (blackbox, ours)} of probe_success, after every target was scraped
        SCRAPES times by both jobs (or BOUND seconds passed); and the scrape counts' minimum."""
        deadline = self.started + BOUND
        jobs = sum(len(t) for t in self.by_module.values()) * 2
        least = 0
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"Prometheus exited {self.proc.returncode}:\n{tail(self.log)}")
            try:
                counts = self.api.query('count_over_time(up{job=~"blackbox_.*|ours_.*"}[5m])')
            except (PrometheusError, OSError):
                counts = []
            if len(counts) == jobs:
                least = min(v for _, v in counts)
                if least >= SCRAPES:
                    break
            time.sleep(1)
        out = {}
        for labels, value in self.api.query('probe_success{job=~"blackbox_.*|ours_.*"}'):
            who, module = labels["job"].split("_", 1)
            key = (module, labels["instance"])
            pair = out.setdefault(key, [None, None])
            pair[0 if who == "blackbox" else 1] = value
        ups = {}
        for labels, value in self.api.query('up{job=~"blackbox_.*|ours_.*"}'):
            who, module = labels["job"].split("_", 1)
            ups[(who, module, labels["instance"])] = value
        return out, ups, least
