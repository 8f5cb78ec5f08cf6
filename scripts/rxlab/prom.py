"""Prometheus' HTTP API, one client for every lab and proof; and starting a Prometheus on loopback."""

import json
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request


def start_prometheus(config, tsdb, port, log_path, *flags):
    """Starts a Prometheus (the one on PATH) on the configuration file `config` and the TSDB
    directory `tsdb`, listening on 127.0.0.1:`port`, its log (stderr) in `log_path`, with `flags`
    after those: the Popen. The caller stops it by its PID (procs.stop)."""
    return subprocess.Popen(
        [
            "prometheus",
            f"--config.file={config}",
            f"--storage.tsdb.path={tsdb}",
            f"--web.listen-address=127.0.0.1:{port}",
            *flags,
        ],
        stdout=subprocess.DEVNULL,
        stderr=open(log_path, "w"),
    )


class PrometheusError(RuntimeError):
    """The API answered something other than `"status": "success"` (or no JSON at all)."""


def local_fetch(url, timeout):
    """GET `url` from this thread's network namespace: (HTTP status, body text). An HTTP error
    status is an answer too (the API puts its error in the body)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read().decode(errors="replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")


class Prometheus:
    """The API of the Prometheus at `url`. `fetch(url, timeout) -> (status, body)` does the GET:
    by default from this thread's namespace; a lab passes a namespace worker's `get` to ask a
    Prometheus that listens in another namespace."""

    def __init__(self, url, fetch=None, timeout=10):
        self.url, self.fetch, self.timeout = url.rstrip("/"), fetch or local_fetch, timeout

    def response(self, path, **params):
        """The whole JSON answer, success or not."""
        status, body = self.fetch(f"{self.url}{path}?{urllib.parse.urlencode(params, doseq=True)}", self.timeout)
        try:
            return json.loads(body)
        except ValueError:
            raise PrometheusError(f"Prometheus {path}: HTTP {status}: {body[:200]}") from None

    def data(self, path, **params):
        """The `data` of a successful answer; PrometheusError otherwise."""
        res = self.response(path, **params)
        if res.get("status") != "success":
            raise PrometheusError(f"Prometheus {path}: {res.get('error')}")
        return res["data"]

    def evaluate(self, expr, instant=True):
        """The whole answer to `expr`: an instant query now, or a range query over the last 30 s
        at a 1 s step (how a dashboard's graph asks)."""
        now = time.time()
        if instant:
            return self.response("/api/v1/query", query=expr, time=f"{now:.3f}")
        return self.response("/api/v1/query_range", query=expr, start=f"{now - 30:.3f}", end=f"{now:.3f}", step="1")

    def result(self, expr, at=None):
        """The raw `result` list of an instant query (at `at`, default now)."""
        return self.data("/api/v1/query", query=expr, time=f"{at or time.time():.3f}")["result"]

    def query(self, expr, at=None):
        """Instant query: [(labels, value)] for vectors; for a range selector [(labels, [(t, v)])]."""
        data = self.data("/api/v1/query", query=expr, time=f"{at or time.time():.3f}")
        if data["resultType"] == "matrix":
            return [(r["metric"], [(float(t), float(v)) for t, v in r["values"]]) for r in data["result"]]
        if data["resultType"] == "vector":
            return [(r["metric"], float(r["value"][1])) for r in data["result"]]
        return [({}, float(data["result"][1]))]

    def query_range(self, expr, start, end, step):
        data = self.data("/api/v1/query_range", query=expr, start=f"{start:.3f}", end=f"{end:.3f}", step=f"{step}")
        return [(r["metric"], [(float(t), float(v)) for t, v in r["values"]]) for r in data["result"]]

    def by_site(self, expr, at=None):
        return {labels.get("site"): value for labels, value in self.query(expr, at)}
