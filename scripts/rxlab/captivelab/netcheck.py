"""The network under the rows, checked without the exporter (`scripts/lab captive --network-only`,
and by every row through the helpers here): what the DHCP clients hand their scripts, what the
kernel passes on rtnetlink from the crafted RAs, that the router answers Router Solicitations,
the API and its hostile twins as a client sees them, captive and intercepting routers."""

import http.client
import ipaddress
import os
import socket
import ssl
import struct
import time

from ..faultlab.addresses import V4_NET
from ..truthlab.common import Result
from ..util import tail, wait_until
from . import api
from .clients import HOOK
from .net import PREF64

SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, RTNLGRP_ND_USEROPT, RTM_NEWNDUSEROPT = 270, 1, 20, 68


def nd_listener(bench):
    """A netlink socket in cli on RTNLGRP_ND_USEROPT (made there by the bench's worker)."""

    def make():
        s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
        s.bind((0, 0))
        s.setsockopt(SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, RTNLGRP_ND_USEROPT)
        return s

    return bench.worker.call(make)


def nd_options(sock, seconds):
    """{37: URI, 38: 'prefix/len'} of the ND user options received within `seconds`."""
    got, end = {}, time.time() + seconds
    while time.time() < end and len(got) < 2:
        sock.settimeout(max(0.05, end - time.time()))
        try:
            data = sock.recv(65536)
        except TimeoutError:
            break
        off = 0
        while off + 16 <= len(data):
            length, kind = struct.unpack_from("=IH", data, off)
            if kind == RTM_NEWNDUSEROPT and length >= 32:
                (opts_len,) = struct.unpack_from("=H", data, off + 18)
                opt = data[off + 32 : off + 32 + opts_len]
                if opt[:1] == b"\x25":
                    got[37] = opt[2:].rstrip(b"\0").decode(errors="replace")
                elif opt[:1] == b"\x26" and len(opt) >= 16:
                    plen = {0: 96, 1: 64, 2: 56, 3: 48, 4: 40, 5: 32}.get(struct.unpack_from("!H", opt, 2)[0] & 7)
                    got[38] = f"{ipaddress.IPv6Address(opt[4:16] + bytes(4))}/{plen}"
            off += max(16, (length + 3) & ~3)
    return got


def fetch(bench, host, path, port=443, tls=True, ca=None, timeout=4):
    """GET from cli: (status, content type, body length, error text)."""

    def get():
        try:
            if tls:
                context = ssl.create_default_context(cafile=ca or bench.ca)
                conn = http.client.HTTPSConnection(host, port, context=context, timeout=timeout)
            else:
                conn = http.client.HTTPConnection(host, port, timeout=timeout)
            conn.request("GET", path, headers={"Accept": api.CAPTIVE_TYPE})
            resp = conn.getresponse()
            size, deadline = 0, time.time() + timeout
            while True:  # a whole-transfer deadline: a slow server sends a byte within every read's
                chunk = resp.read1(1 << 16)
                size += len(chunk)
                if not chunk:
                    return resp.status, resp.getheader("Content-Type"), size, None
                if time.time() > deadline:
                    return resp.status, resp.getheader("Content-Type"), size, f"timed out after {size} B"
        except (OSError, ssl.SSLError, http.client.HTTPException) as e:
            return None, None, 0, f"{type(e).__name__}: {e}"[:100]

    return bench.worker.call(get, timeout + 10)


