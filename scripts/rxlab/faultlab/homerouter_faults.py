"""The faults of the home router (homerouter.py's `HomeRouter` has these methods): the forward
blackhole, the WAN link, the gateway vanishing, DNS only, a path-MTU black hole; and what the
home sees (its resolver, dnsmasq's log, one HTTP request). Each fault is idempotent and undone
by calling it with False (or None)."""

import os
import re
import signal

from .. import netns
from ..util import run as sh
from .homerouter_config import HTTP_ONE, LAN_MTU, LAN_V4, LAN_V6, LAN_V6_NET, OWN_NFT_TABLES, WAN_V6


class RouterFaults:
    """Mixed into HomeRouter: uses its namespaces (`router`, `home`, `inet`), `dnsmasq`,
    `dnsmasq_log` and `wan_up()`."""

    def blackhole(self, on):
        """The router drops everything it would forward; its own output (dnsmasq's queries) leaves."""
        if on:
            netns.nft(
                self.router,
                "table inet rxfault {\n  chain forward {\n    type filter hook forward priority 0; policy drop;\n  }\n}\n",
            )
            self.dnsmasq.send_signal(signal.SIGHUP)  # an empty cache: its answers now come from its own queries
        else:
            netns.nft_delete(self.router, "inet", "rxfault", check=True)
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
        netns.nft(self.router, f"table {family} {name} {{\n{body}}}\n")

    def nft_delete(self, family, name):
        netns.nft_delete(self.router, family, name)

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
        netns.flush_conntrack(self.router)

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
