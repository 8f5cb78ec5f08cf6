"""The captive lab's bench: one per row, in namespaces of its own (PREFIX-ROW-cli/-rtr/-inet), so
rows can run side by side.

    cli (exporter, udhcpc, dhclient -6) --lan0/rlan--> rtr (forwarding, nftables) --rwan/uwan--> inet

- cli: 2001:db8:42::2/64 on lan0 (static, default route via the router); IPv4 static
  (192.168.42.2/24) or by busybox udhcpc; lan0 takes the kernel's RA processing (accept_ra=2,
  forwarding 0) so the RA options reach rtnetlink, but no route, prefix or hop limit from RAs;
  the kernel sends no Router Solicitations of its own (router_solicitations=0), so every RS the
  router counts once the bench is built is the exporter's.
- rtr: 192.168.42.1/24 and 2001:db8:42::1/64 on rlan; dnsmasq (DHCPv4 and DHCPv6, DHCP only,
  options from a file it re-reads on SIGHUP: 114 and option6:103), nginx (api.py: the RFC
  8908 API, the hostile answers, the port 80 portal), the RA sender (servers.py ra), the slow
  API (servers.py drip). "Captive" is an nft table dropping everything forwarded to or from
  the LAN: the router itself (API, DHCP) stays reachable.
- inet: the lab internet on its loopback, 198.51.100.1 and 2001:db8:100::1: HTTP 204 on 80,
  HTTPS 204 on 443 with the lab CA (truthlab's web server).

Only documentation, private and unique-local ranges; nothing routes out of the namespaces."""

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time

from .. import netns, procs
from ..exposition import Exposition
from ..faultlab.addresses import V4_NET, V6_NET
from ..faultlab.daemons import DNSMASQ
from ..util import read_from, run, tail, wait_until
from . import api
from .api import LAN4, LAN6
from .clients import DhcpClients

PORT = 10393
CLI4, CLI6 = "192.168.42.2", "2001:db8:42::2"
WAN4, WAN6 = ("10.99.0.1", "10.99.0.2"), ("fd99::1", "fd99::2")
PREF64 = "2001:db8:64::/96"
CAPTIVE_NFT = (
    "table inet rxcaptive {\n  chain forward {\n    type filter hook forward priority 0;\n"
    '    iifname "rlan" drop\n    oifname "rlan" drop\n  }\n}\n'
)
INTERCEPT_NFT = (
    "table inet rxintercept {\n  chain pre {\n    type nat hook prerouting priority dstnat;\n"
    f'    iifname "rlan" ip daddr != {LAN4} tcp dport 80 dnat ip to {LAN4}:{api.PORTAL_PORT}\n'
    f'    iifname "rlan" ip6 daddr != {LAN6} tcp dport 80 dnat ip6 to [{LAN6}]:{api.PORTAL_PORT}\n'
    "  }\n}\n"
)


