"""The lab's topology and processes: the namespaces and veth links, the certificates, the
`reachability-lab` services with their control sockets, nft rules, and the exporter processes
(started, scraped, checked and stopped); `Lab.close()` undoes all of it."""

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request

from .. import certs, netns, procs
from ..exposition import Exposition
from ..util import log, run
from .addresses import LAB_NAME, PORT, V4_DNS, V4_NET, V6_DNS, V6_NET


class Exporter:
    """One exporter process in a namespace, on its own port of that namespace's 127.0.0.1 (the
    driver must have entered the namespace to scrape it)."""

    def __init__(self, lab, ns, name, flags, port):
        self.lab, self.ns, self.name, self.flags, self.port = lab, ns, name, flags, port
        self.log = os.path.join(lab.work, f"exporter-{name}.log")
        self.process = None

    def env(self):
        return [
            "ip",
            "netns",
            "exec",
            self.ns,
            "env",
            f"SSL_CERT_FILE={self.lab.work}/ca.pem",
            "REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1",
            self.lab.args.exporter_bin,
        ]

    def start(self):
        argv = self.env() + [f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=debug"] + self.flags
        self.process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=open(self.log, "w"))
        self.lab.processes.append(self.process)
        deadline = time.time() + 20
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"exporter {self.name} exited {self.process.returncode}: {open(self.log).read()[-2000:]}"
                )
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/-/ready", timeout=1) as r:
                    if r.status == 200:
                        return self
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"exporter {self.name} did not become ready within 20 s")

    def stop(self):
        procs.stop(self.process)

    def scrape(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=2) as r:
            return Exposition(r.read().decode())

    def tail(self, lines=12):
        try:
            return "".join(open(self.log, errors="replace").readlines()[-lines:])
        except OSError:
            return ""

    def check_json(self, flags):
        """`reachability_exporter check --output=json` with `flags`: (exit, parsed object or None,
        the output when it is not JSON)."""
        p = subprocess.run(
            self.env() + ["check"] + flags + ["--output=json"], capture_output=True, text=True, timeout=30
        )
        try:
            return p.returncode, json.loads(p.stdout), ""
        except ValueError:
            return p.returncode, None, (p.stdout + p.stderr).strip()[-200:]

    def check(self, flags):
        """`reachability_exporter check` with `flags` in the same namespace: (exit, state, reason)."""
        p = subprocess.run(
            self.env() + ["check"] + flags + ["--output=json"], capture_output=True, text=True, timeout=30
        )
        try:
            out = json.loads(p.stdout)
        except ValueError:
            return p.returncode, None, (p.stdout + p.stderr).strip()[-200:], ""
        probes = "; ".join(
            f"{q.get('type')} {q.get('name')}: {q.get('status')}" + (f" ({q['reason']})" if q.get("reason") else "")
            for q in out.get("probes", [])
        )
        return p.returncode, out.get("state"), out.get("reason"), probes


