"""The cases about the exporter's state and files: the lifecycle endpoint, an emptied web config,
a FIFO as the config, control characters in `check`, transitions, an empty probe list (the
history's cases are in cases_history.py)."""

import http.client
import json
import os
import re
import signal
import subprocess
import time

from .. import certs
from . import harness
from .auth import basic, bcrypt_hash
from .context import fmt, lifecycle_flag, probe_config
from .harness import raw_exchange, status_of, write
from .servers import TinyHTTPServer

PUBLIC_MARKERS = [
    "1.1.1.1",
    "8.8.8.8",
    "9.9.9.9",
    "2606:4700",
    "2001:4860",
    "gstatic",
    "google",
    "cloudflare",
    "example.com",
]


# 1. lifecycle


def reload_flood(e, before_each=None, count=300, seconds=5.0):
    """POST /-/reload `count` times spread over `seconds` on one keep-alive connection;
    returns (answered, rounds run meanwhile, elapsed seconds)."""
    r0, t0 = e.metrics().total("reachability_rounds_total"), time.monotonic()
    sent = 0
    conn = None
    for i in range(count):
        due = t0 + seconds * i / count
        if time.monotonic() > t0 + seconds + 1:
            break
        time.sleep(max(0.0, due - time.monotonic()))
        if before_each:
            before_each(i)
        try:
            if conn is None:
                conn = http.client.HTTPConnection(e.host, e.port, timeout=2)
            conn.request("POST", "/-/reload")
            conn.getresponse().read()
            sent += 1
        except (OSError, http.client.HTTPException):
            if conn:
                conn.close()
            conn = None
    if conn:
        conn.close()
    r1, t1 = e.metrics().total("reachability_rounds_total"), time.monotonic()
    return sent, r1 - r0, t1 - t0


def case_lifecycle(c):
    lst = c.listener()
    cfg = probe_config(c, lst)
    flag = lifecycle_flag(c)
    if not flag:
        c.expect(False, "--web.enable-lifecycle unknown to this binary (its endpoint is always open)")

    off = c.exporter([], [f"--config.file={cfg}"])
    st, _, body = off.request("POST", "/-/reload")
    c.expect(
        st == 403 and b"Lifecycle API is not enabled" in body,
        f"without the flag POST /-/reload -> {st} {body[:60]!r} (want 403 'Lifecycle API is not enabled')",
    )
    off.stop()

    on = c.exporter([], [f"--config.file={cfg}", "--probe.interval=2s"] + flag)
    st = on.request("GET", "/-/reload")[0]
    c.expect(st == 405, f"GET -> {st} (want 405)")
    st = on.request("POST", "/-/reload", {"Origin": "http://evil.example"})[0]
    c.expect(st == 403, f"POST Origin: http://evil.example -> {st} (want 403)")
    st = on.request("POST", "/-/reload", {"Sec-Fetch-Site": "cross-site"})[0]
    c.expect(st == 403, f"POST Sec-Fetch-Site: cross-site -> {st} (want 403)")
    st = on.request("POST", "/-/reload")[0]
    c.expect(st == 200, f"plain POST -> {st} (want 200)")

    # 300 reloads of an unchanged file over ~5 s: at most ~5 rounds beyond the interval's.
    on.wait_rounds(1)
    sent, rounds, elapsed = reload_flood(on)
    extra = rounds - (elapsed / 2.0 + 1)
    c.expect(
        extra <= 5,
        f"{sent} POSTs of an unchanged file in {elapsed:.1f} s: {rounds:.0f} rounds, "
        f"{max(extra, 0):.1f} beyond the 2 s interval's (want <= 5)",
    )
    # The same with a file that changes at every reload: rounds stay rate-limited (~1 a second).
    variants = [open(cfg).read(), open(cfg).read().replace("probes:", "global:\n  fail_after: 4\nprobes:")]
    sent, rounds, elapsed = reload_flood(on, lambda i: write(cfg, variants[i % 2]))
    c.expect(
        rounds <= elapsed + 2,
        f"{sent} POSTs of a changing file in {elapsed:.1f} s: {rounds:.0f} rounds (want <= 1 a second + 2)",
    )
    write(cfg, variants[0])
    on.stop()

    # With basic auth: POST needs credentials; a reload of an unchanged file runs no round.
    web = c.path("web.yml")
    write(web, f"basic_auth_users:\n  prom: {bcrypt_hash('pw')}\n")
    auth = {"Authorization": basic("prom", "pw")}
    slow = c.exporter(
        [], [f"--config.file={cfg}", f"--web.config.file={web}", "--probe.interval=30s", "--probe.timeout=1s"] + flag
    )
    st = slow.request("POST", "/-/reload")[0]
    c.expect(st == 401, f"with basic auth, POST without credentials -> {st} (want 401)")
    slow.wait_rounds(1, headers=auth)
    before = slow.metrics(headers=auth).total("reachability_rounds_total")
    codes = [slow.request("POST", "/-/reload", auth)[0] for _ in range(3)]
    time.sleep(1.0)
    after = slow.metrics(headers=auth).total("reachability_rounds_total")
    c.expect(
        after == before,
        f"3 reloads of an unchanged file (answers {codes}): rounds {before:.0f} -> {after:.0f} (want no new round)",
    )


