"""The hop lab's network and processes: a chain of namespaces, its nft rules (cuts, a silent
router, the echo counters on the gateway), the web target and the exporter.

    site ──link 1── R1 ──link 2── R2 ──link 3── R3 ──link 4── R4 ──link 5── inet
    (exporter)     (gateway)                                              (targets)

Node i is hop i from the site (R1 is hop 1, inet hop 5). Link k joins node k-1 (its interface
`wan`) and node k (its interface `lan`); node k holds 198.18.k.1 and 2001:db8:k::1 on it, node k-1
198.18.k.2 and 2001:db8:k::2. A router answers time exceeded from its address toward the site,
so hop k is 198.18.k.1 / 2001:db8:k::1. The targets are 198.19.0.1 and 2001:db8:ff::1 on inet's
loopback (ICMP echo, HTTP 204 on port 80). Benchmark and documentation addresses, no route to
the host: every packet stays in the namespaces made here."""

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.request
from html import unescape

from .. import netns, procs
from ..exposition import Exposition
from ..util import log, run

# The directory holding the rxlab package (the web target runs as `python3 -m rxlab...`).
ROUTERS = 4
NODES = ("site", "r1", "r2", "r3", "r4", "inet")  # node i is hop i
TARGET = {"ipv4": "198.19.0.1", "ipv6": "2001:db8:ff::1"}
FAMILIES = ("ipv4", "ipv6")
WEB_PORT = 80
EXPORTER_PORT = 10361
# The echoes a trace sends carry a TTL / hop limit of at most this (ICMPGatewayProber.traceHops);
# the exporter's own probes and gateway checks leave with the system default (64).
TRACE_TTL_MAX = 16
ROUTER_SYSCTLS = (
    "net.ipv4.ip_forward=1",
    "net.ipv6.conf.all.forwarding=1",
    # Every router answers every burst: no ICMP rate limit to flake the rows.
    "net.ipv4.icmp_ratelimit=0",
    "net.ipv6.icmp.ratelimit=0",
)


def address(link, end, family):
    """The address of link `link`'s end `end` (1: the node farther from the site, 2: nearer)."""
    return f"198.18.{link}.{end}" if family == "ipv4" else f"2001:db8:{link}::{end}"


def hop_address(hop, family):
    """The address hop `hop` answers from: its end of the link toward the site."""
    return address(hop, 1, family)


def probe_flags(timeout="800ms"):
    v4, v6 = TARGET["ipv4"], TARGET["ipv6"]
    return [
        f"--probe.icmp={v4}",
        f"--probe.icmp={v6}",
        f"--probe.http=http://{v4}/generate_204",
        f"--probe.http=http://[{v6}]/generate_204",
        f"--probe.timeout={timeout}",
    ]