class Lab:
    """The namespaces, the lab services and the exporter; `close()` undoes all of it."""

    def __init__(self, args):
        self.args = args
        self.prefix = args.prefix
        self.client = f"{self.prefix}-client"
        self.up1 = f"{self.prefix}-up1"
        self.up2 = f"{self.prefix}-up2"
        self.namespaces = netns.Namespaces(sysctls=netns.Namespaces.QUIET_IPV6)
        self.processes = []
        self.work = tempfile.mkdtemp(prefix=f"{self.prefix}-")
        self.exporter = None
        self.exporter_log = None
        self.history_dir = None
        self.controls = {}
        self.router = None  # the router phase's HomeRouter, closed with the lab

    # ---- topology -------------------------------------------------------------------------
    def add_namespace(self, name):
        self.namespaces.add(name)

    def add_network(self, names, veths):
        """A phase's namespaces `names` and the veth pairs `veths` ((ns_a, if_a, ns_b, if_b) each)."""
        for name in names:
            self.add_namespace(name)
        for pair in veths:
            netns.Namespaces.veth(*pair)

    def build(self):
        self.add_namespace(self.client)
        self.add_namespace(self.up1)
        netns.Namespaces.veth(self.client, "c1", self.up1, "u1")
        self.configure_upstream(self.up1, "u1", "192.0.2.1/24", "2001:db8:1::1/64")
        self.configure_primary()
        self.make_certificates()
        self.start_lab(self.up1)

    def configure_upstream(self, ns, dev, v4, v6):
        run("ip", "-n", ns, "addr", "add", v4, "dev", dev)
        run("ip", "-n", ns, "addr", "add", v6, "dev", dev, "nodad")
        run("ip", "-n", ns, "link", "set", dev, "up")
        for address in (f"{V4_NET}/32", f"{V4_DNS}/32"):
            run("ip", "-n", ns, "addr", "add", address, "dev", "lo")
        for address in (f"{V6_NET}/128", f"{V6_DNS}/128"):
            run("ip", "-n", ns, "addr", "add", address, "dev", "lo", "nodad")

    def configure_primary(self):
        """(Re)applies the client's primary link: idempotent, used to recover from faults."""
        c = self.client
        run("ip", "-n", c, "link", "set", "c1", "up")
        run("ip", "-n", c, "addr", "replace", "192.0.2.2/24", "dev", "c1")
        run("ip", "-n", c, "addr", "replace", "2001:db8:1::2/64", "dev", "c1", "nodad")
        run("ip", "-n", c, "route", "replace", "default", "via", "192.0.2.1", "dev", "c1", "metric", "100")
        run("ip", "-n", c, "-6", "route", "replace", "default", "via", "2001:db8:1::1", "dev", "c1", "metric", "100")

    def add_backup_uplink(self):
        self.add_namespace(self.up2)
        netns.Namespaces.veth(self.client, "c2", self.up2, "u2")
        self.configure_upstream(self.up2, "u2", "203.0.113.1/24", "2001:db8:2::1/64")
        c = self.client
        run("ip", "-n", c, "link", "set", "c2", "up")
        run("ip", "-n", c, "addr", "add", "203.0.113.2/24", "dev", "c2")
        run("ip", "-n", c, "addr", "add", "2001:db8:2::2/64", "dev", "c2", "nodad")
        run("ip", "-n", c, "route", "add", "default", "via", "203.0.113.1", "dev", "c2", "metric", "200")
        run("ip", "-n", c, "-6", "route", "add", "default", "via", "2001:db8:2::1", "dev", "c2", "metric", "200")
        self.start_lab(self.up2)

    def make_certificates(self):
        """A lab CA (trusted by the exporter through SSL_CERT_FILE), a server certificate for
        the lab addresses, and an interceptor's certificate for the same names from another CA."""
        w = self.work
        for ca in ("ca", "evil-ca"):
            certs.make_ca(w, f"rxlab-{ca}", name=ca)
        for leaf, ca in (("server", "ca"), ("wrong", "evil-ca")):
            certs.make_leaf(w, leaf, LAB_NAME, f"IP:{V4_NET},IP:{V6_NET},DNS:{LAB_NAME}", ca=ca)

    def start_lab(self, ns):
        control = os.path.join(self.work, f"{ns}.sock")
        w = self.work
        p = subprocess.Popen(
            [
                "ip",
                "netns",
                "exec",
                ns,
                self.args.lab_bin,
                f"--control={control}",
                f"--cert={w}/server.pem",
                f"--key={w}/server.key",
                f"--wrong-cert={w}/wrong.pem",
                f"--wrong-key={w}/wrong.key",
                f"--address={V4_NET}",
                f"--address={V6_NET}",
                f"--dns-address={V4_DNS}",
                f"--dns-address={V6_DNS}",
                f"--login-url=http://{V4_NET}/login",
            ],
            stdout=subprocess.PIPE,
            stderr=open(os.path.join(w, f"{ns}-lab.log"), "w"),
            text=True,
        )
        self.processes.append(p)
        line = p.stdout.readline()
        if not line.startswith("ready"):
            raise RuntimeError(f"reachability-lab in {ns} did not start: {line!r}, see {w}/{ns}-lab.log")
        self.controls[ns] = control

    def control(self, ns, command):
        """Sends one control command to the lab services in `ns`; returns the reply."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(5)
            s.connect(self.controls[ns])
            s.sendall((command + "\n").encode())
            reply = s.makefile().readline().strip()
        if not reply.startswith("ok"):
            raise RuntimeError(f"lab control {command!r}: {reply}")
        return reply

    def nft(self, ns, ruleset):
        netns.nft(ns, ruleset)

    def nft_flush(self, ns):
        run("ip", "netns", "exec", ns, "nft", "flush", "ruleset")

    # ---- the exporter ---------------------------------------------------------------------
    def start_exporter(self, name, flags):
        self.stop_exporter()
        self.history_dir = os.path.join(self.work, f"history-{name}")
        os.makedirs(self.history_dir, exist_ok=True)
        self.exporter = Exporter(self, self.client, name, flags + [f"--history.dir={self.history_dir}"], PORT).start()
        self.exporter_log = self.exporter.log

    def stop_exporter(self):
        if self.exporter:
            self.exporter.stop()
        self.exporter = None

    def scrape(self):
        return self.exporter.scrape()

    def enter(self, ns):
        """Moves this thread into namespace `ns` (threads started later inherit it): the exporter
        there listens on 127.0.0.1. Commands name their namespace explicitly, so nothing else
        changes."""
        netns.enter(ns)

    def enter_client(self):
        self.enter(self.client)

    def close(self):
        if self.router:
            try:
                self.router.close()
            except Exception as e:  # the namespaces still go below
                log(f"router cleanup: {e}")
        procs.stop_all(self.processes)
        # Whatever still runs in a namespace of ours was started by this run (openNDS's helper
        # scripts, say): by PID, never this driver (it has entered one of them).
        self.namespaces.close()
        if not self.args.keep:
            shutil.rmtree(self.work, ignore_errors=True)
