"""The cases about the HTTP front: unread pipelining, descriptor limits, Content-Length,
Accept-Encoding, Expect, TLS 1.2 suites (basic auth's floods and timing are in cases_auth.py)."""

import fcntl
import re
import socket
import struct
import subprocess
import termios
import time

from .. import certs
from . import harness
from .context import fmt, lifecycle_flag, probe_config
from .harness import raw_exchange, status_of, write
from .servers import close_all, open_many

# 6. pipelining


def one_response_size(e):
    raw = raw_exchange(e.host, e.port, b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", timeout=5)
    return len(raw)


def readable(sock):
    """Bytes waiting in a socket's receive queue (FIONREAD)."""
    buf = struct.pack("i", 0)
    return struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.FIONREAD, buf))[0]


def server_send_queues(port):
    """tx_queue of every established IPv4 socket whose local port is `port` (/proc/net/tcp):
    the bytes the exporter has written that its kernel still holds for the peer."""
    queues = []
    with open("/proc/net/tcp") as f:
        next(f)
        for line in f:
            fields = line.split()
            local, state, queue = fields[1], fields[3], fields[4]
            if state == "01" and int(local.split(":")[1], 16) == port:
                queues.append(int(queue.split(":")[0], 16))
    return queues


def case_pipelining(c):
    lst = c.listener()
    e = c.exporter([f"--probe.tcp={lst.target}"])
    e.wait_rounds(1)
    size = one_response_size(e)
    request = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
    socks = []
    c.later(lambda: close_all(socks))
    t0 = time.monotonic()
    for i in range(100):
        s = socket.create_connection((e.host, e.port), timeout=3, source_address=(f"127.0.1.{i + 1}", 0))
        socks.append(s)
        s.sendall(request * 300)
    time.sleep(0.5)
    t = time.monotonic()
    try:
        st = e.request("GET", "/metrics", timeout=10)[0]
    except OSError as err:
        st = type(err).__name__
    dt = time.monotonic() - t
    c.expect(st == 200 and dt < 3, f"a scrape during the attack: {st} in {dt:.2f} s (want 200 in < 3 s)")
    time.sleep(max(0.0, 2.0 - (time.monotonic() - t0)))
    # What the exporter keeps queued per connection is its doing; what the client's own receive
    # queue holds (~128 KiB by default on loopback, whatever the server does) is reported only.
    queued = max(server_send_queues(e.port) or [0])
    worst = max(readable(s) for s in socks)
    c.expect(
        queued <= 2.5 * size,
        f"after 2 s the exporter still holds up to {queued} bytes for an attacker "
        f"= {queued / size:.1f} responses of {size} bytes (want <= ~2); readable at the attacker: "
        f"up to {worst} bytes = {worst / size:.1f} responses (its receive queue, not asserted)",
    )


# 7. fd_limit


def case_fd_limit(c):
    # A descriptor limit too small for the configuration: a clean exit at start. The targets
    # are listeners with a full accept queue, so each connect holds its descriptor until the
    # timeout and the probes really need 110 at once.
    targets, fill = [], []
    c.later(lambda: close_all(fill))
    for _ in range(110):
        t = c.listener(backlog=0, accept=False)
        targets.append(t)
        for _ in range(2):
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", t.port))
            fill.append(s)
    small = c.exporter(
        [f"--probe.tcp={t.target}" for t in targets],
        wrap=lambda a: harness.with_nofile(64, a),
        wait=False,
        name="nofile64",
    )
    rc = small.wait_exit(10)
    err = small.stderr()
    if rc is None:
        state = re.findall(r'msg="state changed" scope=overall from=\S+ to=("[^"]*"|\S+)', err)
        c.expect(
            False,
            f"ulimit -n 64, 110 probes: still running after 10 s (verdict {state[-1] if state else '?'})"
            " (want an exit > 0 naming the limit)",
        )
    else:
        said = [ln for ln in err.splitlines() if re.search(r"descriptor|open files|open-file|nofile", ln, re.I)]
        c.expect(
            rc > 0 and said,
            f"ulimit -n 64, 110 probes: exit {rc}, "
            f"{said[-1][-160:] if said else 'no line naming the limit: ' + harness.tail(err, 120)!r}"
            " (want > 0, not a signal, naming the limit)",
        )
    small.stop()
    close_all(fill)
    for t in targets:
        t.close()

    # Hard limit 300 below --web.max-connections 1024: 1,250 half-sent requests do not starve the probe.
    lst = c.listener()
    e = c.exporter(
        [f"--probe.tcp={lst.target}"],
        ["--web.max-connections=1024"],
        wrap=lambda a: harness.with_nofile(300, a),
        name="nofile300",
    )
    m0 = e.wait_rounds(2)
    f0 = m0.total("reachability_probe_failures_total", target=lst.target)
    r0 = m0.total("reachability_rounds_total")
    lines0 = len(e.stderr().splitlines())
    sources = [f"127.0.{20 + i // 250}.{i % 250 + 1}" for i in range(250)]
    flood = open_many(e.port, 1250, b"GET /metrics HTTP/1.1\r\n", sources)
    c.later(lambda: close_all(flood))
    seen = []
    end = time.monotonic() + 6.0
    while time.monotonic() < end:
        t = time.monotonic()
        try:
            seen.append(e.metrics(timeout=2).value("reachability_probe_success", target=lst.target))
        except Exception:
            seen.append("no answer")
        time.sleep(max(0.0, 1.0 - (time.monotonic() - t)))
    lines = len(e.stderr().splitlines()) - lines0
    close_all(flood)
    m1 = e.wait_metric(lambda m: True, 5)
    f1 = m1.total("reachability_probe_failures_total", target=lst.target) if m1 else None
    r1 = m1.total("reachability_rounds_total") if m1 else None
    failures = None if f1 is None else f1 - f0
    c.expect(
        failures == 0 and r1 is not None and r1 - r0 >= 4,
        f"{len(flood)} half-sent requests open for 6 s: probe failures +{fmt(failures, digits=0)} in "
        f"+{fmt(None if r1 is None else r1 - r0, digits=0)} rounds (want 0 in >= 4)",
    )
    c.expect(all(v in (1.0, "no answer") for v in seen), f"probe_success during the flood: {seen}")
    c.expect(lines < 30, f"{lines} log lines during the flood (want < 30)")


