"""The cases about /probe (issue #47): hostile parameters, a flood of slow probes, one client's
flood beside the scraper, a FIFO as the module file. Every exporter here also runs its own loopback probe, which must not suffer."""

import os
import re
import socket
import threading
import time
import urllib.parse

from .harness import write

MODULES = """modules:
  tcp_connect:
    prober: tcp
  http_2xx:
    prober: http
  auth:
    prober: http
    http:
      basic_auth: {username: u, password: S3CRETpw}
"""


def modules_file(c, text=MODULES):
    path = c.path("blackbox.yml")
    write(path, text)
    return path


def get(e, query, headers=None, timeout=10.0, source=None):
    return e.request("GET", "/probe?" + query, headers=headers, timeout=timeout, source=source)


def case_probe_params(c):
    """Hostile parameters get a clear 4xx/5xx and cost nothing lasting; secrets never show."""
    lst = c.listener()
    e = c.exporter([f"--probe.tcp={lst.target}"], [f"--modules.file={modules_file(c)}"])
    e.wait_rounds(1)
    rounds = e.metrics().total("reachability_rounds_total")
    q = urllib.parse.quote
    rows = [
        ("no target", "module=tcp_connect", {400}),
        ("unknown module", "module=nope&target=x", {400}),
        ("module with ESC", "module=" + q("a\x1b[31mb") + "&target=x", {400}),
        ("10 KB module name", "module=" + "m" * 10_000 + "&target=x", {400, 414, 431}),
        ("target with NUL", "module=tcp_connect&target=" + q("127.0.0.1\x00:9"), {400}),
        ("2049-byte target", "module=tcp_connect&target=" + "a" * 2049, {400}),
        ("60 KB target", "module=tcp_connect&target=" + "a" * 60_000, {400, 414, 431}),
        ("target double-escaped", "module=tcp_connect&target=" + q(q(lst.target)), {200}),
        ("same parameter 100 times", "&".join(["module=tcp_connect"] * 100) + "&target=" + lst.target, {200}),
        ("same parameter 1,000 times", "&".join(["module=tcp_connect"] * 1000) + "&target=" + lst.target, {414}),
    ]
    for name, query, want in rows:
        status, _, body = get(e, query)
        c.expect(status in want, f"{name}: {status} (want {sorted(want)}) {body[:80]!r}")
        c.expect(b"\x1b" not in body and b"\x00" not in body, f"{name}: no raw ESC or NUL in the answer")
    for header in ["NaN", "Inf", "-1e308", "1e308", "abc", " 5"]:
        status, _, body = get(
            e, f"module=tcp_connect&target={lst.target}", {"X-Prometheus-Scrape-Timeout-Seconds": header}
        )
        c.expect(status in (200, 500), f"scrape timeout {header!r}: {status} {body[:60]!r}")
    status, _, body = get(e, "module=auth&debug=true&target=" + q("http://bob:T4RGETpw@127.0.0.1:9/"))
    text = body.decode("utf-8", "replace")
    c.expect(status == 200 and "S3CRETpw" not in text and "T4RGETpw" not in text, f"debug shows no secret ({status})")
    status, _, _ = e.request("GET", "/-/healthy")
    after = e.wait_metric(lambda m: m.total("reachability_rounds_total") > rounds, 12)
    c.expect(status == 200, f"still healthy: {status}")
    c.expect(after is not None and after.total("reachability_rounds_total") > rounds, "its own rounds went on")