def network(bench):
    r = Result()
    # DHCPv4: a lease without option 114, then a renewal with it.
    bench.start_udhcpc()
    r.note("udhcpc lease: " + tail(bench.path("udhcpc-events.log"), 1).strip()[:80])
    bench.dhcp_options(f'114,"{api.API4}"')
    bench.renew()
    got = wait_until(lambda: "opt114=6" in tail(bench.path("udhcpc-events.log"), 1), 10, 0.1)
    line = tail(bench.path("udhcpc-events.log"), 1).strip()
    uri = bytes.fromhex(line.split("opt114=")[-1]).decode(errors="replace") if got else None
    r.note(f"udhcpc renewal: opt114 = {uri!r}")
    r.want(uri == api.API4, f"udhcpc's script did not get option 114: {line[:120]}")
    hooked = os.path.exists(bench.hook_file("dhcp4"))
    r.note(f"hook {HOOK} {'wrote' if hooked else 'did NOT write'} {bench.hook_file('dhcp4')}")
    r.want(hooked or not os.path.exists(HOOK), "the hook exists but wrote no lan0.dhcp4")
    # The API and its hostile twins, seen from cli.
    for what, args, want in [
        ("api v4", (api.LAN4, "/captive"), (200, api.CAPTIVE_TYPE)),
        ("api v6", (api.LAN6, "/captive"), (200, api.CAPTIVE_TYPE)),
        ("10 MB", (api.LAN4, "/h/big.json"), (200, api.CAPTIVE_TYPE)),
        ("wrong type", (api.LAN4, "/h/wrongtype.html"), (200, "text/html")),
        ("redirect", (api.LAN4, "/h/redirect"), (302, "text/html")),
        ("http://", (api.LAN4, "/h/true.json", 80, False), (200, api.CAPTIVE_TYPE)),
        ("other name", (api.LAN4, "/h/true.json", api.OTHER_NAME_PORT), (None, None)),
        ("rogue CA", (api.LAN4, "/h/true.json", api.ROGUE_PORT), (None, None)),
    ]:
        status, ctype, size, err = fetch(bench, *args)
        r.note(f"{what}: {status} {ctype} {size} B{' ' + err if err else ''}")
        r.want((status, ctype) == want, f"{what}: {status} {ctype}, want {want}")
    t0 = time.time()
    status, _, size, err = fetch(bench, api.LAN4, "/", port=api.SLOW_PORT, timeout=3)
    r.note(f"slow API: {err or status} after {time.time() - t0:.1f}s")
    r.want(bool(err) and "timed out" in err and size < 10, f"the slow API answered in time: {status} {size} B")
    # Captive: nothing forwarded, the router's API still there.
    bench.captive(True)
    dead = bench.worker.connect(V4_NET, 80, timeout=1.5)
    status = fetch(bench, api.LAN4, "/captive")[0]
    bench.captive(False)
    alive = bench.worker.connect(V4_NET, 80, timeout=1.5)
    r.note(f"captive: internet {dead}, API {status}; released: internet {alive}")
    r.want((dead, status, alive) == ("timeout", 200, "connected"), "the captive router does not behave")
    bench.intercept(True)
    status, ctype, _, err = fetch(bench, V4_NET, "/generate_204", port=80, tls=False)
    status6 = fetch(bench, api.LAN6.replace("42::1", "100::1"), "/generate_204", port=80, tls=False)[0]
    bench.intercept(False)
    r.note(f"intercepting: http://{V4_NET}/ {status}, IPv6 {status6}")
    r.want((status, status6) == (302, 302), "the intercepting router does not redirect both families")
    # RA: options 37 and 38 on rtnetlink in cli; a solicitation answered at once.
    sock = nd_listener(bench)
    try:
        t0 = bench.announce()
        first = nd_options(sock, 3)
        rs0 = bench.ra_counts()
        bench.solicit()
        again = nd_options(sock, 3)
        rs1 = bench.ra_counts()
    finally:
        sock.close()
    r.note(f"RA: rtnetlink {first} {time.time() - t0:.1f}s; RS answered: rs/ra {rs0} -> {rs1}, again {again}")
    r.want(first == {37: api.API4, 38: PREF64}, f"RA options on rtnetlink: {first}")
    r.want(again == first and rs1[0] > rs0[0] and rs1[1] > rs0[1], "a Router Solicitation was not answered")
    # DHCPv6: option 103 through dhclient -6.
    bench.dhcp_options(f'114,"{api.API4}"', f'option6:103,"{api.API6}"')
    events = bench.start_dhclient6()
    got = wait_until(lambda: "cp=https" in tail(events, 3), 15, 0.1)
    r.note(
        "dhclient -6: " + (tail(events, 1).strip()[:100] if got else f"nothing: {tail(bench.path('dhclient6.log'), 2)}")
    )
    r.want(got and api.API6 in tail(events, 3), "dhclient -6 did not hand option 103 to its script")
    return r
