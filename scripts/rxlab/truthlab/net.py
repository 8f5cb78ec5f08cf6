"""The truth lab's bench: one per row, in namespaces of its own (PREFIX-ROW-cli/-rtr/-inet),
so rows can run side by side.

    cli (the exporter) --lan0/rlan-->  rtr (forwarding, nftables)  --rwan/uwan-->  inet
        [--SECOND/rsec--> rtr]                                      (the lab internet)

- cli: 192.168.42.2/24 and 2001:db8:42::2/64 on lan0 (default routes via the router), and,
  for the uplink rows, a second link SECOND (192.168.43.2/24, 2001:db8:43::2/64, default routes
  of metric 200); a resolver file naming the router's dnsmasq when the row asks for names.
- rtr: forwards both families (no NAT: inet routes the LAN prefixes back); dnsmasq on demand
  (www.example.com as a host record, the router's own answer); faults are nft tables of their own.
- inet: the lab internet on its loopback, at the fault lab's addresses (198.51.100.1,
  2001:db8:100::1, www.example.com): HTTP 204 on 80, HTTPS 204 on 443 (a lab CA the exporter
  trusts through SSL_CERT_FILE), a stream server on 9000.

Only documentation, private and unique-local ranges; nothing routes out of the namespaces."""

import json
import os
import subprocess
import time

from .. import netns, procs
from ..exposition import Exposition
from ..faultlab.addresses import LAB_NAME, V4_NET, V6_NET
from ..faultlab.daemons import DNSMASQ
from ..util import read_from, run, tail, wait_until

PORT = 10391
STREAM_PORT = 9000
LAN4, CLI4 = "192.168.42.1", "192.168.42.2"
LAN6, CLI6 = "2001:db8:42::1", "2001:db8:42::2"
SEC4, SEC6 = ("192.168.43.1", "192.168.43.2"), ("2001:db8:43::1", "2001:db8:43::2")
WAN4, WAN6 = ("10.99.0.1", "10.99.0.2"), ("fd99::1", "fd99::2")
# Row 2's own public address (a /32 on the client's loopback: this kernel has no dummy links) and on-link IPv6 neighbour (a global
# address of the LAN's /64 on the router's LAN side, not the gateway's).
OWN4, ONLINK6 = "203.0.113.77", "2001:db8:42::99"
TRACK = (
    "table inet rxtrack {\n  counter tracked {}\n  chain forward_track {\n"
    "    type filter hook forward priority -10;\n    ct state established,related counter name tracked\n  }\n}\n"
)


