"""The network of the fault lab's `onpath` phase (issue #29): a router that can answer in place
of the internet, between two clients and a lab internet of real servers.

    client (dual stack)  --ocl0/olan--\\
                                       router (NAT, nft, dnsmasq, squid, unbound+dns64, tayga)  --owan/oup0-->  inet
    client6 (IPv6 only) --o6cl0/o6lan-/

- inet (the lab "internet", all on its loopback): reachability-lab HTTP :80 / HTTPS :443 on
  198.51.100.1 and 2001:db8:100::1 (the lab certificate, name www.example.com); unbound on
  198.51.100.53 (www.example.com A and AAAA) and, A-only, on 198.51.100.54 (www.example.com and
  v4only.example.net: A records only, the resolver DNS64 synthesizes from); a python web server
  on 198.51.100.80 (GET /page: 200 with `Cache-Control: public, max-age=600` and PAGE_BODY;
  /generate_204: 204); a banner server on 198.51.100.22 and 2001:db8:100::22 port 22 (sends
  `SSH-2.0-lab`, like an SSH server). Routes back to both client prefixes (IPv4 is NATed).
- router: forwarding and IPv4 masquerade on owan.
  * dnsmasq on olan (198.18.6.1): the dual-stack client's resolver, forwarding to
    198.51.100.53, --min-cache-ttl=300 (answers from its cache while the uplink is down);
  * unbound on o6lan (2001:db8:64::1): the IPv6-only client's resolver, `dns64 iterator` with
    the network-specific prefix fd64:ff9b:1::/96 (a /96 inside a ULA: tayga refuses
    64:ff9b::/96 with a private pool), forwarding to the A-only 198.51.100.54; ipv4only.arpa
    answered locally (A 192.0.0.170/171, AAAA the same synthesized, RFC 7050);
  * tayga: NAT64 for fd64:ff9b:1::/96, dynamic pool 192.168.255.0/24 (masqueraded on owan);
  * a silent listener on :9999 (accepts every connection, never sends a byte): the TCP
    middlebox's end when `middlebox(True)` redirects every TCP connection from olan to it;
  * squid (on demand): transparent caching proxy, `http_port 3129 intercept`, TCP 80 from olan
    redirected to it, memory cache, `server_persistent_connections off`;
  * faults: the uplink (owan down: the router's routes out go with it), the forged echo (nft
    DNAT of every echo request from olan to the router's own address, both families), the
    middlebox (nft redirect of every TCP connection from olan, any address and port).
- client: 198.18.6.2/24 and 2001:db8:63::2/64, default routes via the router, resolver dnsmasq
  (/etc/netns/<client>/resolv.conf).
- client6: 2001:db8:64::2/64 only (no IPv4 address, no IPv4 route), default via the router,
  resolver the router's unbound.

Addresses are benchmark/documentation ranges (and ULA for the NAT64 prefix); nothing routes out
of the namespaces: inet has no default route.
"""

import os
import subprocess
import time

from .. import netns
from ..util import connects, require_tools, tail
from ..util import run as sh
from .daemons import DNSMASQ
from .onpath_config import (
    BANNER,
    BANNER_PORT,
    BANNER_V4,
    BANNER_V6,
    CLIENT6_V6,
    CLIENT_V4,
    CLIENT_V6,
    DNS64_UPSTREAM,
    DNS_V4,
    INET_WAN_V4,
    INET_WAN_V6,
    LAB_NAME,
    LAN6_V6,
    LAN6_V6_NET,
    LAN_V4,
    LAN_V6,
    LAN_V6_NET,
    LISTENER,
    MIN_CACHE_TTL,
    NAT64_POOL,
    NAT64_PREFIX,
    NAT_TABLE,
    PAGE_BODY,
    PAGE_SERVER,
    PAGE_V4,
    ROUTER_UNBOUND,
    SILENT_PORT,
    TAYGA_CONF,
    TAYGA_V4,
    TOOLS,
    UPSTREAM_UNBOUND,
    V4ONLY_NAME,
    WAN_V4,
    WAN_V6,
    WEB_V4,
    WEB_V6,
    WITNESS,
    nat64,
)
from .onpath_faults import OnpathFaults


