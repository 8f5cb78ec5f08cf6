"""Shared pieces of the adversarial suite: starting the exporter and keeping its processes, raw
and parsed HTTP to it, small file and statistics helpers (metrics are parsed by
rxlab.exposition; loopback listeners and servers are in servers.py, bcrypt and basic auth in
auth.py, certificates in rxlab.certs).

Traffic rule: every exporter started here probes loopback targets only, trusts local targets,
listens on 127.0.0.1:0 and runs with REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1. Every
process started is registered and killed by its PID when its case ends (or at exit).
"""

import http.client
import os
import re
import socket
import ssl
import subprocess
import sys
import threading
import time

from .. import procs
from ..exposition import Exposition as Metrics

ENV = dict(os.environ, REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS="1")
START_TIMEOUT = 15.0

_procs_lock = threading.Lock()
_procs = set()


def register(proc):
    with _procs_lock:
        _procs.add(proc)
    return proc


def stop_process(proc, grace=5.0):
    """SIGTERM, then SIGKILL after `grace` seconds; returns the exit code."""
    procs.stop(proc, grace, kill_wait=5)
    with _procs_lock:
        _procs.discard(proc)
    return proc.returncode


def kill_all():
    """Kills every process still registered (the runner's last resort)."""
    with _procs_lock:
        left = list(_procs)
    for p in left:
        if p.poll() is None:
            p.kill()
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                pass
    with _procs_lock:
        _procs.clear()


def with_nofile(limit, argv):
    """argv run under RLIMIT_NOFILE soft=hard=`limit` (an exec wrapper: no preexec_fn in threads)."""
    code = (
        "import os, resource, sys; "
        f"resource.setrlimit(resource.RLIMIT_NOFILE, ({limit}, {limit})); "
        "os.execv(sys.argv[1], sys.argv[1:])"
    )
    return [sys.executable, "-c", code] + list(argv)


def spawn(argv, tmp, name, stdin=subprocess.DEVNULL):
    """Starts argv with the test environment, stdout/stderr to files in `tmp`."""
    out = open(os.path.join(tmp, f"{name}.out"), "wb")
    err = open(os.path.join(tmp, f"{name}.err"), "wb")
    try:
        proc = subprocess.Popen(argv, env=ENV, stdin=stdin, stdout=out, stderr=err, start_new_session=True)
    finally:
        out.close()
        err.close()
    return register(proc)


class Exporter:
    """One exporter process on 127.0.0.1:0 with loopback probes only.

    `probes` are probe flags (e.g. ["--probe.tcp=127.0.0.1:1234"]); give [] only together with
    a --config.file whose probes are loopback. Interval 1s and timeout 500ms unless `extra`
    sets them. `wrap` rewrites the final argv (e.g. `with_nofile`).
    """

    counter = 0
    counter_lock = threading.Lock()

    def __init__(self, binary, tmp, probes, extra=(), wrap=None, name=None):
        with Exporter.counter_lock:
            Exporter.counter += 1
            n = Exporter.counter
        self.name = name or f"exporter{n}"
        self.tmp = tmp
        extra = list(extra)
        args = [binary, "--web.listen-address=127.0.0.1:0", "--probe.trust-local-targets", "--no-path.monitor"]
        if not any(a.startswith("--probe.interval") for a in extra):
            args.append("--probe.interval=1s")
        if not any(a.startswith("--probe.timeout") for a in extra):
            args.append("--probe.timeout=500ms")
        for p in probes:
            assert "127." in p or "[::1]" in p or "localhost" in p, f"non-loopback probe {p}"
        self.argv = args + list(probes) + extra
        if wrap:
            self.argv = wrap(self.argv)
        self.proc = None
        self.host = "127.0.0.1"
        self.port = None

    @property
    def err_path(self):
        return os.path.join(self.tmp, f"{self.name}.err")

    def stderr(self):
        try:
            with open(self.err_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def start(self, wait=True):
        self.proc = spawn(self.argv, self.tmp, self.name)
        if wait:
            self.wait_listening()
        return self

    def wait_listening(self, limit=START_TIMEOUT):
        end = time.monotonic() + limit
        while time.monotonic() < end:
            m = re.search(r"msg=listening address=(\S+)", self.stderr())
            if m:
                host, _, port = m.group(1).rpartition(":")
                self.host, self.port = host.strip("[]"), int(port)
                return
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited {self.proc.returncode} at start: {tail(self.stderr())}")
            time.sleep(0.05)
        raise RuntimeError(f"{self.name} not listening within {limit} s: {tail(self.stderr())}")

    def wait_exit(self, limit):
        """The exit code if the process ends within `limit` seconds, else None (still running)."""
        try:
            return self.proc.wait(limit)
        except subprocess.TimeoutExpired:
            return None

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self):
        if self.proc is not None:
            return stop_process(self.proc)
        return None

    # HTTP

    def request(self, method, path, headers=None, body=None, tls=False, source=None, timeout=5.0):
        return http_request(self.host, self.port, method, path, headers, body, tls, source, timeout)

    def metrics(self, **kw):
        status, _, body = self.request("GET", "/metrics", **kw)
        if status != 200:
            raise RuntimeError(f"GET /metrics: {status} {body[:200]!r}")
        return Metrics(body.decode("utf-8", "replace"))

    def wait_metric(self, predicate, limit, **kw):
        """Scrapes until predicate(metrics) is true; returns the last Metrics (or None)."""
        end = time.monotonic() + limit
        last = None
        while time.monotonic() < end:
            try:
                last = self.metrics(**kw)
                if predicate(last):
                    return last
            except (OSError, RuntimeError, http.client.HTTPException):
                pass
            time.sleep(0.2)
        return last

    def wait_rounds(self, n, limit=10.0, **kw):
        return self.wait_metric(lambda m: m.total("reachability_rounds_total") >= n, limit, **kw)


def tail(text, n=400):
    text = text.strip()
    return text[-n:].replace("\n", " | ")


def http_request(host, port, method, path, headers=None, body=None, tls=False, source=None, timeout=5.0):
    """(status, headers dict with lower-case names, body bytes); raises OSError on failure."""
    src = (source, 0) if source else None
    if tls:
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        conn = http.client.HTTPSConnection(host, port, timeout=timeout, source_address=src, context=ctx)
    else:
        conn = http.client.HTTPConnection(host, port, timeout=timeout, source_address=src)
    try:
        conn.request(method, path, body=body, headers=dict(headers or {}))
        r = conn.getresponse()
        data = r.read()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, data
    finally:
        conn.close()


def raw_exchange(host, port, data, timeout=3.0, source=None, until_close=True):
    """Sends raw bytes, returns everything read until close or timeout."""
    s = socket.create_connection((host, port), timeout=timeout, source_address=(source, 0) if source else None)
    try:
        s.sendall(data)
        chunks = []
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                s.settimeout(max(0.01, end - time.monotonic()))
                b = s.recv(65536)
            except TimeoutError:
                break
            except ConnectionResetError:
                break
            if not b:
                break
            chunks.append(b)
            if not until_close and b"\r\n\r\n" in b"".join(chunks):
                break
        return b"".join(chunks)
    finally:
        s.close()


def status_of(raw):
    m = re.match(rb"HTTP/1\.[01] (\d{3})", raw)
    return int(m.group(1)) if m else None


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    if not n:
        return float("nan")
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2