class Bench(DhcpClients):
    def __init__(self, prefix, row, binary, work):
        self.row, self.binary, self.top = row, binary, work
        self.cli, self.rtr, self.inet = (f"{prefix}-{row}-{n}" for n in ("cli", "rtr", "inet"))
        self.work = os.path.join(work, row)
        os.makedirs(self.work, exist_ok=True)
        self.ca = os.path.join(work, "ca.pem")
        self.pair = {
            n: (os.path.join(work, f"{n}.pem"), os.path.join(work, f"{n}.key")) for n in ("server", "other", "rogue")
        }
        self.hooks = os.path.join(self.work, "captive-portal")
        os.makedirs(self.hooks, mode=0o755, exist_ok=True)
        os.chmod(self.hooks, 0o755)
        self.spaces = netns.Namespaces(sysctls=netns.Namespaces.QUIET_IPV6)
        self.processes, self.exporter, self.worker = [], None, None
        self.dnsmasq = self.ra = self.udhcpc = self.dhclient = None
        self.closed, self.start_solicitations = False, None
        self.exporter_log = os.path.join(self.work, "exporter.log")
        self.opts = os.path.join(self.work, "dhcp-options")

    # ---- topology ---------------------------------------------------------------------------
    def build(self, static4=True):
        c, r, i = (self.spaces.add(n) for n in (self.cli, self.rtr, self.inet))
        netns.sysctl(r, "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1", "net.ipv4.icmp_ratelimit=0")
        self.spaces.veth(c, "lan0", r, "rlan")
        # The kernel hands RA options to rtnetlink only when it processes RAs itself; nothing else
        # of the RA (route, prefix, hop limit) is taken, so routing stays what the lab sets.
        netns.sysctl(
            c, "net.ipv6.conf.lan0.accept_ra=2", "net.ipv6.conf.lan0.accept_ra_defrtr=0",
            "net.ipv6.conf.lan0.accept_ra_pinfo=0", "net.ipv6.conf.lan0.autoconf=0",
            "net.ipv6.conf.lan0.router_solicitations=0",  # every RS the router sees is the exporter's
        )  # fmt: skip
        netns.addresses(c, "lan0", *([f"{CLI4}/24"] if static4 else []), f"{CLI6}/64")
        netns.addresses(r, "rlan", f"{LAN4}/24", f"{LAN6}/64")
        if static4:
            run("ip", "-n", c, "route", "add", "default", "via", LAN4, "dev", "lan0", "metric", "100")
        run("ip", "-n", c, "-6", "route", "add", "default", "via", LAN6, "dev", "lan0", "metric", "100")
        self.spaces.veth(r, "rwan", i, "uwan")
        netns.addresses(r, "rwan", f"{WAN4[0]}/24", f"{WAN6[0]}/64")
        netns.addresses(i, "uwan", f"{WAN4[1]}/24", f"{WAN6[1]}/64")
        run("ip", "-n", r, "route", "add", "default", "via", WAN4[1])
        run("ip", "-n", r, "-6", "route", "add", "default", "via", WAN6[1])
        run("ip", "-n", i, "route", "add", "192.168.42.0/24", "via", WAN4[0])
        run("ip", "-n", i, "-6", "route", "add", "2001:db8:42::/64", "via", WAN6[0])
        run("ip", "-n", i, "addr", "add", f"{V4_NET}/32", "dev", "lo")
        run("ip", "-n", i, "addr", "add", f"{V6_NET}/128", "dev", "lo")
        procs.start_module(
            i, ("rxlab.truthlab.servers", "web", *self.pair["server"]), self.path("web.log"), "ready", self.processes
        )
        self.start_nginx()
        self.start_dnsmasq()
        self.ra = self.start_piped(r, ("rxlab.captivelab.servers", "ra", "rlan"), "ra.log")
        procs.start_module(
            r, ("rxlab.captivelab.servers", "drip", *self.pair["server"], str(api.SLOW_PORT)), self.path("drip.log"),
            "ready", self.processes,
        )  # fmt: skip
        self.worker = netns.NsWorker(c)
        if not wait_until(lambda: self.connects(V4_NET if static4 else V6_NET, 80), 10):
            raise RuntimeError("the client does not reach the lab internet")
        # A router just made drops the first solicitations it gets (seen: the client sends them,
        # both veth ends carry them, the router counts Ip6InNoRoutes): the rows start once it
        # hears one of ours. Disarmed, it answers none, so the client learns nothing from them.
        if not wait_until(self.router_hears, 5, 0.05):
            raise RuntimeError("the router hears no Router Solicitation")

    def router_hears(self):
        before = self.ra_counts()[0]
        self.solicit()
        return wait_until(lambda: self.ra_counts()[0] > before, 0.3, 0.05)

    def solicit(self):
        """A Router Solicitation from cli's lan0 to ff02::2, as a host sends one."""

        def send():
            s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
            try:
                index = socket.if_nametoindex("lan0")
                s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 255)
                s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, index)
                s.sendto(struct.pack("!BBHI", 133, 0, 0, 0), ("ff02::2", 0, 0, index))
            finally:
                s.close()

        self.worker.call(send)

    def connects(self, host, port, timeout=1.5):
        """Whether a TCP connection from cli to (host, port) is accepted (either family)."""

        def attempt():
            try:
                with socket.create_connection((host, port), timeout=timeout):
                    return True
            except OSError:
                return False

        return self.worker.call(attempt, timeout + 5)

    def path(self, name):
        return os.path.join(self.work, name)

    def start_nginx(self):
        api.write_answer(self.work, api.LOGGED_IN)
        conf = self.path("nginx.conf")
        with open(conf, "w") as f:
            f.write(api.nginx_conf(self.work, os.path.join(self.top, "hostile"), *self.pair.values()))
        log = self.path("nginx.log")
        argv = ["ip", "netns", "exec", self.rtr, "nginx", "-p", self.work, "-c", conf, "-e", "stderr"]
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(log, "w"))
        self.processes.append(p)
        ok = wait_until(lambda: p.poll() is None and "start worker process" in tail(log, 50), 10, 0.1)
        if not ok:
            raise RuntimeError(f"nginx did not start: {tail(log, 5)}")

    def start_dnsmasq(self):
        """DHCPv4 and DHCPv6 on rlan, no DNS; the options (114, option6:103) from a file."""
        with open(self.opts, "w"):
            pass
        log = self.path("dnsmasq.log")
        argv = [
            "ip", "netns", "exec", self.rtr, *DNSMASQ, "--port=0", "--interface=rlan", "--bind-dynamic",
            "--user=root", "--pid-file=", "--no-ping", "--dhcp-authoritative", "--log-dhcp",
            f"--dhcp-leasefile={self.path('dnsmasq.leases')}", f"--dhcp-optsfile={self.opts}",
            "--dhcp-range=192.168.42.100,192.168.42.150,255.255.255.0,1h",
            "--dhcp-range=2001:db8:42::100,2001:db8:42::150,64,1h",
        ]  # fmt: skip
        self.dnsmasq = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(log, "w")
        )
        self.processes.append(self.dnsmasq)
        if not wait_until(lambda: self.dnsmasq.poll() is None and "started" in tail(log, 20), 10, 0.1):
            raise RuntimeError(f"dnsmasq did not start: {tail(log)}")

    def dhcp_options(self, *lines):
        """What dnsmasq sends from now on (when asked): `114,"URI"`, `option6:103,"URI"`."""
        with open(self.opts, "w") as f:
            f.write("".join(line + "\n" for line in lines))
        mark = os.path.getsize(self.path("dnsmasq.log"))
        self.dnsmasq.send_signal(signal.SIGHUP)
        wait_until(lambda: "read " + self.opts in read_from(self.path("dnsmasq.log"), mark), 3, 0.05)

    def start_piped(self, ns, module_args, log_name):
        """A servers.py process whose stdin takes commands; returns its Popen once ready."""
        scripts = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        p = subprocess.Popen(
            ["ip", "netns", "exec", ns, sys.executable, "-m", *module_args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(self.path(log_name), "a"), text=True,
            env=dict(os.environ, PYTHONPATH=scripts, PYTHONDONTWRITEBYTECODE="1"),
        )  # fmt: skip
        self.processes.append(p)
        if not p.stdout.readline().startswith("ready"):
            raise RuntimeError(f"{' '.join(module_args)} did not start: {tail(self.path(log_name), 3)}")
        return p

    def ra_command(self, line):
        self.ra.stdin.write(line + "\n")
        self.ra.stdin.flush()
        return self.ra.stdout.readline().strip()

    def announce(self, uri=api.API4, pref64=PREF64):
        """Arms the router's RA with option 37 (`uri`) and PREF64 and sends it now; its time."""
        said = self.ra_command(f"announce {uri or '-'} {pref64 or '-'}")
        if not said.startswith("sent "):
            raise RuntimeError(f"the RA sender said {said!r}")
        return float(said.split()[1])

    def arm(self, uri=api.API4, pref64=PREF64):
        """Arms the router's RA without sending it: only a Router Solicitation gets it."""
        said = self.ra_command(f"arm {uri or '-'} {pref64 or '-'}")
        if said != "armed":
            raise RuntimeError(f"the RA sender said {said!r}")

    def ra_counts(self):
        """(router solicitations received, advertisements sent) by the router's RA sender."""
        words = self.ra_command("count").split()
        return int(words[1]), int(words[3])

    # ---- the network's states -----------------------------------------------------------------
    def captive(self, on):
        """The router forwards nothing for the LAN (on) or everything (off)."""
        netns.nft_delete(self.rtr, "inet", "rxcaptive")
        if on:
            netns.nft(self.rtr, CAPTIVE_NFT)

    def intercept(self, on):
        """The router DNATs the LAN's port 80 (both families) to its portal (302) or not."""
        netns.nft_delete(self.rtr, "inet", "rxintercept")
        if on:
            netns.nft(self.rtr, INTERCEPT_NFT)
        netns.flush_conntrack(self.rtr)

    def answer(self, what):
        api.write_answer(self.work, what)

    def hook_file(self, source="dhcp4", interface="lan0"):
        return os.path.join(self.hooks, f"{interface}.{source}")

    def write_hook_file(self, uri, source="dhcp4", mode=0o644):
        """Writes the hook file as the hook would (a rename), bypassing DHCP."""
        path = self.hook_file(source)
        tmp = path + ".lab-tmp"
        with open(tmp, "w") as f:
            f.write(uri + "\n")
        os.chmod(tmp, mode)
        os.replace(tmp, path)
        return time.time()

    # ---- the exporter -------------------------------------------------------------------------
    def config(self, interval="5s", timeout="2s", api_uri=None, enabled=True, name="config.yml"):
        portal = [f"  enabled: {str(enabled).lower()}", f"  dir: {self.hooks}", f"  ca_file: {self.ca}"]
        if api_uri:
            portal.append(f'  api: {{lan0: "{api_uri}"}}')
        text = "\n".join(
            [
                f"global: {{interval: {interval}, timeout: {timeout}, fail_after: 3, recover_after: 2}}",
                "captive_portal:", *portal, "probes:",
                f'  - {{name: captive4, type: http, target: "http://{V4_NET}/generate_204"}}',
                f'  - {{name: captive6, type: http, target: "http://[{V6_NET}]/generate_204"}}',
                f'  - {{name: secure4, type: https, target: "https://{V4_NET}/generate_204", http: {{tls: {{ca_file: {self.ca}}}}}}}',
                f"  - {{name: echo4, type: icmp, target: {V4_NET}}}",
                f'  - {{name: echo6, type: icmp, target: "{V6_NET}"}}',
            ]
        )  # fmt: skip
        path = self.path(name)
        with open(path, "w") as f:
            f.write(text + "\n")
        return path

    def env(self):
        return ["env", "REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1"]

    def start_exporter(self, config, ready=None, timeout=25):
        """Starts the daemon in cli; waits until it serves and `ready(scrape)` holds (default:
        overall full). Returns the seconds that took."""
        argv = ["ip", "netns", "exec", self.cli, *self.env(), self.binary, f"--config.file={config}",
                f"--web.listen-address=127.0.0.1:{PORT}"]  # fmt: skip
        t0, rs0 = time.time(), self.ra_counts()[0]
        mark = os.path.getsize(self.exporter_log) if os.path.exists(self.exporter_log) else 0
        self.exporter = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=open(self.exporter_log, "a"))
        self.processes.append(self.exporter)
        ready = ready or (lambda m: m.verdict("overall")[0] == "full")
        if not wait_until(lambda: self.exporter.poll() is None and ready(self.scrape()), timeout, 0.1):
            code = self.exporter.poll()
            said = read_from(self.exporter_log, mark).strip().splitlines()[-3:]
            state = f"exited {code}" if code is not None else f"never got ready (overall {self.safe_verdict()})"
            raise RuntimeError(f"the exporter {state}: {' | '.join(said)}")
        self.start_solicitations = self.ra_counts()[0] - rs0  # the kernel sends none (build)
        return time.time() - t0

    def stop_exporter(self):
        if self.exporter is not None:
            procs.stop(self.exporter, grace=10)
            self.processes.remove(self.exporter)
            self.exporter = None

    def get(self, path, timeout=3):
        if self.closed:
            raise RuntimeError("the bench is closed")
        status, body = self.worker.get(f"http://127.0.0.1:{PORT}{path}", timeout=timeout)
        if status != 200:
            raise OSError(f"GET {path}: {status}")
        return body

    def scrape(self):
        return Exposition(self.get("/metrics"))

    def verdict(self, scope="overall"):
        return self.scrape().verdict(scope)

    def safe_verdict(self):
        try:
            return self.verdict()
        except (OSError, RuntimeError, TimeoutError):
            return ("unreachable", "")

    def check(self, *flags, output="json", timeout=40):
        """`reachability_exporter check --config.file=... --output=OUTPUT` in cli: (exit status,
        parsed JSON (or the text), stderr)."""
        p = run("ip", "netns", "exec", self.cli, *self.env(), self.binary, "check", *flags, f"--output={output}",
                check=False, timeout=timeout)  # fmt: skip
        with open(self.path("check.log"), "a") as f:
            f.write(f"---- check {' '.join(flags)} exit {p.returncode}\n{p.stdout}{p.stderr}\n")
        if output != "json":
            return p.returncode, p.stdout, p.stderr
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
