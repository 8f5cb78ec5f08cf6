"""The web security proof's load (websecurity.py): the slow clients that hold half-sent
requests or ClientHellos, and the exporter's RSS they are measured by. (The loopback TCP
listener its exporters probe is util.Listener.)"""

import socket


def rss_kib(pid):
    """A process's resident set size in KiB (/proc/PID/status)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


SLOW = 1000
RSS_PER_SLOW_KIB_LIMIT = 16


def slow_clients(port, tls, count=SLOW):
    """`count` connections from 250 loopback source addresses, each holding a half-sent request."""
    socks = []
    for i in range(count):
        s = socket.socket()
        s.bind((f"127.0.{10 + i // 250}.{i % 250 + 1}", 0))
        s.settimeout(5)
        s.connect(("127.0.0.1", port))
        if not tls:
            s.send(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        elif i % 2 == 0:
            s.send(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")  # the start of a ClientHello
        socks.append(s)
    return socks
