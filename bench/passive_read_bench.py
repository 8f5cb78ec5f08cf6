#!/usr/bin/env python3
"""Helpers for bench/passive_read_bench.sh (run inside the namespaces it creates).

serve ADDR PORTS PROBE_PORT EVERY LIFETIME   the far ends: accept on ADDR:PORT for each of PORTS
    (comma-separated); every 20th accepted connection (5 %) gets 32 bytes every EVERY seconds
    (a trickle), the rest nothing; PROBE_PORT accepts and closes at once (the exporter's probe
    target). Prints "ready" when listening. Exits after LIFETIME seconds.
connect SRC DST PORTS N LIFETIME             the near ends: N connections from SRC to DST, spread
    over PORTS, opened in batches of 256 (each batch established before the next, at most 30 s
    a batch); prints "connected N SECONDS" and keeps them open, reading what arrives, until
    killed or LIFETIME seconds.
scrape URL SECONDS PERIOD                    scrapes URL every PERIOD seconds for SECONDS; prints
    one line per distinct reachability_passive_read_duration_seconds value (a new read), then
    "sockets N" and "connections STATE N" (scope overall) from the last scrape.
ss READS GAP ARGS...                         runs `ss ARGS` READS times (output to /dev/null), GAP
    seconds apart; prints "wall_mean_ms wall_max_ms cpu_ms_per_read" (CPU: getrusage of the
    children, user + system).
"""

import os
import re
import resource
import selectors
import socket
import subprocess
import sys
import time
import urllib.request


def serve(addr: str, ports: str, probe_port: str, every: str, lifetime: str) -> None:
    sel = selectors.DefaultSelector()
    for p in [int(x) for x in ports.split(",")] + [int(probe_port)]:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((addr, p))
        s.listen(4096)
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, "probe" if p == int(probe_port) else "listen")
    print("ready", flush=True)
    trickle: list[socket.socket] = []
    accepted = 0
    period = float(every)
    end = time.monotonic() + float(lifetime)
    next_send = time.monotonic() + period
    while time.monotonic() < end:
        for key, _ in sel.select(timeout=max(0.0, next_send - time.monotonic())):
            if key.data in ("listen", "probe"):
                for _ in range(4096):  # bounded: at most a backlog's worth per wake-up
                    try:
                        c, _ = key.fileobj.accept()
                    except BlockingIOError:
                        break
                    if key.data == "probe":
                        c.close()
                        continue
                    c.setblocking(False)
                    if accepted % 20 == 0:
                        trickle.append(c)
                    accepted += 1
                    sel.register(c, selectors.EVENT_READ, "conn")
            else:
                try:
                    data = key.fileobj.recv(4096)
                except OSError:
                    data = b""
                if not data:
                    sel.unregister(key.fileobj)
                    key.fileobj.close()
        if time.monotonic() >= next_send:
            for c in trickle:
                try:
                    c.send(b"x" * 32)
                except OSError:
                    pass
            next_send = time.monotonic() + period


def connect(src: str, dst: str, ports: str, n: str, lifetime: str) -> None:
    plist = [int(x) for x in ports.split(",")]
    total = int(n)
    sel = selectors.DefaultSelector()
    conns: list[socket.socket] = []
    t0 = time.monotonic()
    for start in range(0, total, 256):
        pending = {}
        for i in range(start, min(total, start + 256)):
            c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            c.bind((src, 0))
            c.setblocking(False)
            c.connect_ex((dst, plist[i % len(plist)]))
            pending[c.fileno()] = c
            sel.register(c, selectors.EVENT_WRITE)
        deadline = time.monotonic() + 30
        while pending and time.monotonic() < deadline:
            for key, _ in sel.select(timeout=1):
                c = pending.pop(key.fd)
                sel.unregister(c)
                err = c.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if err:
                    sys.exit(f"connect: {os.strerror(err)}")
                conns.append(c)
        if pending:
            sys.exit(f"connect: {len(pending)} not established after 30 s")
    print(f"connected {len(conns)} {time.monotonic() - t0:.1f}", flush=True)
    for c in conns:
        sel.register(c, selectors.EVENT_READ)
    end = time.monotonic() + float(lifetime)
    while time.monotonic() < end:
        for key, _ in sel.select(timeout=1):
            try:
                key.fileobj.recv(4096)
            except OSError:
                pass


def scrape(url: str, seconds: str, period: str) -> None:
    reads: list[str] = []
    last = ""
    end = time.monotonic() + float(seconds)
    while time.monotonic() < end:
        t = time.monotonic()
        with urllib.request.urlopen(url, timeout=10) as r:
            last = r.read().decode()
        m = re.search(r"^reachability_passive_read_duration_seconds (\S+)$", last, re.M)
        if m and (not reads or reads[-1] != m.group(1)):
            reads.append(m.group(1))
        time.sleep(max(0.0, float(period) - (time.monotonic() - t)))
    for v in reads:
        print("read", v)
    m = re.search(r"^reachability_passive_sockets (\S+)$", last, re.M)
    print("sockets", m.group(1) if m else "-")
    for state in ("receiving", "quiet", "stalled"):
        m = re.search(r'^reachability_passive_connections\{scope="overall",state="' + state + r'"\} (\S+)$', last, re.M)
        print("connections", state, m.group(1) if m else "-")


def ss(reads: str, gap: str, *args: str) -> None:
    walls = []
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    for _ in range(int(reads)):
        t = time.monotonic()
        subprocess.run(["ss", *args], stdout=subprocess.DEVNULL, check=True)
        walls.append(time.monotonic() - t)
        time.sleep(float(gap))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(f"{sum(walls) * 1000 / len(walls):.3f} {max(walls) * 1000:.3f} {cpu * 1000 / len(walls):.3f}")


if __name__ == "__main__":
    commands = {"serve": serve, "connect": connect, "scrape": scrape, "ss": ss}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        sys.exit(__doc__)
    commands[sys.argv[1]](*sys.argv[2:])
