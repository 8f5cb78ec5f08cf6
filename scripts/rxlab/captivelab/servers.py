"""The captive lab's own servers, one module run in a namespace (`python3 -m
rxlab.captivelab.servers KIND ...`), each printing `ready` once it works:

- `ra IFNAME`: the router's Router Advertisements, crafted (Debian 12's radvd cannot send RFC 8910
  option 37): a raw ICMPv6 socket on IFNAME. Commands on stdin, one a line, each answered with
  one line on stdout:
    `announce URI|- PREF64|-`  arms the RA (option 37 with URI, option 38 with PREF64, e.g.
                               2001:db8:64::/96; `-` leaves one out) and sends it to ff02::1 now
    `arm URI|- PREF64|-`       arms it without sending: only a solicitation gets it
    `disarm`                   Router Solicitations go unanswered again
    `count`                    `rs N ra M`: solicitations received, advertisements sent
  While armed, every Router Solicitation (ICMPv6 133) on IFNAME is answered at once with the
  armed RA to ff02::1. The RA says router lifetime 1800 s and carries the router's link-layer
  address (option 1, as real routers' do), nothing else (no prefix, no hop limit, no MTU). Each RS and RA is logged on stderr with its time.
- `drip CERT KEY PORT`: a slow RFC 8908 API over TLS on [::]:PORT: the head at once
  (200, application/captive+json, Content-Length), then the body one byte a second.
No name lookups: the namespaces have no resolver."""

import ipaddress
import os
import select
import socket
import ssl
import struct
import sys
import threading
import time

ICMP6_FILTER = 1  # linux/icmpv6.h ICMPV6_FILTER, level IPPROTO_ICMPV6
RS, RA = 133, 134
ROUTER_LIFETIME = 1800
PLC = {96: 0, 64: 1, 56: 2, 48: 3, 40: 4, 32: 5}  # RFC 8781 prefix length code
PREF64_LIFETIME = 1800


def option37(uri):
    """RFC 8910 §2.3: type 37, length in 8-octet units, the URI padded with NULs."""
    data = uri.encode()
    units = (2 + len(data) + 7) // 8
    return struct.pack("!BB", 37, units) + data + b"\0" * (units * 8 - 2 - len(data))


def option38(prefix):
    """RFC 8781 §4: type 38, length 2, scaled lifetime (8 s units) << 3 | PLC, 96 bits of prefix."""
    net = ipaddress.IPv6Network(prefix)
    field = ((PREF64_LIFETIME // 8) << 3) | PLC[net.prefixlen]
    return struct.pack("!BBH", 38, 2, field) + net.network_address.packed[:12]


def advertisement(uri, pref64, mac):
    head = struct.pack("!BBHBBHII", RA, 0, 0, 0, 0, ROUTER_LIFETIME, 0, 0)  # the kernel fills the checksum
    slla = struct.pack("!BB", 1, 1) + mac
    return head + slla + (option37(uri) if uri else b"") + (option38(pref64) if pref64 else b"")


def link_address(ifname):
    with open(f"/sys/class/net/{ifname}/address") as f:
        return bytes.fromhex(f.read().strip().replace(":", ""))


def ra(ifname):
    ifindex = socket.if_nametoindex(ifname)
    s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, ifname.encode())
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 255)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_UNICAST_HOPS, 255)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, ifindex)
    blocked = [0xFFFFFFFF] * 8
    blocked[RS >> 5] &= ~(1 << (RS & 31))
    s.setsockopt(socket.IPPROTO_ICMPV6, ICMP6_FILTER, struct.pack("8I", *blocked))
    try:  # a forwarding router is in ff02::2 already
        mreq = socket.inet_pton(socket.AF_INET6, "ff02::2") + struct.pack("@I", ifindex)
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_JOIN_GROUP, mreq)
    except OSError:
        pass
    armed, rs_count, ra_count = None, 0, 0

    def send(why):
        """Sends the armed RA; a link just up may not route multicast yet: retried for 3 s."""
        nonlocal ra_count
        for attempt in range(30):
            try:
                s.sendto(armed, ("ff02::1", 0, 0, ifindex))
                break
            except OSError as e:
                if attempt == 29:
                    print(f"{time.time():.3f} ra NOT sent ({why}): {e}", file=sys.stderr, flush=True)
                    return False
                time.sleep(0.1)
        ra_count += 1
        print(f"{time.time():.3f} ra sent ({why}, {len(armed)} bytes)", file=sys.stderr, flush=True)
        return True

    print("ready", flush=True)
    pending = b""
    while True:
        readable, _, _ = select.select([s, sys.stdin], [], [], 5)
        if s in readable:
            data, source = s.recvfrom(2048)
            if data and data[0] == RS:
                rs_count += 1
                print(f"{time.time():.3f} rs from {source[0]}", file=sys.stderr, flush=True)
                if armed:
                    send(f"answering {source[0]}")
        if sys.stdin not in readable:
            continue
        chunk = os.read(sys.stdin.fileno(), 4096)
        if not chunk:
            return
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            words = line.decode(errors="replace").split()
            if words[:1] == ["announce"] and len(words) == 3:
                uri, pref64 = (None if w == "-" else w for w in words[1:])
                armed = advertisement(uri, pref64, link_address(ifname))
                print(f"sent {time.time():.3f}" if send("announce") else "error: not sent", flush=True)
            elif words[:1] == ["arm"] and len(words) == 3:
                uri, pref64 = (None if w == "-" else w for w in words[1:])
                armed = advertisement(uri, pref64, link_address(ifname))
                print("armed", flush=True)
            elif words[:1] == ["disarm"]:
                armed = None
                print("disarmed", flush=True)
            elif words[:1] == ["count"]:
                print(f"rs {rs_count} ra {ra_count}", flush=True)
            else:
                print(f"unknown {line.strip()!r}", flush=True)


SLOW_BODY = b'{"captive": true, "user-portal-url": "https://192.168.42.1/rxhostile-slow"}'


def drip_one(context, conn):
    try:
        conn.settimeout(5)
        tls = context.wrap_socket(conn, server_side=True)
        head, deadline = b"", time.time() + 5
        while b"\r\n\r\n" not in head and len(head) < 8192 and time.time() < deadline:
            chunk = tls.recv(1024)
            if not chunk:
                return
            head += chunk
        print(f"{time.time():.3f} drip request {head.split(b' ')[1][:80]!r}", file=sys.stderr, flush=True)
        tls.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/captive+json\r\nCache-Control: no-store\r\n"
            + f"Content-Length: {len(SLOW_BODY)}\r\nConnection: close\r\n\r\n".encode()
        )
        for i in range(len(SLOW_BODY)):
            tls.sendall(SLOW_BODY[i : i + 1])
            time.sleep(1)
    except (OSError, ssl.SSLError):
        pass
    finally:
        conn.close()


def drip(cert, key, port):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    srv = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    srv.bind(("::", port))
    srv.listen(16)
    print("ready", flush=True)
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=drip_one, args=(context, conn), daemon=True).start()


if __name__ == "__main__":
    kind, rest = sys.argv[1], sys.argv[2:]
    if kind == "ra":
        ra(rest[0])
    elif kind == "drip":
        drip(rest[0], rest[1], int(rest[2]))
    else:
        sys.exit(f"unknown server {kind!r}")
