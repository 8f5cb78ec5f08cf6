"""The onpath phase's addresses, tools and texts (onpathnet.py builds the network with them, the
phase reads them): the unbound, tayga and squid configurations of the router and the internet,
and the small programs run there (the cacheable page server, the banner/silent listener, the
witness that pings and connects from a client)."""

from .daemons import UNBOUND_SERVER

LAN_V4, CLIENT_V4, LAN_V4_NET = "198.18.6.1", "198.18.6.2", "198.18.6.0/24"
LAN_V6, CLIENT_V6, LAN_V6_NET = "2001:db8:63::1", "2001:db8:63::2", "2001:db8:63::/64"
LAN6_V6, CLIENT6_V6, LAN6_V6_NET = "2001:db8:64::1", "2001:db8:64::2", "2001:db8:64::/64"
WAN_V4, INET_WAN_V4 = "198.18.7.2", "198.18.7.1"
WAN_V6, INET_WAN_V6 = "2001:db8:65::2", "2001:db8:65::1"
WEB_V4, WEB_V6 = "198.51.100.1", "2001:db8:100::1"  # reachability-lab (common.V4_NET, V6_NET)
DNS_V4, DNS64_UPSTREAM = "198.51.100.53", "198.51.100.54"
PAGE_V4 = "198.51.100.80"
BANNER_V4, BANNER_V6, BANNER_PORT = "198.51.100.22", "2001:db8:100::22", 22
LAB_NAME, V4ONLY_NAME = "www.example.com", "v4only.example.net"
NAT64_PREFIX, NAT64_POOL, TAYGA_V4 = "fd64:ff9b:1::", "192.168.255.0/24", "192.168.255.1"
SILENT_PORT, SQUID_PORT = 9999, 3129
PAGE_BODY = "rxlab onpath cached page"
BANNER = "SSH-2.0-lab"
MIN_CACHE_TTL = 300
TOOLS = ("dnsmasq", "unbound", "unbound-checkconf", "tayga", "squid", "conntrack", "curl", "kdig")
# Our nft tables on the router (each fault is one table: its undo is deleting it).
NAT_TABLE, FORGE_TABLE, BOX_TABLE, CACHE_TABLE = ("ip", "onat"), ("inet", "oforge"), ("inet", "obox"), ("ip", "ocache")


def nat64(v4):
    """The synthesized IPv6 address of an IPv4 address in the lab's /96 (RFC 6052)."""
    a, b, c, d = (int(x) for x in v4.split("."))
    return f"{NAT64_PREFIX}{a << 8 | b:x}:{c << 8 | d:x}"


UPSTREAM_UNBOUND = (
    UNBOUND_SERVER
    + """  verbosity: 0
  do-ip6: no
  interface: {address}
  access-control: 0.0.0.0/0 allow
  module-config: "iterator"
  local-zone: "." refuse
  local-zone: "example.com." static
  local-data: "example.com. 300 IN SOA ns.example.com. hostmaster.example.com. 1 3600 600 86400 300"
  local-data: "{name}. 300 IN A {web_v4}"
{extra}remote-control:
  control-enable: no
"""
)

ROUTER_UNBOUND = (
    UNBOUND_SERVER
    + """  verbosity: 1
  interface: {lan6}
  do-ip4: yes
  do-ip6: yes
  access-control: ::/0 allow
  module-config: "dns64 iterator"
  dns64-prefix: {prefix}/96
  # The upstream is reached through the IPv4 uplink; the dual-stack LAN is not ours.
  local-zone: "ipv4only.arpa." static
  local-data: "ipv4only.arpa. 300 IN A 192.0.0.170"
  local-data: "ipv4only.arpa. 300 IN A 192.0.0.171"
  local-data: "ipv4only.arpa. 300 IN AAAA {wka1}"
  local-data: "ipv4only.arpa. 300 IN AAAA {wka2}"
forward-zone:
  name: "."
  forward-addr: {upstream}
remote-control:
  control-enable: no
"""
)

TAYGA_CONF = """tun-device onat64
ipv4-addr {tayga_v4}
prefix {prefix}/96
dynamic-pool {pool}
data-dir {data}
"""

