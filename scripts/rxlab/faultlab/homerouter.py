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
import signal
import subprocess
import time

from .. import netns, procs
from ..util import require_tools
from ..util import run as sh
from ..util import tail as tail_of
from .daemons import DNSMASQ
from .homerouter_config import (  # noqa: F401 (the phases read these through this module)
    HOME_V6,
    HTTP_ONE,
    INET_V4,
    INET_V6,
    LAN_MTU,
    LAN_V4,
    LAN_V4_NET,
    LAN_V6,
    LAN_V6_NET,
    MIN_CACHE_TTL,
    OPENNDS_CONF,
    OWN_NFT_TABLES,
    PRIVATE_MOUNTS,
    TOOLS,
    UDHCPC_SCRIPT,
    UPSTREAM_DNS,
    WAN_V4,
    WAN_V6,
)
from .homerouter_faults import RouterFaults


def tail(path, lines=15):
    """The last lines of a log, without the noise openNDS's helper scripts print every few
    seconds (their `pgrep` with a pattern longer than 15 characters)."""
    return tail_of(path, lines, skip=("pgrep: pattern", "Try `pgrep -f'"))


class HomeRouter(RouterFaults):
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

    # ---- topology -------------------------------------------------------------------------
    def build(self):
        require_tools("router phase", TOOLS)
        os.makedirs(os.path.join(self.work, "priv"), exist_ok=True)
        lab, h, r, i = self.lab, self.home, self.router, self.inet
        lab.add_network((h, r, i), ((h, "lan0", r, "rlan"), (r, "rwan", i, "iwan")))
        netns.sysctl(r, "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1")
        netns.addresses(r, "rlan", f"{LAN_V4}/24", f"{LAN_V6}/64")
        sh("ip", "-n", r, "addr", "add", f"{WAN_V4}/24", "dev", "rwan")
        sh("ip", "-n", r, "addr", "add", f"{WAN_V6}/64", "dev", "rwan", "nodad")
        self.wan_up()
        lab.configure_upstream(i, "iwan", f"{INET_V4}/24", f"{INET_V6}/64")
        sh("ip", "-n", i, "-6", "route", "replace", LAN_V6_NET, "via", WAN_V6)
        netns.masquerade(r, "rwan")
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
            *DNSMASQ,
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