# 12. content_length


def case_content_length(c):
    lst = c.listener()
    cfg = probe_config(c, lst)
    e = c.exporter([], [f"--config.file={cfg}"] + lifecycle_flag(c))
    tries = [
        (
            "POST /-/reload CL 3 + CL 5",
            b"POST /-/reload HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
            b"Content-Length: 5\r\nConnection: close\r\n\r\nabcde",
            400,
        ),
        (
            "GET /metrics CL 3 + CL 5",
            b"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
            b"Content-Length: 5\r\nConnection: close\r\n\r\nabcde",
            400,
        ),
        (
            "GET /metrics CL +3",
            b"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: +3\r\nConnection: close\r\n\r\nabc",
            400,
        ),
        (
            "POST /-/reload CL +3",
            b"POST /-/reload HTTP/1.1\r\nHost: x\r\nContent-Length: +3\r\nConnection: close\r\n\r\nabc",
            400,
        ),
        (
            "GET /metrics CL 3",
            b"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc",
            200,
        ),
    ]
    for label, data, want in tries:
        st = status_of(raw_exchange(e.host, e.port, data, timeout=5, until_close=False))
        c.expect(st == want, f"{label} -> {st} (want {want})")


# 13. accept_encoding


def case_accept_encoding(c):
    lst = c.listener()
    e = c.exporter([f"--probe.tcp={lst.target}"])
    for value, gzip in [("*, gzip;q=0", False), ("gzip;q=0, *", False), ("*", True), ("gzip", True)]:
        st, hdrs, _ = e.request("GET", "/metrics", {"Accept-Encoding": value})
        got = "gzip" in hdrs.get("content-encoding", "")
        c.expect(
            st == 200 and got == gzip,
            f"'{value}' -> {st} {'gzip' if got else 'identity'} (want {'gzip' if gzip else 'identity'})",
        )


# 14. expect_continue


def case_expect_continue(c):
    lst = c.listener()
    cfg = probe_config(c, lst)
    e = c.exporter([], [f"--config.file={cfg}"] + lifecycle_flag(c))
    s = socket.create_connection((e.host, e.port), timeout=5)
    c.later(s.close)
    s.sendall(b"POST /-/reload HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n")
    s.settimeout(1.0)
    t = time.monotonic()
    try:
        first = s.recv(65536)
    except TimeoutError:
        first = b""
    dt = time.monotonic() - t
    interim = first.startswith(b"HTTP/1.1 100 Continue\r\n")
    c.expect(interim, f"before the body: {first[:40]!r} after {dt:.2f} s (want 'HTTP/1.1 100 Continue' within 1 s)")
    s.sendall(b"{}")
    data = first.split(b"\r\n\r\n", 1)[1] if interim else first
    s.settimeout(10)
    end = time.monotonic() + 10
    while b"\r\n\r\n" not in data and time.monotonic() < end:
        try:
            b = s.recv(65536)
        except TimeoutError:
            break
        if not b:
            break
        data += b
    st = status_of(data)
    c.expect(st == 200, f"final response after the body: {st} (want 200)")


# 16. tls12_ciphers


def case_tls12_ciphers(c):
    lst = c.listener()
    cert, key = certs.make_self_signed_rsa(c.tmp)
    web = c.path("web.yml")
    write(web, f"tls_server_config:\n  cert_file: {cert}\n  key_file: {key}\n")
    e = c.exporter([f"--probe.tcp={lst.target}"], [f"--web.config.file={web}"])
    for cipher, ok in [("AES128-SHA", False), ("ECDHE-RSA-AES128-SHA", False), ("ECDHE-RSA-AES128-GCM-SHA256", True)]:
        r = subprocess.run(
            [
                "openssl",
                "s_client",
                "-connect",
                f"127.0.0.1:{e.port}",
                "-tls1_2",
                "-cipher",
                f"{cipher}:@SECLEVEL=0",
                "-servername",
                "localhost",
            ],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=15,
        )
        m = re.search(r"Cipher is (\S+)", r.stdout)
        agreed = m.group(1) if m and m.group(1) != "(NONE)" else None
        c.expect(
            (agreed == cipher) == ok,
            f"{cipher}: {'agreed' if agreed else 'refused'} (want {'agreed' if ok else 'refused'})",
        )
