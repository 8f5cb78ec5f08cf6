"""The second review's cases about waits that hold shared things (issue #41): reloads parked
behind a slow round on the web workers, a trickled body re-parsing its head, a notify socket
nobody reads holding up shutdown."""

import errno
import os
import socket
import statistics
import threading
import time

from . import harness
from .context import lifecycle_flag
from .harness import write
from .servers import close_all, open_many

# [6] reload_workers


def slow_target(c):
    """A loopback listener whose accept queue is full: a connect to it hangs until the probe's
    timeout (the SYN is dropped), so a round lasts that long."""
    t = c.listener(backlog=0, accept=False)
    fill = []
    c.later(lambda: close_all(fill))
    for _ in range(2):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", t.port))
        fill.append(s)
    time.sleep(0.1)
    return t


def case_reload_workers(c):
    """40 POST /-/reload at once while a round is slow (a probe that times out after 4 s):
    each waited for the round on a web worker of its own, and /metrics found none free. Wanted:
    a scrape answered within 2 s meanwhile, and the 40 requests coalesced into a few reloads."""
    flag = lifecycle_flag(c)
    if not flag:
        c.expect(False, "--web.enable-lifecycle unknown to this binary")
        return
    slow = slow_target(c)
    cfg = c.path("config.yml")
    write(cfg, f'probes:\n  - {{name: slow, type: tcp, target: "{slow.target}"}}\n')
    e = c.exporter([], [f"--config.file={cfg}", "--probe.interval=8s", "--probe.timeout=4s"] + flag)
    # The first round is in flight (its probe hangs 4 s). The file now names a target that
    # answers at once: after the first reload, each further one costs little and shows in the log.
    fast = c.listener()
    write(cfg, f'probes:\n  - {{name: fast, type: tcp, target: "{fast.target}"}}\n')
    before = e.stderr().count("configuration reloaded")
    answers = []
    lock = threading.Lock()

    def post():
        try:
            st = e.request("POST", "/-/reload", timeout=8)[0]
        except OSError as err:
            st = type(err).__name__
        with lock:
            answers.append(st)

    threads = [threading.Thread(target=post, daemon=True) for _ in range(40)]
    for t in threads:
        t.start()
    time.sleep(0.5)
    scrapes = []
    for _ in range(3):
        t0 = time.monotonic()
        try:
            st = e.request("GET", "/metrics", timeout=2)[0]
        except OSError as err:
            st = type(err).__name__
        scrapes.append((st, time.monotonic() - t0))
        time.sleep(0.3)
    c.expect(
        all(st == 200 and dt < 2 for st, dt in scrapes),
        "GET /metrics while 40 reloads wait for the round: "
        + ", ".join(f"{st} in {dt:.2f} s" for st, dt in scrapes)
        + " (want 200 within 2 s)",
    )
    for t in threads:
        t.join(10)
    time.sleep(0.5)
    reloads = e.stderr().count("configuration reloaded") - before
    counted = {}
    for st in answers:
        counted[st] = counted.get(st, 0) + 1
    c.expect(
        reloads <= 3,
        f"40 POSTs answered {dict(sorted(counted.items(), key=str))}; reloads logged: {reloads} (want <= 3: coalesced)",
    )
    c.expect(reloads >= 1 or 200 in counted, "at least one reload ran")


# [8] trickle_body


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def trickle(c, e, head, seconds):
    """200 clients each send `head`, then a body byte every 10 ms for `seconds`, while a clean
    client scrapes; (clients, bytes sent, exporter cores, scrape times)."""
    sources = [f"127.0.4.{i + 1}" for i in range(20)]
    socks = open_many(e.port, 200, head, sources)
    c.later(lambda: close_all(socks))
    scrapes = []
    stop = threading.Event()

    def scraper():
        while not stop.is_set():
            t0 = time.monotonic()
            try:
                st = e.request("GET", "/metrics", timeout=3)[0]
            except OSError:
                st = None
            dt = time.monotonic() - t0
            scrapes.append(dt if st == 200 else 3.0)
            time.sleep(max(0.0, 0.25 - dt))

    time.sleep(0.3)  # the heads are in
    cpu0, t0 = cpu_seconds(e.proc.pid), time.monotonic()
    th = threading.Thread(target=scraper, daemon=True)
    th.start()
    sent = 0
    end = t0 + seconds
    tick = t0
    while time.monotonic() < end and sent < 200 * 1000:
        for s in socks:
            try:
                sent += s.send(b"a")
            except (BlockingIOError, InterruptedError):
                pass
            except OSError as err:
                if err.errno not in (errno.EPIPE, errno.ECONNRESET):
                    raise
        tick += 0.01
        time.sleep(max(0.0, tick - time.monotonic()))
    cpu1, t1 = cpu_seconds(e.proc.pid), time.monotonic()
    stop.set()
    th.join(5)
    close_all(socks)
    return len(socks), sent, (cpu1 - cpu0) / (t1 - t0), scrapes