class Chain:
    """The namespaces, links, routes and rules; `close()` stops what was started and deletes
    every namespace made (also after a failure half-way through `build`)."""

    def __init__(self, prefix, exporter_bin, keep=False):
        self.prefix, self.exporter_bin, self.keep = prefix, exporter_bin, keep
        self.names = {node: f"{prefix}-{node}" for node in NODES}
        self.namespaces = netns.Namespaces(
            sysctls=netns.Namespaces.QUIET_IPV6 + ("net.ipv4.ping_group_range=0 2147483647",)
        )
        self.work = tempfile.mkdtemp(prefix=f"{prefix}-")
        self.history_dir = os.path.join(self.work, "history")
        self.exporter_log = os.path.join(self.work, "exporter.log")
        self.processes, self.exporter, self.cuts = [], None, set()

    def ns(self, node):
        return self.names[node]

    # ---- topology -------------------------------------------------------------------------
    def build(self):
        for node in NODES:
            self.namespaces.add(self.ns(node))
        for node in NODES[1:-1]:
            netns.sysctl(self.ns(node), *ROUTER_SYSCTLS)
        netns.sysctl(self.ns("inet"), "net.ipv4.icmp_ratelimit=0", "net.ipv6.icmp.ratelimit=0")
        for link in range(1, len(NODES)):
            near, far = self.ns(NODES[link - 1]), self.ns(NODES[link])
            netns.Namespaces.veth(near, "wan", far, "lan")
            netns.addresses(near, "wan", f"{address(link, 2, 'ipv4')}/24", f"{address(link, 2, 'ipv6')}/64")
            netns.addresses(far, "lan", f"{address(link, 1, 'ipv4')}/24", f"{address(link, 1, 'ipv6')}/64")
        # Toward inet: every node but inet routes by default to the far end of its `wan` link.
        # Back: each router reaches the links behind it over its `lan` link; inet's default is back.
        for i, node in enumerate(NODES):
            ns = self.ns(node)
            if node != "inet":
                run("ip", "-n", ns, "route", "add", "default", "via", address(i + 1, 1, "ipv4"))
                run("ip", "-n", ns, "-6", "route", "add", "default", "via", address(i + 1, 1, "ipv6"))
            else:
                run("ip", "-n", ns, "route", "add", "default", "via", address(i, 2, "ipv4"))
                run("ip", "-n", ns, "-6", "route", "add", "default", "via", address(i, 2, "ipv6"))
                continue
            for earlier in range(1, i):
                run("ip", "-n", ns, "route", "add", f"198.18.{earlier}.0/24", "via", address(i, 2, "ipv4"))
                run("ip", "-n", ns, "-6", "route", "add", f"2001:db8:{earlier}::/64", "via", address(i, 2, "ipv6"))
        inet = self.ns("inet")
        run("ip", "-n", inet, "addr", "add", f"{TARGET['ipv4']}/32", "dev", "lo")
        run("ip", "-n", inet, "addr", "add", f"{TARGET['ipv6']}/128", "dev", "lo", "nodad")
        self.count_echoes()

    def start_web(self):
        """The HTTP 204 target on inet's [::]:80 (both families)."""
        log = os.path.join(self.work, "http204.log")
        procs.start_module(self.ns("inet"), ("rxlab.hoplab.http204", str(WEB_PORT)), log, "ready", self.processes)

    # ---- faults ---------------------------------------------------------------------------
    def cut(self, hop, on=True):
        """Router `hop` (1..4) drops what it would forward on toward inet (its `wan` link): it still
        answers echoes that expire at it with time exceeded, nothing passes it."""
        ns = self.ns(NODES[hop])
        if on:
            netns.nft(
                ns,
                "table inet rxhopcut {\n  chain forward {\n    type filter hook forward priority 0;\n"
                '    oifname "wan" drop\n  }\n}\n',
            )
            self.cuts.add(hop)
        else:
            netns.nft_delete(ns, "inet", "rxhopcut", check=True)
            self.cuts.discard(hop)

    def silence(self, hop, on=True):
        """Router `hop` sends no time exceeded (its own ICMP output dropped), like many carrier routers."""
        ns = self.ns(NODES[hop])
        if on:
            netns.nft(
                ns,
                "table inet rxhopsilent {\n  chain out {\n    type filter hook output priority 0;\n"
                "    icmp type time-exceeded drop\n    icmpv6 type time-exceeded drop\n  }\n}\n",
            )
        else:
            netns.nft_delete(ns, "inet", "rxhopsilent", check=True)

    def heal(self):
        """Every cut and silence of this lab undone (quietly: whatever is in place)."""
        for node in NODES[1:-1]:
            for table in ("rxhopcut", "rxhopsilent"):
                netns.nft_delete(self.ns(node), "inet", table)
        self.cuts.clear()

    # ---- the gateway's echo counters ------------------------------------------------------
    def count_echoes(self):
        """Counters on R1 of the echo requests arriving from the site: trace4/trace6 those with a
        TTL / hop limit of at most 16 (a trace's), echo4/echo6 the others (probes, gateway checks:
        the witness that the counters see the exporter's echoes at all)."""
        t = TRACE_TTL_MAX
        netns.nft(
            self.ns("r1"),
            "table inet rxhopcount {\n"
            "  counter trace4 {}\n  counter trace6 {}\n  counter echo4 {}\n  counter echo6 {}\n"
            "  chain pre {\n    type filter hook prerouting priority -300;\n"
            f'    iifname "lan" icmp type echo-request ip ttl <= {t} counter name "trace4"\n'
            f'    iifname "lan" icmp type echo-request ip ttl > {t} counter name "echo4"\n'
            f'    iifname "lan" icmpv6 type echo-request ip6 hoplimit <= {t} counter name "trace6"\n'
            f'    iifname "lan" icmpv6 type echo-request ip6 hoplimit > {t} counter name "echo6"\n'
            "  }\n}\n",
        )

    def echoes(self):
        """{trace4, trace6, echo4, echo6}: packets counted so far."""
        out = run("ip", "netns", "exec", self.ns("r1"), "nft", "-j", "list", "counters", "table", "inet", "rxhopcount")
        counts = {}
        for item in json.loads(out.stdout).get("nftables", []):
            c = item.get("counter")
            if c:
                counts[c["name"]] = c["packets"]
        return counts

    # ---- the exporter ---------------------------------------------------------------------
    def exporter_env(self):
        return ["ip", "netns", "exec", self.ns("site"), "env", "REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1"]

    def start_exporter(self):
        """The daemon in the site namespace, on its 127.0.0.1 (the driver has entered the site)."""
        os.makedirs(self.history_dir, exist_ok=True)
        argv = self.exporter_env() + [
            self.exporter_bin,
            f"--web.listen-address=127.0.0.1:{EXPORTER_PORT}",
            "--log.level=debug",
            f"--history.dir={self.history_dir}",
            "--probe.interval=1s",
            "--probe.fail-after=1",
            "--probe.recover-after=1",
            *probe_flags(),
        ]
        self.exporter = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=open(self.exporter_log, "w"))
        self.processes.append(self.exporter)
        deadline = time.time() + 20
        while time.time() < deadline:
            if self.exporter.poll() is not None:
                raise RuntimeError(f"the exporter exited {self.exporter.returncode}: {self.tail(20)}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{EXPORTER_PORT}/-/ready", timeout=1) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError("the exporter did not become ready within 20 s")

    def get(self, path):
        with urllib.request.urlopen(f"http://127.0.0.1:{EXPORTER_PORT}{path}", timeout=2) as r:
            return r.read().decode(errors="replace")

    def scrape(self):
        return Exposition(self.get("/metrics"))

    def status_faults(self):
        """The status page's 'breaks at' line of each family's card: {family: text}."""
        page, out = self.get("/"), {}
        for family in FAMILIES:
            card = re.search(rf'<div class="scope" id="scope-{family}"[^>]*>(.*?)</div>', page, re.S)
            found = card and re.search(r"<small>breaks at: (.*?)</small>", card.group(1), re.S)
            out[family] = unescape(found.group(1)) if found else ""
        return out

    def check(self, *flags):
        """`reachability_exporter check` in the site namespace: (exit status, stdout, stderr)."""
        p = subprocess.run(
            self.exporter_env() + [self.exporter_bin, "check", *probe_flags(), *flags],
            capture_output=True,
            text=True,
            timeout=30,
        )
        return p.returncode, p.stdout, p.stderr

    def records(self, kind, after):
        """The history's records of `kind` (`round`, `transition`) made after `after`
        (docs/history-format.md)."""
        out = []
        for name in sorted(os.listdir(self.history_dir)) if os.path.isdir(self.history_dir) else ():
            if not name.endswith(".jsonl"):
                continue
            with open(os.path.join(self.history_dir, name), errors="replace") as f:
                for line in f:
                    try:
                        record = json.loads(line)
                    except ValueError:
                        continue  # a line being written
                    if record.get("type") == kind and record.get("time", 0) >= after - 0.5:
                        out.append(record)
        return out

    def tail(self, lines=12):
        try:
            with open(self.exporter_log, errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""

    def close(self):
        procs.stop_all(self.processes)
        self.namespaces.close()
        if not self.keep:
            shutil.rmtree(self.work, ignore_errors=True)
        else:
            log(f"hop lab: logs and history kept in {self.work}")