class OnpathNet(OnpathFaults):
    """The four namespaces and their daemons (squid on demand, the faults and the witnesses are
    onpath_faults.py's). Namespaces and processes are registered with the Lab as soon as they
    exist, so `Lab.close()` removes them on every path; `close()` here removes
    /etc/netns/<client>, /etc/netns/<client6> and tayga's tun device (it goes with the router's
    namespace anyway)."""

    def __init__(self, lab):
        self.lab = lab
        p = lab.prefix
        self.client, self.client6, self.router, self.inet = (
            f"{p}-oclient",
            f"{p}-oclient6",
            f"{p}-orouter",
            f"{p}-oinet",
        )
        self.work = os.path.join(lab.work, "onpath")
        self.resolv_conf = netns.ResolvConf()
        self.squid = None
        self.squid_dir = os.path.join(self.work, "squid")

    # ---- topology -------------------------------------------------------------------------
    def build(self):
        require_tools("onpath phase", TOOLS)
        os.chmod(self.lab.work, 0o711)  # squid runs as `proxy`: its files need a path it can traverse
        os.makedirs(self.work, mode=0o755, exist_ok=True)
        lab, c, c6, r, i = self.lab, self.client, self.client6, self.router, self.inet
        lab.add_network((c, c6, r, i), ((c, "ocl0", r, "olan"), (c6, "o6cl0", r, "o6lan"), (r, "owan", i, "oup0")))
        netns.sysctl(r, "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1")
        for ns, dev, addresses in (
            (c, "ocl0", (f"{CLIENT_V4}/24", f"{CLIENT_V6}/64")),
            (c6, "o6cl0", (f"{CLIENT6_V6}/64",)),
            (r, "olan", (f"{LAN_V4}/24", f"{LAN_V6}/64")),
            (r, "o6lan", (f"{LAN6_V6}/64",)),
            (r, "owan", (f"{WAN_V4}/24", f"{WAN_V6}/64")),
            (i, "oup0", (f"{INET_WAN_V4}/24", f"{INET_WAN_V6}/64")),
        ):
            netns.addresses(ns, dev, *addresses)
        for address in (WEB_V4, DNS_V4, DNS64_UPSTREAM, PAGE_V4, BANNER_V4):
            sh("ip", "-n", i, "addr", "add", f"{address}/32", "dev", "lo")
        for address in (WEB_V6, BANNER_V6):
            sh("ip", "-n", i, "addr", "add", f"{address}/128", "dev", "lo", "nodad")
        sh("ip", "-n", c, "route", "add", "default", "via", LAN_V4)
        sh("ip", "-n", c, "-6", "route", "add", "default", "via", LAN_V6)
        sh("ip", "-n", c6, "-6", "route", "add", "default", "via", LAN6_V6)
        self.wan_routes()
        for net in (LAN_V6_NET, LAN6_V6_NET):
            sh("ip", "-n", i, "-6", "route", "replace", net, "via", WAN_V6)
        netns.masquerade(r, "owan", NAT_TABLE)
        for ns, server in ((self.client, LAN_V4), (self.client6, LAN6_V6)):
            self.resolv_conf.write(ns, f"nameserver {server}\n")
        for name, text in (("page_server.py", PAGE_SERVER), ("listener.py", LISTENER), ("witness.py", WITNESS)):
            with open(os.path.join(self.work, name), "w") as f:
                f.write(text)

    def wan_routes(self):
        r = self.router
        sh("ip", "-n", r, "route", "replace", "default", "via", INET_WAN_V4, "dev", "owan")
        sh("ip", "-n", r, "-6", "route", "replace", "default", "via", INET_WAN_V6, "dev", "owan")

    def start_daemons(self):
        """Everything but squid; each waited for on its ports (this thread must be in the client
        namespace, which reaches the router and, through it, the inet)."""
        self.start_inet_daemons()
        self.start_router_daemons()
        self.start_tayga()
        self.wait_tcp("page server", [(PAGE_V4, 80)])
        self.wait_tcp("lab web", [(WEB_V4, 443)])
        self.wait_dns()

    def start_inet_daemons(self):
        """The lab internet's: reachability-lab's web, the upstream unbounds, the page and
        banner servers."""
        w, i = self.work, self.inet
        lw = self.lab.work
        self.daemon(
            i,
            [
                self.lab.args.lab_bin,
                f"--control={w}/web.sock",
                f"--cert={lw}/server.pem",
                f"--key={lw}/server.key",
                f"--wrong-cert={lw}/wrong.pem",
                f"--wrong-key={lw}/wrong.key",
                f"--address={WEB_V4}",
                f"--address={WEB_V6}",
            ],
            "web",
            wait_line="ready",
        )
        self.unbound(
            i,
            "upstream",
            UPSTREAM_UNBOUND.format(
                address=DNS_V4,
                name=LAB_NAME,
                web_v4=WEB_V4,
                extra=f'  local-data: "{LAB_NAME}. 300 IN AAAA {WEB_V6}"\n',
            ),
        )
        self.unbound(
            i,
            "upstream-a-only",
            UPSTREAM_UNBOUND.format(
                address=DNS64_UPSTREAM,
                name=LAB_NAME,
                web_v4=WEB_V4,
                extra=f'  local-zone: "example.net." static\n  local-data: "{V4ONLY_NAME}. 300 IN A {PAGE_V4}"\n',
            ),
        )
        self.daemon(i, ["python3", "-u", f"{w}/page_server.py", PAGE_V4, PAGE_BODY], "page")
        self.daemon(
            i,
            ["python3", "-u", f"{w}/listener.py", "--banner", str(BANNER_PORT), BANNER, BANNER_V4, BANNER_V6],
            "banner",
            wait_line="listening",
        )

    def start_router_daemons(self):
        """The router's: the silent listener, dnsmasq and the dns64 unbound."""
        w, r = self.work, self.router
        self.daemon(
            r,
            ["python3", "-u", f"{w}/listener.py", "--silent", str(SILENT_PORT), "-", "::"],
            "silent",
            wait_line="listening",
        )
        self.daemon(
            r,
            [
                *DNSMASQ,
                f"--server={DNS_V4}",
                "--interface=olan",
                "--bind-dynamic",
                "--user=root",
                "--pid-file=",
                f"--min-cache-ttl={MIN_CACHE_TTL}",
                "--log-queries",
            ],
            "dnsmasq",
        )
        self.unbound(
            r,
            "dns64",
            ROUTER_UNBOUND.format(
                lan6=LAN6_V6,
                prefix=NAT64_PREFIX,
                upstream=DNS64_UPSTREAM,
                wka1=nat64("192.0.0.170"),
                wka2=nat64("192.0.0.171"),
            ),
        )

    def daemon(self, ns, argv, name, wait_line=None):
        log = os.path.join(self.work, f"{name}.log")
        p = subprocess.Popen(
            ["ip", "netns", "exec", ns] + argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE if wait_line else open(log, "w"),
            stderr=open(log + ".err", "w") if wait_line else subprocess.STDOUT,
            text=True,
        )
        self.lab.processes.append(p)
        if wait_line:
            line = p.stdout.readline()  # the process prints it once bound (or exits: empty line)
            if not line.startswith(wait_line):
                raise RuntimeError(f"{name} did not start: {line!r}\n{tail(log + '.err')}")
        return p

    def unbound(self, ns, name, conf_text):
        conf = os.path.join(self.work, f"unbound-{name}.conf")
        with open(conf, "w") as f:
            f.write(conf_text)
        sh("unbound-checkconf", conf)
        return self.daemon(ns, ["unbound", "-d", "-c", conf], f"unbound-{name}")

    def start_tayga(self):
        r, data = self.router, os.path.join(self.work, "tayga")
        os.makedirs(data, exist_ok=True)
        conf = os.path.join(self.work, "tayga.conf")
        with open(conf, "w") as f:
            f.write(TAYGA_CONF.format(tayga_v4=TAYGA_V4, prefix=NAT64_PREFIX, pool=NAT64_POOL, data=data))
        sh("ip", "netns", "exec", r, "tayga", "-c", conf, "--mktun")
        sh("ip", "-n", r, "link", "set", "onat64", "up")
        sh("ip", "-n", r, "route", "add", NAT64_POOL, "dev", "onat64")
        sh("ip", "-n", r, "-6", "route", "add", f"{NAT64_PREFIX}/96", "dev", "onat64")
        self.daemon(r, ["tayga", "-c", conf, "--nodetach"], "tayga")

    def wait_tcp(self, what, ports, limit=15.0):
        deadline = time.time() + limit
        while time.time() < deadline:
            if all(connects(a, p) for a, p in ports):
                return
            time.sleep(0.1)
        raise RuntimeError(f"{what} not listening on {ports} after {limit:.0f} s")

    def wait_dns(self, limit=15.0):
        """Both clients' resolvers answer the lab name (dnsmasq; unbound with DNS64 through tayga's
        prefix) before any exporter starts."""
        deadline, last = time.time() + limit, ""
        while time.time() < deadline:
            a, aaaa = self.dig(LAN_V4, LAB_NAME, "A"), self.dig(LAN6_V6, LAB_NAME, "AAAA")
            last = f"dnsmasq A {a!r}, unbound AAAA {aaaa!r}"
            if WEB_V4 in a and nat64(WEB_V4) in aaaa:
                return
            time.sleep(0.2)
        raise RuntimeError(
            f"the routers' resolvers do not answer: {last}\n{tail(os.path.join(self.work, 'unbound-dns64.log'))}"
        )

    def dig(self, server, name, rtype, ns=None):
        """kdig from a client namespace (client6 for an IPv6 server): the answers, space-separated."""
        ns = ns or (self.client6 if ":" in server else self.client)
        p = sh(
            "ip",
            "netns",
            "exec",
            ns,
            "kdig",
            "+short",
            "+time=1",
            "+retry=0",
            f"@{server}",
            name,
            rtype,
            check=False,
            timeout=10,
        )
        return " ".join(w for w in p.stdout.split() if not w.startswith(";")) or f"(none, exit {p.returncode})"

    def close(self):
        self.resolv_conf.close()