class Bench:
    def __init__(self, prefix, row, binary, work):
        self.row, self.binary = row, binary
        self.cli, self.rtr, self.inet = (f"{prefix}-{row}-{n}" for n in ("cli", "rtr", "inet"))
        self.work = os.path.join(work, row)
        os.makedirs(self.work, exist_ok=True)
        self.ca = os.path.join(work, "ca.pem")
        self.certs = (os.path.join(work, "server.pem"), os.path.join(work, "server.key"))
        self.spaces = netns.Namespaces(sysctls=netns.Namespaces.QUIET_IPV6)
        self.resolv = netns.ResolvConf()
        self.processes, self.exporter, self.worker, self.second = [], None, None, None
        self.closed = False
        self.exporter_log = os.path.join(self.work, "exporter.log")

    # ---- topology ---------------------------------------------------------------------------
    def build(self, second=None, dns=False):
        c, r, i = (self.spaces.add(n) for n in (self.cli, self.rtr, self.inet))
        netns.sysctl(r, "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1", "net.ipv4.icmp_ratelimit=0")
        self.spaces.veth(c, "lan0", r, "rlan")
        netns.addresses(c, "lan0", f"{CLI4}/24", f"{CLI6}/64")
        netns.addresses(r, "rlan", f"{LAN4}/24", f"{LAN6}/64")
        run("ip", "-n", c, "route", "add", "default", "via", LAN4, "dev", "lan0", "metric", "100")
        run("ip", "-n", c, "-6", "route", "add", "default", "via", LAN6, "dev", "lan0", "metric", "100")
        if second:
            self.second = second
            # `name`/`dev` spelled out: an interface may be called `up` (row 4).
            run("ip", "-n", c, "link", "add", "name", second, "type", "veth", "peer", "name", "rsec", "netns", r)
            run("ip", "-n", c, "addr", "add", f"{SEC4[1]}/24", "dev", second)
            run("ip", "-n", c, "addr", "add", f"{SEC6[1]}/64", "dev", second, "nodad")
            run("ip", "-n", c, "link", "set", "dev", second, "up")
            netns.addresses(r, "rsec", f"{SEC4[0]}/24", f"{SEC6[0]}/64")
            run("ip", "-n", c, "route", "add", "default", "via", SEC4[0], "dev", second, "metric", "200")
            run("ip", "-n", c, "-6", "route", "add", "default", "via", SEC6[0], "dev", second, "metric", "200")
            # Replies to the second link's address come back on it although main routes by lan0.
            netns.sysctl(c, "net.ipv4.conf.all.rp_filter=0", f"net.ipv4.conf.{second}.rp_filter=0")
        self.spaces.veth(r, "rwan", i, "uwan")
        netns.addresses(r, "rwan", f"{WAN4[0]}/24", f"{WAN6[0]}/64")
        netns.addresses(i, "uwan", f"{WAN4[1]}/24", f"{WAN6[1]}/64")
        # The router tracks connections from the start, as a real one does: conntrack runs in a
        # namespace only once a rule needs it, and a flow it picks up midway is NEW.
        netns.nft(r, TRACK)
        run("ip", "-n", r, "route", "add", "default", "via", WAN4[1])
        run("ip", "-n", r, "-6", "route", "add", "default", "via", WAN6[1])
        run("ip", "-n", i, "route", "add", "192.168.42.0/23", "via", WAN4[0])
        run("ip", "-n", i, "-6", "route", "add", "2001:db8:42::/63", "via", WAN6[0])
        run("ip", "-n", i, "addr", "add", f"{V4_NET}/32", "dev", "lo")
        run("ip", "-n", i, "addr", "add", f"{V6_NET}/128", "dev", "lo")
        self.serve(i, "web", *self.certs)
        self.serve(i, "stream", str(STREAM_PORT))
        if dns:
            self.dnsmasq()
        self.worker = netns.NsWorker(c)
        if not wait_until(lambda: self.worker.connect(V4_NET, 80) == "connected", 10):
            raise RuntimeError("the client does not reach the lab internet")

    def dnsmasq(self):
        """The router's resolver: www.example.com answered by dnsmasq itself (no upstream), the
        client's resolv.conf naming it."""
        log = os.path.join(self.work, "dnsmasq.log")
        argv = [
            "ip", "netns", "exec", self.rtr, *DNSMASQ, "--interface=rlan", "--bind-dynamic", "--user=root",
            "--pid-file=", f"--host-record={LAB_NAME},{V4_NET},{V6_NET}", "--log-queries",
        ]  # fmt: skip
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(log, "w"))
        self.processes.append(p)
        self.resolv.write(self.cli, f"nameserver {LAN4}\n")
        if not wait_until(lambda: p.poll() is None and "started" in tail(log, 20), 10, 0.1):
            raise RuntimeError(f"dnsmasq did not start: {tail(log)}")

    def serve(self, ns, kind, *args, expect="ready"):
        """Starts a truthlab server (or client) in `ns`; returns its Popen once it says `expect`."""
        log = os.path.join(self.work, f"{kind}.log")
        return procs.start_module(ns, ("rxlab.truthlab.servers", kind, *args), log, expect, self.processes)

    def stop(self, p):
        procs.stop(p, grace=2)
        if p in self.processes:
            self.processes.remove(p)

    # ---- faults: one nft table each, deleted to undo ------------------------------------------
    def fault(self, name, chains, ns=None):
        """Loads table inet NAME in the router (or `ns`): `chains` is {chain: (hook, rules)}."""
        ns = ns or self.rtr
        netns.nft_delete(ns, "inet", name)
        body = "".join(
            f"  chain {c} {{\n    type filter hook {hook} priority 0;\n"
            + "".join(f"    {r}\n" for r in rules)
            + "  }\n"
            for c, (hook, rules) in chains.items()
        )
        netns.nft(ns, f"table inet {name} {{\n{body}}}\n")

    def undo(self, name, ns=None):
        netns.nft_delete(ns or self.rtr, "inet", name)

    def nft_json(self, *what, ns=None):
        out = run("ip", "netns", "exec", ns or self.rtr, "nft", "-j", "list", *what)
        return json.loads(out.stdout).get("nftables", [])

    def counters(self, table):
        """{name: (packets, bytes)} of the named counters of table inet `table` on the router."""
        got = {}
        for item in self.nft_json("counters", "table", "inet", table):
            c = item.get("counter")
            if c:
                got[c["name"]] = (c["packets"], c["bytes"])
        return got

    # ---- the exporter -------------------------------------------------------------------------
    def env(self):
        return ["env", "REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1", f"SSL_CERT_FILE={self.ca}"]

    def config(self, text, name="config.yml"):
        path = os.path.join(self.work, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def start_exporter(self, *flags, ready=None, timeout=25):
        """Starts the exporter in cli with `flags`; waits until it serves and `ready(scrape)`
        holds (by default: the overall verdict is full). Returns the seconds that took."""
        self.stop_exporter()
        argv = [
            "ip", "netns", "exec", self.cli, *self.env(), self.binary,
            f"--web.listen-address=127.0.0.1:{PORT}", *flags,
        ]  # fmt: skip
        t0 = time.time()
        with open(self.exporter_log, "a") as f:
            f.write(f"---- start {time.strftime('%H:%M:%S')}: {' '.join(flags)}\n")
        mark = os.path.getsize(self.exporter_log)
        self.exporter = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=open(self.exporter_log, "a"))
        self.processes.append(self.exporter)
        ready = ready or (lambda m: m.verdict("overall")[0] == "full")
        if not wait_until(lambda: self.exporter.poll() is None and ready(self.scrape()), timeout, 0.1):
            code = self.exporter.poll()
            said = read_from(self.exporter_log, mark).strip().splitlines()[-3:]
            state = f"exited {code}" if code is not None else "never got ready"
            raise RuntimeError(f"the exporter {state}: {' | '.join(said)}")
        return time.time() - t0

    def stop_exporter(self):
        if self.exporter is not None:
            code = procs.stop(self.exporter, grace=10)
            self.processes.remove(self.exporter)
            self.exporter = None
            return code
        return None

    def get(self, path, timeout=3):
        if self.closed:  # an interrupted lab closed the bench under its row: the row ends
            raise RuntimeError("the bench is closed")
        status, body = self.worker.get(f"http://127.0.0.1:{PORT}{path}", timeout=timeout)
        if status != 200:
            raise OSError(f"GET {path}: {status}")
        return body

    def scrape(self):
        return Exposition(self.get("/metrics"))

    def verdict(self, scope="overall"):
        return self.scrape().verdict(scope)

    def tail(self, lines=8):
        return tail(self.exporter_log, lines)

    def log_text(self):
        try:
            with open(self.exporter_log, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def check(self, *flags, timeout=30):
        """`reachability_exporter check FLAGS --output=json` in cli: (exit status, parsed JSON or
        None, stderr)."""
        p = run(
            "ip", "netns", "exec", self.cli, *self.env(), self.binary, "check", *flags, "--output=json",
            check=False, timeout=timeout,
        )  # fmt: skip
        try:
            return p.returncode, json.loads(p.stdout), p.stderr
        except ValueError:
            return p.returncode, None, (p.stdout + p.stderr)[-300:]

    def close(self):
        if self.closed:
            return
        self.closed = True
        if self.worker:
            self.worker.stop()
        procs.stop_all(self.processes, grace=3)
        self.processes = []
        self.spaces.close()
        self.resolv.close()