def case_trickle_body(c):
    """200 clients each send a 15 KB request head (90 headers, under the 16 KiB and 100-header
    limits) announcing a body, then trickle the body a byte every 10 ms: the head was parsed
    again at every read (scrapes took seconds; 1.9 of 2 cores here). Wanted: scrapes from a
    clean client stay fast (median < 0.5 s), and the exporter's CPU behind the big heads stays
    under 2.2 times its CPU behind 68-byte heads, measured first in the same run: each read costs
    a wake-up whatever the head (0.5 to 0.8 of a core at this rate on 2 cores), so the two stay
    close (1.2 to 1.8 times in 12 runs); re-parsing made it 1.9 cores, 2.7 times and more. (An
    absolute bound of 1.2 cores failed once at 1.25 beside 0.82 under CI's load; the build of
    the session before measured 0.93 to 1.04 cores here, as the build after did.)"""
    lst = c.listener()
    e = c.exporter([f"--probe.tcp={lst.target}"])
    e.wait_rounds(1)
    small = b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 2000\r\nX-Pad: yy\r\n\r\n"
    filler = "x" * 150
    head = "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 2000\r\n"
    head += "".join(f"X-Pad-{i:02d}: {filler}\r\n" for i in range(90)) + "\r\n"
    head = head.encode()
    _, _, base, _ = trickle(c, e, small, 2.5)
    clients, sent, cores, scrapes = trickle(c, e, head, 2.5)
    med = statistics.median(scrapes) if scrapes else float("inf")
    c.expect(clients >= 150, f"{clients}/200 clients sent a {len(head)} byte head, then {sent} body bytes")
    c.expect(
        med < 0.5,
        f"median scrape during the trickle {med * 1000:.0f} ms over {len(scrapes)} scrapes (want < 500 ms)",
    )
    c.expect(
        cores < 2.2 * base,
        f"exporter CPU {cores:.2f} cores behind {len(head)} byte heads, "
        f"{base:.2f} behind {len(small)} byte heads (want under 2.2 times: {cores / base if base else 0:.2f}x)",
    )


# [9] notify_blocked


def case_notify_blocked(c):
    """NOTIFY_SOCKET names a datagram socket nobody reads, its queue already full: a blocking
    sd_notify write (READY=1 at start, STOPPING=1 at SIGTERM) held shutdown. Wanted: exited
    within 5 s of SIGTERM."""
    path = c.path("notify.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    c.later(server.close)
    server.bind(path)
    filler = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    c.later(filler.close)
    filler.setblocking(False)
    queued = 0
    full = False
    while queued < 100_000:
        try:
            filler.sendto(b"X=" + b"f" * 62, path)
            queued += 1
        except BlockingIOError:
            full = True
            break
    c.expect(full, f"notify socket filled: {queued} datagrams until EAGAIN")
    lst = c.listener()
    e = c.exporter(
        [f"--probe.tcp={lst.target}"], wrap=lambda a: ["env", f"NOTIFY_SOCKET={path}"] + a, wait=False, name="notify"
    )
    t = time.monotonic()
    try:
        e.wait_listening(3)
        started = f"listening after {time.monotonic() - t:.1f} s"
    except RuntimeError:
        started = "not listening within 3 s (blocked at READY=1?)" if e.alive() else "exited"
    c.expect(e.alive(), f"started: {started}")
    t = time.monotonic()
    e.proc.terminate()
    rc = e.wait_exit(5)
    if rc is None:
        e.proc.kill()
        e.wait_exit(5)
    c.expect(
        rc is not None,
        "SIGTERM: "
        + (f"exit {rc} after {time.monotonic() - t:.1f} s" if rc is not None else "still running after 5 s"),
    )
    harness.stop_process(e.proc, grace=0.1)
