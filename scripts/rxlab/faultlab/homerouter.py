"""The home router of the fault lab's `router` phase: real software between the
exporter and the lab internet, the way a home network or a hotspot has it.

    home (the exporter)  --lan0/rlan-->  router  --rwan/iwan-->  inet (reachability-lab)

- home: IPv4 from a real DHCP lease of the router's dnsmasq (`busybox udhcpc`; its event script
  sets the address and default route and writes /etc/netns/<home>/resolv.conf, which
  `ip netns exec` bind-mounts, so the exporter's getaddrinfo asks dnsmasq). IPv6 is static
  (2001:db8:14::2/64, default via the router): the LAN is dual-stack, without RA or DHCPv6.
- router: dnsmasq as DHCP server and caching DNS forwarder to 198.51.100.53; IPv4 NAT (nft
  masquerade on the WAN), IPv6 routed; openNDS (captive portal, IPv4 only) started on demand.
  dnsmasq and openNDS share one private mount namespace (see /work/shared/LAB_NOTES.md): a
  private tmpfs on /tmp holding the leases file and openNDS's state, /etc as an overlay whose
  upper layer is on that tmpfs (openNDS's helper edits /etc/hosts and /etc/dnsmasq.conf and
  reads /etc/opennds/opennds.conf whatever -c says: all of it stays private), /run private,
  systemctl bound to /bin/true, iptables-legacy first on PATH as iptables/ip6tables.
- inet: reachability-lab on 198.51.100.1 / .53 and 2001:db8:100::1 / ::53 (the Lab's upstream
  helpers), with a route back to the LAN's IPv6 prefix (IPv4 comes back NATed).

Faults (each with its undo, idempotent): the router's forward blackhole, its WAN link down, the
gateway vanishing (rlan ingress dropped: no ARP/ND answer while the home's link stays up), DNS
only (port 53 from the LAN dropped), and a path-MTU black hole (a smaller WAN MTU with the
router's "fragmentation needed"/"packet too big" dropped); openNDS on demand.

Addresses are benchmark/documentation ranges only: LAN 198.18.1.0/24 and 2001:db8:14::/64, WAN
203.0.113.0/24 and 2001:db8:15::/64. Nothing routes out of the namespaces.
"""

import os
import re
import shutil
import signal
import subprocess
import time

from .. import netns, procs
from ..util import run as sh
from ..util import tail as tail_of

LAN_V4, LAN_V4_NET = "198.18.1.1", "198.18.1.0/24"
LAN_V6, HOME_V6 = "2001:db8:14::1", "2001:db8:14::2"
LAN_V6_NET = "2001:db8:14::/64"
WAN_V4, INET_V4 = "203.0.113.2", "203.0.113.1"
WAN_V6, INET_V6 = "2001:db8:15::2", "2001:db8:15::1"
UPSTREAM_DNS = "198.51.100.53"
# The lab DNS answers with a TTL of 60 s: an entry fetched just before an outage could expire
# during it, so dnsmasq keeps every answer at least this long (its --min-cache-ttl).
MIN_CACHE_TTL = 300
# Our tables (stop_opennds deletes every other one): the NAT, and one per fault so that faults
# combine and each undo is deleting its table.
OWN_NFT_TABLES = {
    ("ip", "rxnat"),
    ("inet", "rxfault"),
    ("netdev", "rxgw"),
    ("inet", "rxdns"),
    ("inet", "rxmtu"),
    ("inet", "rxgwcount"),
}
LAN_MTU = 1500  # every veth of the lab; wan_mtu(None) puts the WAN back to it
TOOLS = (
    "dnsmasq",
    "opennds",
    "ndsctl",
    "busybox",
    "iptables-legacy",
    "ip6tables-legacy",
    "conntrack",
    "nsenter",
    "unshare",
    "getent",
)

