# Usage (root): create the namespace described in the header of the output, then
#   ip netns exec NS python3 capture_netlink_fixtures.py NS > ../ReachabilityTests/NetlinkFixtures.swift
# Captures real rtnetlink messages inside a throwaway namespace and prints them as a Swift fixtures file.
import socket, struct, subprocess, sys, select
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
s.bind((0, 0x1 | 0x10 | 0x40 | 0x100 | 0x400))
def ip(*a): subprocess.run(["ip", *a], check=True)
def msgs(buf):
    off = 0
    while off + 16 <= len(buf):
        ln, ty = struct.unpack_from("=IH", buf, off)
        if ln < 16: break
        yield ty, bytes(buf[off:off+ln]); off += (ln + 3) & ~3
def request(ty, body, flags=0x301, seq=7):
    s.send(struct.pack("=IHHII", 16+len(body), ty, flags, seq, 0) + body)
def dump(ty, body):
    request(ty, body); out=[]
    while True:
        for t, m in msgs(s.recv(65536)):
            out.append(m)
            if t in (2, 3): return out
def drain():
    out=[]
    while select.select([s],[],[],0.2)[0]:
        out += [m for t, m in msgs(s.recv(65536))]
    return out
def attrs(m, off):
    res = {}
    while off + 4 <= len(m):
        ln, ty = struct.unpack_from("=HH", m, off)
        if ln < 4: break
        res[ty & 0x3fff] = m[off+4:off+ln]; off += (ln + 3) & ~3
    return res
links = dump(18, struct.pack("=BBHiII", 0,0,0,0,0,0))
addrs = dump(22, struct.pack("=BBBBI", 0,0,0,0,0))
routes = dump(26, struct.pack("=BBBBBBBBI", 0,0,0,0,0,0,0,0,0))
def link(name):
    for m in links:
        if struct.unpack_from("=H", m, 4)[0] == 16 and attrs(m, 32).get(3, b"").rstrip(b"\0") == name.encode(): return m
def addr(fam, scope, prefix):
    for m in addrs:
        if struct.unpack_from("=H", m, 4)[0] != 20: continue
        f, p, fl, sc, idx = struct.unpack_from("=BBBBI", m, 16)
        if f == fam and sc == scope and p == prefix: return m
def route(fam, table, typ, metric=None, multipath=False):
    for m in routes:
        if struct.unpack_from("=H", m, 4)[0] != 24: continue
        f, dl, sl, tos, tb, pr, sc, ty = struct.unpack_from("=BBBBBBBB", m, 16)
        a = attrs(m, 28)
        t = struct.unpack("=I", a[15])[0] if 15 in a else tb
        mt = struct.unpack("=I", a[6])[0] if 6 in a else 0
        if f == fam and dl == 0 and t == table and ty == typ and (metric is None or mt == metric) and ((9 in a) == multipath): return m
fx = {}
fx["linkLoopback"] = link("lo"); fx["linkVeth"] = link("va"); fx["linkTun"] = link("tun0"); fx["linkBridge"] = link("br0")
fx["addressLoopbackV4"] = addr(2, 254, 8); fx["addressV4"] = addr(2, 0, 24); fx["addressV6Global"] = addr(10, 0, 64); fx["addressV6LinkLocal"] = addr(10, 253, 64)
fx["routeDefaultV4"] = route(2, 254, 1, 5); fx["routeDefaultV6"] = route(10, 254, 1, 7); fx["routeMultipathV4"] = route(2, 254, 1, 9, True)
fx["routeUnreachableV4"] = route(2, 254, 7); fx["routeLocalTable"] = next(m for m in routes if struct.unpack_from("=H", m, 4)[0] == 24 and m[20] == 255)
fx["done"] = routes[-1]
drain(); ip("-n", sys.argv[1], "link", "set", "vb", "down"); ev = drain()
fx["eventVethNoCarrier"] = next(m for m in ev if struct.unpack_from("=H", m, 4)[0] == 16 and attrs(m, 32).get(3, b"").startswith(b"va"))
ip("-n", sys.argv[1], "addr", "del", "192.0.2.2/24", "dev", "va"); ev = drain()
fx["eventDeletedAddressV4"] = next(m for m in ev if struct.unpack_from("=H", m, 4)[0] == 21)
ip("-n", sys.argv[1], "link", "del", "tun0"); ev = drain()
fx["eventDeletedLinkTun"] = next(m for m in ev if struct.unpack_from("=H", m, 4)[0] == 17)
request(18, struct.pack("=BBHiII", 0,0,0,9999,0,0), flags=0x1, seq=8)
fx["errorNoDevice"] = next(m for t, m in msgs(s.recv(65536)) if t == 2)
print("// Real rtnetlink messages captured on Linux 6.18 (x86_64, little-endian) inside a test")
print("// namespace by Tests/Tools/capture_netlink_fixtures.py; NetlinkDecoderTests says what each holds.")
print("// Setup: veth va<->vb up, 192.0.2.2/24 + 2001:db8::2/64 nodad on va, default via 192.0.2.1")
print("// metric 5, -6 default via 2001:db8::1 metric 7, multipath default metric 9 (via .1 and .3),")
print("// unreachable default metric 50, tun0 (tuntap, down), bridge br0.")
print("enum NetlinkFixtures {")
for k, v in fx.items():
    h = v.hex(); parts = [h[i:i+96] for i in range(0, len(h), 96)]
    print(f"    static let {k} = bytes(")
    print("\n".join(f'        "{p}"' + ("," if i < len(parts)-1 else "") for i, p in enumerate(parts)))
    print("    )")
print("""
    /// Decodes the hex text of the fixtures (whitespace-free, lower case).
    static func bytes(_ parts: String...) -> [UInt8] {
        let hex = Array(parts.joined().utf8)
        return stride(from: 0, to: hex.count - 1, by: 2).map { i in
            UInt8(String(decoding: hex[i...i + 1], as: UTF8.self), radix: 16) ?? 0
        }
    }
}""")
