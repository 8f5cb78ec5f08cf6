"""What the onpath phase does on onpathnet.py's network (its `OnpathNet` has these methods): squid
on demand (a transparent cache on the router), the faults (the uplink, the forged echo, the TCP
middlebox; each an nft table of the router, undone by deleting it, or the WAN link), and the
witnesses from the clients (the witness program, curl)."""

import os
import re
import shutil
import time

from .. import netns, procs
from ..util import connects, read_from, size_of, tail
from ..util import run as sh
from .onpath_config import (
    BOX_TABLE,
    CACHE_TABLE,
    DNS_V4,
    FORGE_TABLE,
    LAN6_V6_NET,
    LAN_V4,
    LAN_V4_NET,
    LAN_V6,
    LAN_V6_NET,
    SILENT_PORT,
    SQUID_CONF,
    SQUID_PORT,
    WAN_V6,
)


class OnpathFaults:
    """Mixed into OnpathNet: uses its namespaces (`router`, `client`, `inet`), `work`,
    `squid_dir`, `daemon()` and `wan_routes()`."""

    # ---- on-demand daemons ----------------------------------------------------------------
    def start_squid(self):
        """squid in intercept mode, and the router's redirect of TCP 80 from olan to it."""
        os.makedirs(self.squid_dir, exist_ok=True)
        shutil.chown(self.squid_dir, "proxy", "proxy")
        conf = os.path.join(self.work, "squid.conf")
        with open(conf, "w") as f:
            f.write(SQUID_CONF.format(port=SQUID_PORT, work=self.squid_dir, dns=DNS_V4, lan_net=LAN_V4_NET))
        os.chmod(conf, 0o644)
        self.squid = self.daemon(self.router, ["squid", "-N", "-f", conf], "squid")
        deadline = time.time() + 15
        while time.time() < deadline and not connects(LAN_V4, SQUID_PORT):
            if self.squid.poll() is not None:
                break
            time.sleep(0.1)
        if not connects(LAN_V4, SQUID_PORT):
            raise RuntimeError(
                f"squid not listening on {LAN_V4}:{SQUID_PORT}:\n{tail(os.path.join(self.work, 'squid.log'))}"
                f"{tail(os.path.join(self.squid_dir, 'cache.log'))}"
            )
        self.table(
            CACHE_TABLE,
            "  chain prerouting {\n    type nat hook prerouting priority dstnat;\n"
            f'    iifname "olan" tcp dport 80 counter redirect to :{SQUID_PORT}\n  }}\n',
        )

    def stop_squid(self):
        self.drop(CACHE_TABLE)
        p, self.squid = self.squid, None
        procs.stop(p)
        self.flush_conntrack()

    def squid_log(self, mark=0):
        return read_from(os.path.join(self.squid_dir, "access.log"), mark)

    def squid_log_mark(self):
        return size_of(os.path.join(self.squid_dir, "access.log"))

    # ---- faults ---------------------------------------------------------------------------
    def uplink(self, up):
        """The router's WAN link (admin state; its routes out go with it and come back)."""
        if up:
            sh("ip", "-n", self.router, "link", "set", "owan", "up")
            self.wan_routes()
            for net in (LAN_V6_NET, LAN6_V6_NET):
                sh("ip", "-n", self.inet, "-6", "route", "replace", net, "via", WAN_V6)
        else:
            sh("ip", "-n", self.router, "link", "set", "owan", "down")
        self.flush_conntrack()

    def forge_echo(self, on):
        """The router answers every echo request from the dual-stack LAN itself (DNAT to its own
        LAN address, both families): the replies carry the target's address as their source and
        the router's initial TTL / hop limit (64), where a real target one router away is seen at
        63."""
        if on:
            self.table(
                FORGE_TABLE,
                "  chain prerouting {\n    type nat hook prerouting priority dstnat;\n"
                f'    iifname "olan" icmp type echo-request counter dnat ip to {LAN_V4}\n'
                f'    iifname "olan" icmpv6 type echo-request counter dnat ip6 to {LAN_V6}\n  }}\n',
            )
        else:
            self.drop(FORGE_TABLE)
        self.flush_conntrack()

    def middlebox(self, on):
        """Every TCP connection from the dual-stack LAN, any address and any port, is redirected
        to the router's silent listener: every handshake completes, no byte ever comes."""
        if on:
            self.table(
                BOX_TABLE,
                "  chain prerouting {\n    type nat hook prerouting priority dstnat;\n"
                f'    iifname "olan" meta l4proto tcp counter redirect to :{SILENT_PORT}\n  }}\n',
            )
        else:
            self.drop(BOX_TABLE)
        self.flush_conntrack()

    def counters(self, table):
        p = sh("ip", "netns", "exec", self.router, "nft", "list", "table", *table, check=False)
        return ", ".join(m for m in re.findall(r"counter packets \d+", p.stdout)) or "no counters"

    def table(self, table, body):
        self.drop(table)
        self.nft(f"table {table[0]} {table[1]} {{\n{body}}}\n")

    def drop(self, table):
        netns.nft_delete(self.router, *table)

    def nft(self, text):
        netns.nft(self.router, text)

    def flush_conntrack(self):
        netns.flush_conntrack(self.router)

    # ---- witnesses from the clients -------------------------------------------------------
    def witness(self, *args, ns=None):
        p = sh(
            "ip",
            "netns",
            "exec",
            ns or self.client,
            "python3",
            os.path.join(self.work, "witness.py"),
            *args,
            check=False,
            timeout=10,
        )
        return p.stdout.strip() or (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]

    def curl(self, url, ns=None, headers=()):
        """curl from a client: `STATUS body-prefix`, or curl's error."""
        p = sh(
            "ip",
            "netns",
            "exec",
            ns or self.client,
            "curl",
            "-sS",
            "--max-time",
            "2",
            "-w",
            " %{http_code}",
            *[x for h in headers for x in ("-H", h)],
            url,
            check=False,
            timeout=10,
        )
        if p.returncode != 0:
            return f"curl exit {p.returncode}"
        body, _, code = p.stdout.rpartition(" ")
        return f"{code} {body.strip()[:32]!r}" if body.strip() else code