# Runs as root inside the router namespace under `unshare -m --propagation private`, then becomes
# dnsmasq: its PID is the anchor of the private mount namespace that openNDS joins later.
PRIVATE_MOUNTS = r"""
set -eu
W=$1; shift
mount -t tmpfs -o size=32m,mode=755 rxlab-router "$W/priv"
mkdir -p "$W/priv/tmp/rxbin" "$W/priv/run/tmpfiles.d" "$W/priv/etc-up" "$W/priv/etc-work"
chmod 1777 "$W/priv/tmp"
mount -t overlay rxlab-etc -o "lowerdir=/etc,upperdir=$W/priv/etc-up,workdir=$W/priv/etc-work" /etc
cp "$W/opennds.conf" /etc/opennds/opennds.conf
mount --bind /bin/true "$(command -v systemctl || echo /usr/bin/systemctl)" 2>/dev/null \
  || { printf '#!/bin/sh\nexit 0\n' > "$W/priv/tmp/rxbin/systemctl"; chmod +x "$W/priv/tmp/rxbin/systemctl"; }
mount --bind "$W/priv/run" /run
mount --bind "$W/priv/tmp" /tmp
ln -s "$(command -v iptables-legacy)" /tmp/rxbin/iptables
ln -s "$(command -v ip6tables-legacy)" /tmp/rxbin/ip6tables
: > /tmp/dhcp.leases
exec "$@"
"""

UDHCPC_SCRIPT = """#!/bin/sh
# busybox udhcpc event script: the lease sets lan0's IPv4 address, the default route and the
# resolver (the file `ip netns exec` bind-mounts over /etc/resolv.conf).
case "$1" in
  bound|renew)
    ip -4 addr flush dev "$interface"
    ip addr add "$ip/${mask:-24}" dev "$interface"
    for r in $router; do ip route replace default via "$r" dev "$interface"; break; done
    : > RESOLV.new
    for d in $dns; do echo "nameserver $d" >> RESOLV.new; done
    cat RESOLV.new > RESOLV && rm -f RESOLV.new
    echo "lease $ip/$mask router $router dns $dns"
    ;;
  deconfig) ip -4 addr flush dev "$interface" ;;
esac
"""

# openNDS's own packaged rule sets (DNS and DHCP to the router stay open before login), for
# the LAN interface; everything else defaults.
OPENNDS_CONF = """GatewayInterface rlan
GatewayName rxlab
debuglevel 1
FirewallRuleSet authenticated-users {
}
FirewallRuleSet preauthenticated-users {
}
FirewallRuleSet users-to-router {
    FirewallRule allow udp port 53
    FirewallRule allow tcp port 53
    FirewallRule allow udp port 67
    FirewallRule allow tcp port 80
}
"""

# One plain-HTTP request from the home namespace (no curl needed): prints "STATUS LOCATION".
HTTP_ONE = """import http.client, sys
c = http.client.HTTPConnection(sys.argv[2], timeout=3)
c.request(sys.argv[1], sys.argv[3])
r = c.getresponse()
print(r.status, r.getheader("Location") or "")
"""


def tail(path, lines=15):
    """The last lines of a log, without the noise openNDS's helper scripts print every few
    seconds (their `pgrep` with a pattern longer than 15 characters)."""
    return tail_of(path, lines, skip=("pgrep: pattern", "Try `pgrep -f'"))