SQUID_CONF = """http_port 127.0.0.1:3128
http_port {port} intercept
pid_filename {work}/squid.pid
cache_log {work}/cache.log
logformat rxlab %ts.%03tu %>a %Ss/%03>Hs %<st %rm %ru cc=%{{Cache-Control}}>h pragma=%{{Pragma}}>h
access_log stdio:{work}/access.log rxlab
cache_mem 8 MB
maximum_object_size_in_memory 64 KB
server_persistent_connections off
connect_timeout 2 seconds
forward_timeout 3 seconds
shutdown_lifetime 1 seconds
dns_nameservers {dns}
pinger_enable off
acl lan src {lan_net}
http_access allow lan
http_access deny all
"""

# The upstream's web page (a cacheable 200) and captive endpoint, in one python process.
PAGE_SERVER = r"""import http.server, socketserver, sys
BODY = sys.argv[2].encode()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/page":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Cache-Control", "public, max-age=600")
            self.send_header("Content-Length", str(len(BODY)))
            self.end_headers()
            self.wfile.write(BODY)
        elif self.path == "/generate_204":
            self.send_response(204)
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self.send_error(404)
    def log_message(self, fmt, *args):
        sys.stderr.write("%s %s\n" % (self.client_address[0], fmt % args))
        sys.stderr.flush()
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
S((sys.argv[1], 80), H).serve_forever()
"""

# A banner server (what an SSH server does first) on every address given, or with --silent a
# listener that accepts and never sends (the middlebox's end). Connections are held 20 s at most.
LISTENER = r"""import socket, sys, threading, time
silent = sys.argv[1] == "--silent"
port = int(sys.argv[2])
banner = sys.argv[3].encode() + b"\r\n" if not silent else b""
def hold(c):
    try:
        if banner:
            c.sendall(banner)
        c.settimeout(20)
        end = time.time() + 20
        while time.time() < end and c.recv(4096):
            pass
    except OSError:
        pass
    finally:
        c.close()
def serve(s):
    while True:
        c, _ = s.accept()
        threading.Thread(target=hold, args=(c,), daemon=True).start()
for address in sys.argv[4:]:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    s = socket.socket(family, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if family == socket.AF_INET6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0 if address == "::" else 1)
    s.bind((address, port))
    s.listen(128)
    threading.Thread(target=serve, args=(s,), daemon=True).start()
print("listening", flush=True)
while True:
    time.sleep(3600)
"""

# From a client namespace: one echo to an address and the TTL / hop limit of the reply, or one
# TCP connection and the first bytes the server sends within a second.
WITNESS = r"""import os, select, socket, struct, sys, time
def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF
def echo(address):
    v6 = ":" in address
    ident = os.getpid() & 0xFFFF
    if v6:
        s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_RECVHOPLIMIT, 1)
        packet = struct.pack("!BBHHH", 128, 0, 0, ident, 1) + b"rxlab"
    else:
        s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
        head = struct.pack("!BBHHH", 8, 0, 0, ident, 1) + b"rxlab"
        packet = struct.pack("!BBHHH", 8, 0, csum(head), ident, 1) + b"rxlab"
    s.sendto(packet, (address, 0))
    end = time.time() + 1.5
    while time.time() < end:
        if not select.select([s], [], [], max(0, end - time.time()))[0]:
            break
        data, anc, _, _ = s.recvmsg(2048, 256)
        if v6:
            if data[0] == 129 and struct.unpack("!H", data[4:6])[0] == ident:
                hops = [struct.unpack("i", d[:4])[0] for l, t, d in anc if t == socket.IPV6_HOPLIMIT]
                return "reply hop limit %s" % (hops[0] if hops else "?")
        else:
            ihl = (data[0] & 15) * 4
            if data[ihl] == 0 and struct.unpack("!H", data[ihl + 4:ihl + 6])[0] == ident:
                return "reply ttl %d" % data[8]
    return "no reply"
def banner(address, port):
    try:
        c = socket.create_connection((address, int(port)), timeout=1)
    except OSError as e:
        return "no connection (%s)" % (e.strerror or e)
    c.settimeout(1)
    try:
        first = c.recv(64)
        return "connected, sent %r" % first.decode(errors="replace").strip() if first else "connected, closed"
    except socket.timeout:
        return "connected, silent"
    finally:
        c.close()
print(echo(sys.argv[2]) if sys.argv[1] == "echo" else banner(sys.argv[2], sys.argv[3]))
"""