# 3. webconfig_truncate


def case_webconfig_truncate(c):
    lst = c.listener()
    cert, key = certs.make_self_signed_rsa(c.tmp)
    # An empty web config at start: exit 78 (started first, checked last).
    empty = c.path("empty.yml")
    write(empty, "")
    refused = c.exporter(
        [f"--probe.tcp={lst.target}"], [f"--web.config.file={empty}"], wait=False, name="empty-at-start"
    )

    tls_part = f"tls_server_config:\n  cert_file: {cert}\n  key_file: {key}\n"
    full = tls_part + f"basic_auth_users:\n  prom: {bcrypt_hash('pw')}\n"
    web = c.path("web.yml")
    write(web, full)
    e = c.exporter([f"--probe.tcp={lst.target}"], [f"--web.config.file={web}"])
    auth = {"Authorization": basic("prom", "pw")}
    c.expect(e.request("GET", "/metrics", auth, tls=True)[0] == 200, "baseline HTTPS + password 200")

    def after_change(label):
        time.sleep(1.3)  # re-read at most once a second, at a new connection
        try:
            e.request("GET", "/-/healthy", auth, tls=True, timeout=3)
        except OSError:
            pass
        time.sleep(0.2)
        plain = raw_exchange(e.host, e.port, b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        c.expect(
            b"reachability_" not in plain,
            f"{label}: plain HTTP -> {status_of(plain)} {'with' if b'reachability_' in plain else 'no'} metrics",
        )
        try:
            st = e.request("GET", "/metrics", tls=True)[0]
        except OSError as err:
            st = f"TLS failed ({type(err).__name__})"
        c.expect(st == 401, f"{label}: HTTPS without password -> {st} (want 401)")
        try:
            return e.metrics(headers=auth, tls=True)
        except (OSError, RuntimeError):
            return None

    write(web, "")
    m = after_change("truncated to 0 bytes")
    fails = m.total("reachability_exporter_web_config_reloads_total", result="failure") if m else None
    c.expect(
        fails is not None and fails >= 1, f"web_config_reloads_total{{failure}} {fmt(fails, digits=0)} (want >= 1)"
    )

    write(web, tls_part)
    after_change("cut after tls_server_config")

    rc = refused.wait_exit(5)
    c.expect(
        rc == 78,
        f"empty web config at start: exit {rc if rc is not None else 'none (still running after 5 s)'} (want 78)",
    )


# 8. fifo_config


def case_fifo_config(c):
    lst = c.listener()
    fifo = c.path("fifo.yml")
    os.mkfifo(fifo)
    e = c.exporter([f"--probe.tcp={lst.target}"], [f"--config.file={fifo}"], wait=False, name="fifo-at-start")
    rc = e.wait_exit(5)
    err = e.stderr()
    c.expect(rc == 78, f"FIFO at start: exit {rc if rc is not None else 'none in 5 s'} (want 78)")
    c.expect(re.search(r"not a regular file", err, re.I), f"message: {harness.tail(err, 120)!r}")
    if rc is None:
        e.proc.kill()

    cfg = probe_config(c, lst)
    e2 = c.exporter([], [f"--config.file={cfg}"], name="fifo-on-reload")
    e2.wait_rounds(1)
    tmp_fifo = c.path("fifo.tmp")
    os.mkfifo(tmp_fifo)
    os.replace(tmp_fifo, cfg)
    e2.proc.send_signal(signal.SIGHUP)
    time.sleep(1.0)
    t = time.monotonic()
    e2.proc.send_signal(signal.SIGTERM)
    rc = e2.wait_exit(10)
    c.expect(
        rc is not None,
        "SIGHUP with a FIFO in place, then SIGTERM: "
        + (f"exit {rc} after {time.monotonic() - t:.1f} s" if rc is not None else "still running after 10 s"),
    )
    if rc is None:
        e2.proc.kill()


# 10. check_escape


def bad_bytes(data):
    return sorted({b for b in data if (b < 0x20 and b not in (0x0A, 0x09)) or b == 0x7F})


def case_check_escape(c):
    hostile = TinyHTTPServer(
        b"HTTP/1.1 302 Fo\x1b[31mund\x00\r\nLocation: http://x/\x1b]0;pwned\x07\r\nContent-Length: 0\r\n\r\n"
    )
    c.later(hostile.close)
    base = [c.binary, "check", f"--probe.http={hostile.url}", "--probe.trust-local-targets", "--no-path.monitor"]
    for label, argv in [("text", base), ("json", base + ["--output=json"])]:
        r = subprocess.run(argv, capture_output=True, env=harness.ENV, timeout=20)
        bad = bad_bytes(r.stdout + r.stderr)
        c.expect(not bad, f"{label} (exit {r.returncode}): control bytes {[hex(b) for b in bad]} (want none)")
        if label == "json":
            try:
                json.loads(r.stdout)
                c.expect(True, "json output parses")
            except ValueError as err:
                c.expect(False, f"json output does not parse: {err}")


# 15. transitions


def case_transitions(c):
    server = TinyHTTPServer(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    c.later(server.close)
    e = c.exporter([f"--probe.http={server.url}"], ["--probe.fail-after=1", "--probe.recover-after=1"])
    m = e.wait_metric(lambda m: m.total("reachability_state_transitions_total", to="full") >= 1, 10)
    c.expect(m is not None and m.total("reachability_state_transitions_total", to="full") >= 1, "full first")
    server.response = b"HTTP/1.1 500 Oops\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    e.wait_metric(lambda m: m.total("reachability_probe_failures_total", reason="http_status") >= 1, 10)
    server.close()
    e.wait_metric(lambda m: m.total("reachability_probe_failures_total", reason="refused") >= 1, 10)
    time.sleep(0.3)
    m = e.metrics()
    moved = {f"{lab['from']}->{lab['to']}": v for lab, v in m.series("reachability_state_transitions_total") if v}
    same = sum(v for lab, v in m.series("reachability_state_transitions_total") if lab["from"] == lab["to"])
    reasons = {lab["reason"]: v for lab, v in m.series("reachability_probe_failures_total")}
    c.expect(reasons.get("http_status") and reasons.get("refused"), f"probe failures by reason {reasons}")
    c.expect(
        same == 0 and moved.get("full->limited") == 1,
        f"transitions {moved} (want full->limited 1 and no limited->limited)",
    )


# 17. empty_probe_reload


def case_empty_probe_reload(c):
    lst = c.listener()
    cfg = probe_config(c, lst)
    original = open(cfg).read()
    # No probe flags here: they would make an empty file list valid. The file's probe is loopback.
    # With REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS set (the traffic rule) the old binary
    # refused this reload too; without it, it fell back to the public defaults, which a loopback
    # suite must not show.
    e = c.exporter([], [f"--config.file={cfg}"])
    e.wait_rounds(1)

    def reload_with(text):
        write(cfg, text)
        e.proc.send_signal(signal.SIGHUP)
        time.sleep(1.0)
        return e.metrics()

    for label, text in [("probes: []", "probes: []\n"), ("no probes key", "global:\n  fail_after: 3\n")]:
        m = reload_with(text)
        ok = m.value("reachability_exporter_config_last_reload_successful")
        info = [lab.get("target") for lab, _ in m.series("reachability_probe_info")]
        public = [p for p in PUBLIC_MARKERS if p in m.text]
        c.expect(ok == 0, f"{label}: last_reload_successful {ok} (want 0)")
        c.expect(info == ["file-probe"] and not public, f"{label}: probe_info {info}, public names {public}")
        m = reload_with(original)
        c.expect(m.value("reachability_exporter_config_last_reload_successful") == 1, "the original file reloads again")
