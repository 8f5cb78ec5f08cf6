"""What the fleet lab's parts share: logging, running a command, a thread that lives in one
network namespace (so the driver can talk to 127.0.0.1 or a lab address there), and a small
client for Prometheus' HTTP API."""
import ctypes
import json
import os
import queue
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

CLONE_NEWNET = 0x40000000


def log(text=""):
    print(text, flush=True)


def run(*cmd, check=True, input_text=None, timeout=30):
    """Runs a command; raises with its output when it fails and `check` is set."""
    p = subprocess.run(cmd, capture_output=True, text=True, input=input_text, timeout=timeout)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {p.stdout}{p.stderr}")
    return p


class NsWorker(threading.Thread):
    """A thread that has entered network namespace `ns` (setns affects only the calling thread)
    and runs the callables it is given there: every socket they open is in that namespace."""

    def __init__(self, ns):
        super().__init__(daemon=True, name=f"ns-{ns}")
        self.ns, self.jobs, self.entered, self.error = ns, queue.Queue(), threading.Event(), None
        self.start()
        self.entered.wait(5)
        if self.error or not self.entered.is_set():
            raise RuntimeError(f"cannot enter namespace {ns}: {self.error}")

    def run(self):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = os.open(f"/var/run/netns/{self.ns}", os.O_RDONLY)
            try:
                if libc.setns(fd, CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), "setns")
            finally:
                os.close(fd)
        except OSError as e:
            self.error = e
            self.entered.set()
            return
        self.entered.set()
        while True:
            job = self.jobs.get()
            if job is None:
                return
            fn, box, done = job
            try:
                box["value"] = fn()
            except BaseException as e:  # handed back to the caller
                box["error"] = e
            done.set()

    def call(self, fn, timeout=20):
        box, done = {}, threading.Event()
        self.jobs.put((fn, box, done))
        if not done.wait(timeout):
            raise TimeoutError(f"{self.ns}: call did not return within {timeout} s")
        if "error" in box:
            raise box["error"]
        return box["value"]

    def get(self, url, timeout=5):
        """GET `url` from inside the namespace: (status, body)."""
        def fetch():
            try:
                with urllib.request.urlopen(url, timeout=timeout) as r:
                    return r.status, r.read().decode(errors="replace")
            except urllib.error.HTTPError as e:
                return e.code, e.read().decode(errors="replace")
        return self.call(fetch, timeout + 5)

    def connect(self, host, port, timeout=2.0):
        """A TCP connect from inside the namespace: 'connected', 'refused' (the host answered) or
        'timeout' (nothing came back: the path is dead)."""
        def attempt():
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.settimeout(timeout)
            try:
                s.connect((host, port))
                return "connected"
            except ConnectionRefusedError:
                return "refused"
            except (socket.timeout, TimeoutError):
                return "timeout"
            except OSError as e:
                return f"error {e.strerror or e}"
            finally:
                s.close()
        return self.call(attempt, timeout + 5)

    def stop(self):
        self.jobs.put(None)


class Prom:
    """Prometheus' HTTP API, asked from inside the namespace it listens in."""

    def __init__(self, worker, url):
        self.worker, self.url = worker, url.rstrip("/")

    def api(self, path, **params):
        status, body = self.worker.get(f"{self.url}{path}?{urllib.parse.urlencode(params, doseq=True)}", timeout=10)
        try:
            res = json.loads(body)
        except ValueError:
            raise RuntimeError(f"Prometheus {path}: HTTP {status}: {body[:200]}")
        if res.get("status") != "success":
            raise RuntimeError(f"Prometheus {path}: {res.get('error')}")
        return res["data"]

    def query(self, expr, at=None):
        """Instant query: [(labels, value)] for vectors; for a range selector [(labels, [(t, v)])]."""
        data = self.api("/api/v1/query", query=expr, time=f"{at or time.time():.3f}")
        if data["resultType"] == "matrix":
            return [(r["metric"], [(float(t), float(v)) for t, v in r["values"]]) for r in data["result"]]
        if data["resultType"] == "vector":
            return [(r["metric"], float(r["value"][1])) for r in data["result"]]
        return [({}, float(data["result"][1]))]

    def query_range(self, expr, start, end, step):
        data = self.api("/api/v1/query_range", query=expr, start=f"{start:.3f}", end=f"{end:.3f}", step=f"{step}")
        return [(r["metric"], [(float(t), float(v)) for t, v in r["values"]]) for r in data["result"]]

    def by_site(self, expr, at=None):
        return {labels.get("site"): value for labels, value in self.query(expr, at)}


def wait_until(predicate, timeout, step=0.25):
    """Polls `predicate()` (exceptions count as false) until it returns something truthy or
    `timeout` seconds pass; returns that value or None."""
    deadline = time.time() + timeout
    while True:
        try:
            value = predicate()
            if value:
                return value
        except (OSError, RuntimeError, TimeoutError):
            pass
        if time.time() > deadline:
            return None
        time.sleep(step)