class Silent:
    """Accepts connections and holds them silent until closed (an HTTP target that never answers)."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(512)
        self.sock.settimeout(0.2)
        self.target = f"127.0.0.1:{self.sock.getsockname()[1]}"
        self.held = []
        self.stopped = threading.Event()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while not self.stopped.is_set():
            try:
                self.held.append(self.sock.accept()[0])
            except OSError:
                pass

    def close(self):
        self.stopped.set()
        for s in self.held:
            s.close()
        self.sock.close()


def case_probe_flood(c):
    """200 concurrent probes of a silent target: at most --modules.max-concurrent run, the rest get
    503 at once; /metrics and the exporter's own rounds are not held."""
    lst = c.listener()
    silent = Silent()
    c.later(silent.close)
    e = c.exporter([f"--probe.tcp={lst.target}"], [f"--modules.file={modules_file(c)}", "--modules.max-concurrent=8"])
    e.wait_rounds(1)
    rounds = e.metrics().total("reachability_rounds_total")
    results = []
    lock = threading.Lock()

    def one():
        t = time.monotonic()
        try:
            status, _, _ = get(
                e, f"module=http_2xx&target=http://{silent.target}/", {"X-Prometheus-Scrape-Timeout-Seconds": "3"}
            )
        except OSError as err:
            status = f"error {err}"
        with lock:
            results.append((status, time.monotonic() - t))

    threads = [threading.Thread(target=one) for _ in range(200)]
    for t in threads:
        t.start()
    time.sleep(0.5)
    t0 = time.monotonic()
    scrape = e.metrics()
    scrape_s = time.monotonic() - t0
    for t in threads:
        t.join(20)
    ok = [s for s, _ in results if s == 200]
    busy = [d for s, d in results if s == 503]
    c.expect(len(ok) <= 8 + 8, f"probes that ran: {len(ok)} (want at most the 8 places, twice over the 3 s)")
    c.expect(len(busy) >= 150, f"503 answers: {len(busy)} of 200 (want most)")
    c.expect(not busy or max(busy) < 1.0, f"503 at once: slowest {max(busy) if busy else 0:.2f} s")
    c.expect(scrape_s < 1.0 and scrape is not None, f"/metrics during the flood: {scrape_s:.2f} s")
    after = e.wait_metric(lambda m: m.total("reachability_rounds_total") > rounds, 12)
    c.expect(after is not None, "its own rounds went on")


def case_probe_fair(c):
    """A client flooding /probe with slow probes from 127.0.0.9 holds only its own
    --modules.max-concurrent places: the scraper at 127.0.0.1 still gets its probe run (ATTACKS:
    shared budgets)."""
    lst = c.listener()
    silent = Silent()
    c.later(silent.close)
    e = c.exporter([f"--probe.tcp={lst.target}"], [f"--modules.file={modules_file(c)}", "--modules.max-concurrent=4"])
    e.wait_rounds(1)
    results = []
    lock = threading.Lock()

    def flood():
        try:
            status, _, _ = e.request(
                "GET",
                f"/probe?module=http_2xx&target=http://{silent.target}/",
                {"X-Prometheus-Scrape-Timeout-Seconds": "3"},
                source="127.0.0.9",
                timeout=10.0,
            )
        except OSError as err:
            status = f"error {err}"
        with lock:
            results.append(status)

    threads = [threading.Thread(target=flood) for _ in range(40)]
    for t in threads:
        t.start()
    time.sleep(0.5)
    status, _, body = get(e, f"module=tcp_connect&target={lst.target}", source="127.0.0.1")
    for t in threads:
        t.join(20)
    c.expect(
        status == 200 and b"probe_success 1" in body,
        f"the scraper's probe during the flood: {status}, {body[-200:]!r}",
    )
    ran = results.count(200)
    c.expect(ran <= 4 + 4, f"the flooder's probes that ran: {ran} (want at most its 4 places, twice over the 3 s)")
    c.expect(results.count(503) >= 30, f"the flooder's 503 answers: {results.count(503)} of 40")


def case_probe_fifo(c):
    """A FIFO as --modules.file: exit 78 at once with the reason, not a hang."""
    lst = c.listener()
    fifo = c.path("blackbox.yml")
    os.mkfifo(fifo)
    e = c.exporter([f"--probe.tcp={lst.target}"], [f"--modules.file={fifo}"], wait=False, name="modules-fifo")
    rc = e.wait_exit(5)
    err = e.stderr()
    c.expect(rc == 78, f"FIFO as the module file: exit {rc if rc is not None else 'none in 5 s'} (want 78)")
    c.expect(re.search(r"not a regular file", err, re.I), f"message: {err.strip()[-120:]!r}")
    if rc is None:
        e.proc.kill()