class HomeRouter:
    """The three namespaces and the router's daemons. Namespaces and processes are registered
    with the Lab as soon as they exist, so `Lab.close()` removes them on every path; `close()`
    here stops openNDS and removes /etc/netns/<home>."""

    def __init__(self, lab):
        self.lab = lab
        p = lab.prefix
        self.home, self.router, self.inet = f"{p}-home", f"{p}-router", f"{p}-inet"
        self.work = os.path.join(lab.work, "router")
        self.resolv_conf = netns.ResolvConf()
        self.resolv = os.path.join(netns.ResolvConf.ROOT, self.home, "resolv.conf")
        self.dnsmasq = None
        self.opennds = None
        self.client_ip = None
        self.dnsmasq_log = os.path.join(self.work, "dnsmasq.log")
        self.opennds_log = os.path.join(self.work, "opennds.log")

    @staticmethod
    def missing_tools():
        return [t for t in TOOLS if not shutil.which(t)]

    # ---- topology -------------------------------------------------------------------------
    def build(self):
        missing = self.missing_tools()
        if missing:
            raise RuntimeError(f"router phase cannot run: missing {', '.join(missing)}")
        os.makedirs(os.path.join(self.work, "priv"), exist_ok=True)
        lab, h, r, i = self.lab, self.home, self.router, self.inet
        for ns in (h, r, i):
            lab.add_namespace(ns)
        lab.namespaces.veth(h, "lan0", r, "rlan")
        lab.namespaces.veth(r, "rwan", i, "iwan")
        sh("ip", "netns", "exec", r, "sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1")
        sh("ip", "-n", r, "addr", "add", f"{LAN_V4}/24", "dev", "rlan")
        sh("ip", "-n", r, "addr", "add", f"{LAN_V6}/64", "dev", "rlan", "nodad")
        sh("ip", "-n", r, "link", "set", "rlan", "up")
        sh("ip", "-n", r, "addr", "add", f"{WAN_V4}/24", "dev", "rwan")
        sh("ip", "-n", r, "addr", "add", f"{WAN_V6}/64", "dev", "rwan", "nodad")
        self.wan_up()
        lab.configure_upstream(i, "iwan", f"{INET_V4}/24", f"{INET_V6}/64")
        sh("ip", "-n", i, "-6", "route", "replace", LAN_V6_NET, "via", WAN_V6)
        sh(
            "ip",
            "netns",
            "exec",
            r,
            "nft",
            "-f",
            "-",
            input_text=(
                "table ip rxnat {\n  chain postrouting {\n    type nat hook postrouting priority srcnat;\n"
                '    oifname "rwan" masquerade\n  }\n}\n'
            ),
        )
        sh("ip", "-n", h, "link", "set", "lan0", "up")
        self.home_ipv6(True)
        lab.start_lab(i)
        self.start_dnsmasq()
        self.lease()

    def wan_up(self):
        r = self.router
        sh("ip", "-n", r, "link", "set", "rwan", "up")
        sh("ip", "-n", r, "route", "replace", "default", "via", INET_V4, "dev", "rwan")
        sh("ip", "-n", r, "-6", "route", "replace", "default", "via", INET_V6, "dev", "rwan")

    def home_ipv6(self, on):
        """The home's static IPv6; off = no IPv6 default route (an IPv4-only LAN)."""
        h = self.home
        if on:
            sh("ip", "-n", h, "addr", "replace", f"{HOME_V6}/64", "dev", "lan0", "nodad")
            sh("ip", "-n", h, "-6", "route", "replace", "default", "via", LAN_V6, "dev", "lan0")
        else:
            sh("ip", "-n", h, "-6", "route", "del", "default", check=False)

    def start_dnsmasq(self):
        with open(os.path.join(self.work, "opennds.conf"), "w") as f:
            f.write(OPENNDS_CONF)
        argv = [
            "ip",
            "netns",
            "exec",
            self.router,
            "unshare",
            "-m",
            "--propagation",
            "private",
            "bash",
            "-c",
            PRIVATE_MOUNTS,
            "rxlab-router",
            self.work,
            "dnsmasq",
            "--keep-in-foreground",
            "--log-facility=-",
            "--conf-file=/dev/null",
            "--no-resolv",
            "--no-hosts",
            f"--server={UPSTREAM_DNS}",
            "--interface=rlan",
            "--bind-dynamic",
            "--dhcp-range=198.18.1.100,198.18.1.150,255.255.255.0,1h",
            f"--dhcp-option=option:router,{LAN_V4}",
            f"--dhcp-option=option:dns-server,{LAN_V4}",
            "--dhcp-leasefile=/tmp/dhcp.leases",
            "--dhcp-authoritative",
            "--no-ping",  # it pings an address before offering it: 3 s per lease
            f"--min-cache-ttl={MIN_CACHE_TTL}",
            "--user=root",
            "--pid-file=",
            "--log-queries",
            "--log-dhcp",
        ]
        self.dnsmasq = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(self.dnsmasq_log, "w")
        )
        self.lab.processes.append(self.dnsmasq)
        deadline = time.time() + 10
        while time.time() < deadline:
            if self.dnsmasq.poll() is not None:
                raise RuntimeError(f"dnsmasq exited {self.dnsmasq.returncode}:\n{tail(self.dnsmasq_log)}")
            if "DHCP, IP range" in tail(self.dnsmasq_log, 40) and self.comm(self.dnsmasq.pid) == "dnsmasq":
                return
            time.sleep(0.05)
        raise RuntimeError(f"dnsmasq did not start within 10 s:\n{tail(self.dnsmasq_log)}")

    @staticmethod
    def comm(pid):
        try:
            with open(f"/proc/{pid}/comm") as f:
                return f.read().strip()
        except OSError:
            return ""

    def lease(self):
        """A DHCP lease for the home (address, default route, resolver); returns its address."""
        self.resolv_conf.write(self.home, "")
        script = os.path.join(self.work, "udhcpc.sh")
        with open(script, "w") as f:
            f.write(UDHCPC_SCRIPT.replace("RESOLV", self.resolv))
        os.chmod(script, 0o755)
        p = sh(
            "ip",
            "netns",
            "exec",
            self.home,
            "busybox",
            "udhcpc",
            "-i",
            "lan0",
            "-s",
            script,
            "-q",
            "-n",
            "-t",
            "10",
            "-T",
            "1",
            check=False,
            timeout=20,
        )
        found = re.search(r"lease (\S+)/", p.stdout)
        with open(self.resolv) as f:
            resolv = f.read()
        if p.returncode != 0 or not found or LAN_V4 not in resolv:
            raise RuntimeError(
                f"no DHCP lease from dnsmasq (udhcpc exited {p.returncode}): {p.stdout}{p.stderr}"
                f"\nresolv.conf: {resolv!r}\n{tail(self.dnsmasq_log)}"
            )
        self.client_ip = found.group(1)
        return self.client_ip

    # ---- faults ---------------------------------------------------------------------------
    def blackhole(self, on):
        """The router drops everything it would forward; its own output (dnsmasq's queries) leaves."""
        if on:
            sh(
                "ip",
                "netns",
                "exec",
                self.router,
                "nft",
                "-f",
                "-",
                input_text=(
                    "table inet rxfault {\n  chain forward {\n    type filter hook forward priority 0; policy drop;\n  }\n}\n"
                ),
            )
            self.dnsmasq.send_signal(signal.SIGHUP)  # an empty cache: its answers now come from its own queries
        else:
            sh("ip", "netns", "exec", self.router, "nft", "delete", "table", "inet", "rxfault")
            self.flush_conntrack()

    def uplink(self, up):
        """The router's WAN link (admin state; its routes go with it and come back)."""
        if up:
            self.wan_up()
            sh("ip", "-n", self.inet, "-6", "route", "replace", LAN_V6_NET, "via", WAN_V6)
            self.flush_conntrack()
        else:
            sh("ip", "-n", self.router, "link", "set", "rwan", "down")

    def nft_table(self, family, name, body):
        """(Re)creates one of our nft tables on the router: idempotent (an old copy goes first)."""
        assert (family, name) in OWN_NFT_TABLES
        self.nft_delete(family, name)
        sh("ip", "netns", "exec", self.router, "nft", "-f", "-", input_text=f"table {family} {name} {{\n{body}}}\n")

    def nft_delete(self, family, name):
        sh("ip", "netns", "exec", self.router, "nft", "delete", "table", family, name, check=False)

    def gateway_vanish(self, on):
        """The home's default gateway stops existing while the home's link stays up: on the
        home side nothing changes (carrier, address, default route, resolver), but every frame
        it sends reaches nothing. The router drops all that arrives on rlan at ingress (an nft
        netdev table, before ARP, neighbour discovery and forwarding): ARP for 198.18.1.1 and
        neighbour solicitations for 2001:db8:14::1 go unanswered, and frames sent to the
        router's MAC the home still has cached are not forwarded either. That is an unplugged
        router behind a switch; removing the router's LAN addresses instead would leave it
        forwarding whatever still reaches its MAC (with the way back gone) and make dnsmasq
        rebind its sockets on restore.

        The home's neighbour entries then go the kernel's way: REACHABLE until the last
        confirmation (a TCP ACK) is 15-45 s old (base_reachable_time 30 s), then STALE, DELAY
        (5 s), PROBE (3 unicast probes 1 s apart), FAILED; an entry that was already FAILED or
        absent becomes INCOMPLETE on the next packet and FAILED 3 s later. Nothing undoes the
        fault from the home: its DHCP client ran once (`udhcpc -q`, a 1 h lease) and does not
        renew. Restore deletes the table: a FAILED entry resolves on the next packet and a
        STALE/PROBE one is confirmed by the router's (unchanged) MAC, so the home's neighbour
        cache is left alone (no flush)."""
        if on:
            self.nft_table(
                "netdev",
                "rxgw",
                '  chain ingress {\n    type filter hook ingress device "rlan" priority 0; policy drop;\n  }\n',
            )
        else:
            self.nft_delete("netdev", "rxgw")

    def count_gateway_echoes(self):
        """Starts counting the echo requests that reach the router's own LAN addresses (the
        exporter's gateway checks; nothing else in the lab pings the router): an nft counter on
        its input hook, read by `gateway_echoes()`."""
        self.nft_table(
            "inet",
            "rxgwcount",
            "  chain input {\n    type filter hook input priority -10;\n"
            f"    icmp type echo-request ip daddr {LAN_V4} counter\n"
            f"    icmpv6 type echo-request ip6 daddr {LAN_V6} counter\n  }}\n",
        )

    def gateway_echoes(self):
        """Echo requests to the router's LAN addresses counted so far (both families)."""
        out = sh("ip", "netns", "exec", self.router, "nft", "list", "table", "inet", "rxgwcount").stdout
        return sum(int(n) for n in re.findall(r"counter packets (\d+)", out))

    def dns_down(self, on):
        """Only DNS dies: the router drops DNS from the LAN (UDP and TCP 53 on its input hook)
        so dnsmasq never sees a query, while DHCP (UDP 67), forwarding and NAT go on: direct
        IP traffic to the inet keeps working. Input-hook rules see every packet, conntrack or
        not, so the fault holds for the resolver's existing flows at once."""
        if on:
            self.nft_table(
                "inet",
                "rxdns",
                "  chain input {\n    type filter hook input priority 0;\n"
                '    iifname "rlan" udp dport 53 drop\n    iifname "rlan" tcp dport 53 drop\n  }\n',
            )
        else:
            self.nft_delete("inet", "rxdns")

    def wan_mtu(self, mtu):
        """A path-MTU black hole: the router's WAN link (rwan on the router, iwan on inet: both
        ends of the veth) carries only `mtu` bytes, and the router drops the ICMP it would send
        the home about it (IPv4 "fragmentation needed", type 3 code 4, and ICMPv6 packet too
        big: locally generated, so its output hook sees them). A DF packet above `mtu` from the
        home vanishes without a word; smaller ones, and TCP (inet's end advertises an MSS that
        fits), pass. `wan_mtu(None)` puts 1500 back and removes the filter. Both ways the
        home's cached path MTUs are flushed, so no earlier measurement lingers in its kernel."""
        if mtu is not None:
            self.nft_table(
                "inet",
                "rxmtu",
                "  chain output {\n    type filter hook output priority 0;\n"
                "    icmp type destination-unreachable icmp code frag-needed drop\n"
                "    icmpv6 type packet-too-big drop\n  }\n",
            )
        value = str(mtu or LAN_MTU)
        sh("ip", "-n", self.router, "link", "set", "rwan", "mtu", value)
        sh("ip", "-n", self.inet, "link", "set", "iwan", "mtu", value)
        if mtu is None:
            self.nft_delete("inet", "rxmtu")
        sh("ip", "-n", self.home, "-4", "route", "flush", "cache")
        sh("ip", "-n", self.home, "-6", "route", "flush", "cache")

    def flush_conntrack(self):
        sh("ip", "netns", "exec", self.router, "conntrack", "-F", check=False)

    def resolve(self, name):
        """getaddrinfo through the home's resolver (the lease's: dnsmasq); (ok, text)."""
        p = sh("ip", "netns", "exec", self.home, "getent", "ahosts", name, check=False, timeout=15)
        addresses = sorted({line.split()[0] for line in p.stdout.splitlines() if line.strip()})
        return p.returncode == 0 and bool(addresses), ",".join(addresses) or f"getent exit {p.returncode}"

    def dns_log_mark(self):
        try:
            return os.path.getsize(self.dnsmasq_log)
        except OSError:
            return 0

    def dns_answers_since(self, mark):
        """How dnsmasq answered the lab name since `mark` (its --log-queries lines): from its
        cache ("cached"), from upstream ("reply"), and how often it forwarded."""
        with open(self.dnsmasq_log, errors="replace") as f:
            f.seek(mark)
            text = f.read()

        def count(word):
            return len(re.findall(rf"\]: {word} www\.example\.com ", text))

        return {"cached": count("cached"), "upstream": count("reply"), "forwarded": count("forwarded")}

    def http(self, method, host, path):
        """One plain-HTTP request from the home: (status or None, Location or error)."""
        p = sh("ip", "netns", "exec", self.home, "python3", "-c", HTTP_ONE, method, host, path, check=False, timeout=10)
        if p.returncode != 0:
            return None, (p.stderr.strip().splitlines() or ["?"])[-1]
        status, _, location = p.stdout.strip().partition(" ")
        return int(status), location

    # ---- openNDS --------------------------------------------------------------------------
    def start_opennds(self):
        """Starts openNDS in dnsmasq's mount namespace; returns when it says it is running, with
        the time it began installing its firewall. Raises with its log tail otherwise."""
        if self.dnsmasq is None or self.dnsmasq.poll() is not None:
            raise RuntimeError("openNDS needs dnsmasq's mount namespace, and dnsmasq is not running")
        log_file = open(self.opennds_log, "w")
        self.opennds = subprocess.Popen(
            [
                "nsenter",
                "-t",
                str(self.dnsmasq.pid),
                "-m",
                "-n",
                "env",
                "PATH=/tmp/rxbin:/usr/sbin:/usr/bin:/sbin:/bin",
                "opennds",
                "-f",
                "-d",
                "1",
            ],
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.lab.processes.append(self.opennds)
        firewall, deadline = None, time.time() + 20
        while time.time() < deadline:
            text = tail(self.opennds_log, 200)
            if firewall is None and "Initializing firewall rules" in text:
                firewall = time.time()
            if "openNDS is now running" in text:
                return firewall or time.time()
            if self.opennds.poll() is not None:
                break
            time.sleep(0.05)
        state = f"exited {self.opennds.returncode}" if self.opennds.poll() is not None else "not running after 20 s"
        raise RuntimeError(f"openNDS {state}:\n{tail(self.opennds_log, 25)}")

    def ndsctl(self, *args):
        return sh("nsenter", "-t", str(self.dnsmasq.pid), "-m", "-n", "ndsctl", *args, check=False, timeout=15)

    def stop_opennds(self):
        """Stops openNDS and its helper scripts (its process group) and removes the firewall it
        leaves behind (it exits with most of its iptables chains and nft tables in place)."""
        p, self.opennds = self.opennds, None
        if p is None:
            return
        procs.stop(p)
        try:
            os.killpg(p.pid, signal.SIGKILL)  # the group is the one start_new_session made for it
        except ProcessLookupError:
            pass
        r = self.router
        for table in ("filter", "nat", "mangle"):
            for tool in ("iptables-legacy", "ip6tables-legacy"):
                sh("ip", "netns", "exec", r, tool, "-t", table, "-F", check=False)
                sh("ip", "netns", "exec", r, tool, "-t", table, "-X", check=False)
        listed = sh("ip", "netns", "exec", r, "nft", "list", "tables", check=False).stdout
        for family, name in re.findall(r"^table (\S+) (\S+)$", listed, re.M):
            if (family, name) not in OWN_NFT_TABLES:
                sh("ip", "netns", "exec", r, "nft", "delete", "table", family, name, check=False)
        self.flush_conntrack()

    def close(self):
        try:
            self.stop_opennds()
        finally:
            self.resolv_conf.close()
