#!/usr/bin/env python3
"""The fault lab's driver (run through scripts/fault-lab.sh, which owns cleanup).

Builds a small network out of namespaces that exist only for this run:

    client (the exporter)  --c1/u1 veth-->  up1 (router + the lab "internet")
                           --c2/u2 veth-->  up2 (backup uplink; only for the uplink phase)

Lab addresses are documentation prefixes: 192.0.2.0/24 and 2001:db8:1::/64 on the primary
link, 203.0.113.0/24 and 2001:db8:2::/64 on the backup, and the "internet" 198.51.100.1
(HTTP :80, HTTPS :443, ICMP), 198.51.100.53 (DNS) and 2001:db8:100::1 on each upstream's
loopback, served by `reachability-lab`. Nothing here has a route to the host: every packet the
lab sends stays inside the namespaces it made.

Faults are real: links set down, carrier lost, routes deleted, nft drop/reject/random-loss
rules, services stopped or swapped for a captive portal, a wrong TLS certificate. Each scenario
is asserted through the exporter's scraped metrics and its history (--history.dir); the run
ends with a table: scenario, expected, observed, detection and recovery times. A scenario that
cannot run (the exporter refuses its flags, ICMP is not permitted, the lab does not come up)
fails the run with its reason; nothing is skipped for a feature that looks absent. The one
skip is asked for: --loss-seconds=0 leaves out the random-loss scenario (reported SKIPPED).

The `router` phase adds real home-router software between a second client and the
lab internet (scripts/lab_router.py): dnsmasq's DHCP lease gives the client its address, route
and resolver; the faults are the router's nft blackhole, its WAN link down and an openNDS
captive portal. Two exporters (the default probe-set shape with names through that resolver,
and the explicit probes) watch each fault; besides the verdicts, the overall verdict must
never be `full` while no family is, and `reachability_exporter check` must exit with the
status of the daemon's settled state.
"""
import argparse
import ctypes
import glob
import json
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

CLONE_NEWNET = 0x40000000
PORT = 10361
V4_NET = "198.51.100.1"
V4_DNS = "198.51.100.53"
V6_NET = "2001:db8:100::1"
V6_DNS = "2001:db8:100::53"
LAB_NAME = "www.example.com"


def log(text):
    print(text, flush=True)


def run(*cmd, check=True, quiet=False, input_text=None):
    """Runs a command; raises with its output when it fails and `check` is set."""
    p = subprocess.run(cmd, capture_output=True, text=True, input=input_text)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {p.stdout}{p.stderr}")
    return p


class Metrics:
    """One scrape, parsed: samples as (name, labels, value)."""

    def __init__(self, text):
        self.samples = []
        for line in text.splitlines():
            if not line or line.startswith("#"):
                continue
            name, labels, rest = line, {}, ""
            if "{" in line:
                name, tail = line.split("{", 1)
                body, rest = tail.rsplit("}", 1)
                labels = self._labels(body)
            else:
                name, rest = line.split(" ", 1)
            try:
                self.samples.append((name, labels, float(rest.split()[0])))
            except (ValueError, IndexError):
                pass

    @staticmethod
    def _labels(body):
        out, i = {}, 0
        while i < len(body):
            eq = body.index("=", i)
            key = body[i:eq].strip(" ,")
            j, value = eq + 2, []
            while body[j] != '"':
                if body[j] == "\\":
                    j += 1
                    value.append({"n": "\n"}.get(body[j], body[j]))
                else:
                    value.append(body[j])
                j += 1
            out[key] = "".join(value)
            i = j + 1
        return out

    def all(self, name, **labels):
        return [(l, v) for n, l, v in self.samples if n == name and all(l.get(k) == w for k, w in labels.items())]

    def value(self, name, **labels):
        found = self.all(name, **labels)
        return found[0][1] if found else None

    def total(self, name, **labels):
        return sum(v for _, v in self.all(name, **labels))

    def verdict(self, scope="overall"):
        """(state, reason) of a scope from reachability_connectivity_info."""
        for labels, _ in self.all("reachability_connectivity_info", scope=scope):
            return labels.get("state"), labels.get("reason", "")
        return None, None

    def transitions(self):
        return self.total("reachability_state_transitions_total")


class Exporter:
    """One exporter process in a namespace, on its own port of that namespace's 127.0.0.1 (the
    driver must have entered the namespace to scrape it)."""

    def __init__(self, lab, ns, name, flags, port):
        self.lab, self.ns, self.name, self.flags, self.port = lab, ns, name, flags, port
        self.log = os.path.join(lab.work, f"exporter-{name}.log")
        self.process = None

    def env(self):
        return ["ip", "netns", "exec", self.ns, "env", f"SSL_CERT_FILE={self.lab.work}/ca.pem",
                "REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1", self.lab.args.exporter_bin]

    def start(self):
        argv = self.env() + [f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=debug"] + self.flags
        self.process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=open(self.log, "w"))
        self.lab.processes.append(self.process)
        deadline = time.time() + 20
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"exporter {self.name} exited {self.process.returncode}: {open(self.log).read()[-2000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/-/ready", timeout=1) as r:
                    if r.status == 200:
                        return self
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"exporter {self.name} did not become ready within 20 s")

    def stop(self):
        p = self.process
        if p and p.poll() is None:
            p.terminate()
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def scrape(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=2) as r:
            return Metrics(r.read().decode())

    def tail(self, lines=12):
        try:
            return "".join(open(self.log, errors="replace").readlines()[-lines:])
        except OSError:
            return ""

    def check(self, flags):
        """`reachability_exporter check` with `flags` in the same namespace: (exit, state, reason)."""
        p = subprocess.run(self.env() + ["check"] + flags + ["--output=json"], capture_output=True, text=True, timeout=30)
        try:
            out = json.loads(p.stdout)
        except ValueError:
            return p.returncode, None, (p.stdout + p.stderr).strip()[-200:], ""
        probes = "; ".join(f"{q.get('type')} {q.get('name')}: {q.get('status')}" + (f" ({q['reason']})" if q.get("reason") else "")
                           for q in out.get("probes", []))
        return p.returncode, out.get("state"), out.get("reason"), probes


class Lab:
    """The namespaces, the lab services and the exporter; `close()` undoes all of it."""

    def __init__(self, args):
        self.args = args
        self.prefix = args.prefix
        self.client = f"{self.prefix}-client"
        self.up1 = f"{self.prefix}-up1"
        self.up2 = f"{self.prefix}-up2"
        self.namespaces = []
        self.processes = []
        self.work = tempfile.mkdtemp(prefix=f"{self.prefix}-")
        self.exporter = None
        self.exporter_log = None
        self.history_dir = None
        self.controls = {}
        self.router = None  # the router phase's HomeRouter, closed with the lab

    # ---- topology -------------------------------------------------------------------------
    def add_namespace(self, name):
        run("ip", "netns", "add", name)
        self.namespaces.append(name)
        run("ip", "-n", name, "link", "set", "lo", "up")
        for key in ("net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0",
                    "net.ipv6.conf.all.keep_addr_on_down=1", "net.ipv6.conf.default.keep_addr_on_down=1"):
            run("ip", "netns", "exec", name, "sysctl", "-qw", key)

    def build(self):
        self.add_namespace(self.client)
        self.add_namespace(self.up1)
        run("ip", "-n", self.client, "link", "add", "c1", "type", "veth", "peer", "name", "u1", "netns", self.up1)
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
        run("ip", "-n", self.client, "link", "add", "c2", "type", "veth", "peer", "name", "u2", "netns", self.up2)
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
        key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        ext = os.path.join(w, "leaf.ext")
        with open(ext, "w") as f:
            f.write(f"subjectAltName=IP:{V4_NET},IP:{V6_NET},DNS:{LAB_NAME}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n")
        for ca in ("ca", "evil-ca"):
            run("openssl", "req", "-x509", *key, "-keyout", f"{w}/{ca}.key", "-out", f"{w}/{ca}.pem", "-days", "2",
                "-subj", f"/CN=rxlab-{ca}", "-addext", "basicConstraints=critical,CA:TRUE",
                "-addext", "keyUsage=critical,keyCertSign,cRLSign")
        for leaf, ca in (("server", "ca"), ("wrong", "evil-ca")):
            run("openssl", "req", "-new", *key, "-keyout", f"{w}/{leaf}.key", "-out", f"{w}/{leaf}.csr", "-subj", f"/CN={LAB_NAME}")
            run("openssl", "x509", "-req", "-in", f"{w}/{leaf}.csr", "-CA", f"{w}/{ca}.pem", "-CAkey", f"{w}/{ca}.key",
                "-CAcreateserial", "-out", f"{w}/{leaf}.pem", "-days", "2", "-extfile", ext)

    def start_lab(self, ns):
        control = os.path.join(self.work, f"{ns}.sock")
        w = self.work
        p = subprocess.Popen(
            ["ip", "netns", "exec", ns, self.args.lab_bin, f"--control={control}",
             f"--cert={w}/server.pem", f"--key={w}/server.key", f"--wrong-cert={w}/wrong.pem", f"--wrong-key={w}/wrong.key",
             f"--address={V4_NET}", f"--address={V6_NET}", f"--dns-address={V4_DNS}", f"--dns-address={V6_DNS}",
             f"--login-url=http://{V4_NET}/login"],
            stdout=subprocess.PIPE, stderr=open(os.path.join(w, f"{ns}-lab.log"), "w"), text=True)
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
        run("ip", "netns", "exec", ns, "nft", "-f", "-", input_text=ruleset)

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
        libc = ctypes.CDLL(None, use_errno=True)
        fd = os.open(f"/var/run/netns/{ns}", os.O_RDONLY)
        try:
            if libc.setns(fd, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns")
        finally:
            os.close(fd)

    def enter_client(self):
        self.enter(self.client)

    def close(self):
        if self.router:
            try:
                self.router.close()
            except Exception as e:  # the namespaces still go below
                log(f"router cleanup: {e}")
        for p in self.processes:
            if p.poll() is None:
                p.terminate()
        for p in self.processes:
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        # Whatever still runs in a namespace of ours was started by this run (openNDS's helper
        # scripts, say): by PID, never this driver (it has entered one of them).
        for ns in reversed(self.namespaces):
            pids = run("ip", "netns", "pids", ns, check=False).stdout.split()
            for pid in (int(p) for p in pids if p.isdigit() and int(p) != os.getpid()):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            run("ip", "netns", "del", ns, check=False)
        if not self.args.keep:
            shutil.rmtree(self.work, ignore_errors=True)


class Row:
    def __init__(self, scenario, expected):
        self.scenario, self.expected = scenario, expected
        self.observed, self.detect, self.recover, self.history = "", None, None, "n/a"
        self.status, self.notes = "FAIL", []

    def seconds(self, v):
        return "-" if v is None else f"{v:.2f}s"


class Runner:
    def __init__(self, lab, args):
        self.lab, self.args, self.rows = lab, args, []
        self.interval, self.timeout, self.fail_after = 1.0, 0.5, 2

    # ---- waiting and timing ---------------------------------------------------------------
    def wait(self, predicate, timeout):
        """Polls the metrics until `predicate(m)` holds; returns the scrape, or None on timeout."""
        deadline = time.time() + timeout
        while True:
            try:
                m = self.lab.scrape()
                if predicate(m):
                    return m
            except OSError:
                pass
            if time.time() > deadline:
                return None
            time.sleep(0.05)

    def healthy(self, scopes):
        return lambda m: all(m.verdict(s)[0] == "full" for s in scopes)

    def baseline(self, scopes):
        m = self.wait(self.healthy(scopes), 30)
        if m is None:
            m = self.lab.scrape()
            raise RuntimeError("lab never became healthy: " + ", ".join(f"{s}={m.verdict(s)}" for s in scopes)
                               + "\n" + self.tail_log())
        return m

    def tail_log(self, lines=25):
        if not self.lab.exporter_log:
            return ""
        try:
            return "".join(open(self.lab.exporter_log).readlines()[-lines:])
        except OSError:
            return ""

    @staticmethod
    def since(m, scope="overall"):
        return m.value("reachability_state_since_timestamp_seconds", scope=scope)

    def history_records(self, kind):
        """Records of `kind` in the exporter's history files (docs/history-format.md)."""
        out = []
        for path in sorted(glob.glob(os.path.join(self.lab.history_dir, "history-*.jsonl"))):
            with open(path, errors="replace") as f:
                for line in f:
                    try:
                        record = json.loads(line)
                    except ValueError:
                        continue  # a line being written
                    if record.get("type") == kind:
                        out.append(record)
        return out

    def history_transition(self, scope, state, reason, after):
        """The history's transition of `scope` to `state` (and `reason`) made after `after`."""
        for record in self.history_records("transition"):
            if (record.get("scope") == scope and record.get("to") == state and record.get("time", 0) >= after - 0.5
                    and (reason is None or record.get("reason", "") == reason)):
                return record
        return None

    # ---- one fault ------------------------------------------------------------------------
    def fault(self, row, apply, revert, expect, scopes=("overall",), detect_goal=None, window=None,
              recover=True, wait_timeout=15.0, settle=0.0):
        """Applies a fault, waits for the expected verdicts, measures detection (the exporter's
        own transition timestamp minus the moment the fault was applied), reverts and measures
        recovery. `expect` maps scope -> (state, reason or None)."""
        self.baseline(scopes)
        time.sleep(settle)
        t0 = time.time()
        apply()
        m = self.wait(lambda m: all(m.verdict(s)[0] == st and (r is None or m.verdict(s)[1] == r)
                                    for s, (st, r) in expect.items()), wait_timeout)
        if m is None:
            m = self.lab.scrape()
        row.observed = "; ".join(f"{s}={m.verdict(s)[0]}({m.verdict(s)[1]})" if s != "overall"
                                 else f"{m.verdict(s)[0]}({m.verdict(s)[1]})" for s in expect)
        ok = all(m.verdict(s)[0] == st and (r is None or m.verdict(s)[1] == r) for s, (st, r) in expect.items())
        first = next(iter(expect))
        if ok:
            row.detect = self.since(m, first) - t0
        if ok and detect_goal is not None and row.detect >= detect_goal:
            row.notes.append(f"detection {row.detect:.2f}s over the {detect_goal:.0f}s goal")
            ok = False
        if ok and window is not None and not (window[0] <= row.detect <= window[1]):
            row.notes.append(f"detection {row.detect:.2f}s outside [{window[0]:.2f}, {window[1]:.2f}]s")
            ok = False
        if ok:
            state, reason = expect[first]
            record = self.wait_history(first, state, reason, t0)
            if record is None:
                row.history, ok = "missing", False
                row.notes.append(f"no history transition {first} -> {state}({reason})")
            elif abs(record["time"] - (row.detect + t0)) > 0.05:
                row.history, ok = "mismatch", False
                row.notes.append(f"history time {record['time']:.3f} vs metrics {row.detect + t0:.3f}")
            else:
                row.history = "ok"
        t1 = time.time()
        revert()
        if recover:
            back = self.wait(self.healthy(scopes), 20)
            if back is None:
                row.notes.append("did not recover within 20 s")
                ok = False
            else:
                row.recover = self.since(back, first) - t1
        row.status = "PASS" if ok else "FAIL"
        if not ok:
            row.notes.append("exporter log tail:\n" + self.tail_log(12))
        return m

    def wait_history(self, scope, state, reason, after):
        deadline = time.time() + 5
        while time.time() < deadline:
            record = self.history_transition(scope, state, reason, after)
            if record is not None:
                return record
            time.sleep(0.2)
        return None

    def history_quiet(self, row, start, end):
        """For the 'stays full' scenarios: no overall transition recorded in [start, end]."""
        moved = [r for r in self.history_records("transition") if r.get("scope") == "overall" and start <= r.get("time", 0) <= end]
        rounds = [r for r in self.history_records("round") if start <= r.get("time", 0) <= end]
        row.history = f"ok ({len(rounds)} rounds)" if not moved and rounds else "transitions" if moved else "no rounds"
        return not moved and bool(rounds)

    def hold(self, row, seconds, scopes=("overall",)):
        """Checks that the scopes stay full for `seconds` with zero transitions."""
        m0 = self.baseline(scopes)
        n0 = m0.transitions()
        self.hold_started = time.time()
        end = time.time() + seconds
        worst = None
        while time.time() < end:
            m = self.lab.scrape()
            for s in scopes:
                if m.verdict(s)[0] != "full":
                    worst = f"{s}={m.verdict(s)}"
            time.sleep(0.25)
        m = self.lab.scrape()
        moved = m.transitions() - n0
        return m0, m, moved, worst

    def add(self, row):
        self.rows.append(row)
        extra = "" if not row.notes else " — " + row.notes[0].splitlines()[0]
        log(f"  [{row.status}] {row.scenario}: expected {row.expected}, observed {row.observed or '-'}"
            f", detect {row.seconds(row.detect)}, recover {row.seconds(row.recover)}{extra}")
        for i, note in enumerate(row.notes):
            if "\n" in note or i > 0:
                log("    " + note.replace("\n", "\n    "))

    def skipped(self, scenario, expected, why):
        """A scenario left out because the command line asked for it (never a guess)."""
        row = Row(scenario, expected)
        row.status, row.observed = "SKIPPED", why
        self.add(row)

    # ---- table ----------------------------------------------------------------------------
    def table(self):
        head = ("scenario", "expected", "observed", "detect", "recover", "history", "result")
        rows = [(r.scenario, r.expected, r.observed, r.seconds(r.detect), r.seconds(r.recover), r.history, r.status) for r in self.rows]
        widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
        line = lambda cells: "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"
        log(line(head))
        log("|" + "|".join("-" * (w + 2) for w in widths) + "|")
        for r in rows:
            log(line(r))


# ---- scenarios ----------------------------------------------------------------------------
def ruleset(rule):
    """An nft ruleset with one input-hook rule (upstream side: what the client sends in)."""
    return f"table inet rxlab {{\n  chain input {{\n    type filter hook input priority 0;\n    {rule}\n  }}\n}}\n"


DROP_ALL = ruleset('iifname "u1" drop')
DROP_V6 = ruleset('meta nfproto ipv6 iifname "u1" drop')
DROP_PING = ruleset("icmp type echo-request drop\n    icmpv6 type echo-request drop")


def loss(percent):
    # Neighbour discovery is spared: a lost solicitation stalls IPv6 for a whole retransmit
    # second, which would turn 5% packet loss into bursts.
    return ruleset('icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert } accept\n    '
                   f'iifname "u1" numgen random mod 100 < {percent} drop')


def probe_flags(interval="1s", timeout="500ms"):
    return [f"--probe.http=http://{V4_NET}/generate_204", f"--probe.http=https://{V4_NET}/generate_204",
            f"--probe.http=http://[{V6_NET}]/generate_204",
            f"--probe.dns={LAB_NAME}@{V4_DNS}", f"--probe.dns={LAB_NAME}@{V6_DNS}",
            f"--probe.icmp={V4_NET}", f"--probe.icmp={V6_NET}"] + timing_flags(interval, timeout)


def timing_flags(interval="1s", timeout="500ms"):
    return [f"--probe.interval={interval}", f"--probe.timeout={timeout}", "--probe.fail-after=2", "--probe.recover-after=2"]


def default_shape_flags():
    """The product's default probe set (README, "Default probes") pointed at lab addresses:
    names through the system resolver, which in the router phase is the router's dnsmasq."""
    return [f"--probe.http=http://{LAB_NAME}/generate_204", f"--probe.http=https://{LAB_NAME}/generate_204",
            f"--probe.icmp={V4_NET}", f"--probe.icmp={V6_NET}", f"--probe.dns={LAB_NAME}"] + timing_flags()


def phase_single_uplink(r, lab, args):
    """One uplink, the parallel policy: every fault of the table but the policy and uplink ones."""
    lab.start_exporter("parallel", probe_flags())
    scopes = ("overall", "ipv4", "ipv6")
    up1, c = lab.up1, lab.client

    row = Row("healthy", "full (ipv4 full, ipv6 full)")
    m = r.baseline(scopes)
    bad = [l["target"] for l, v in m.all("reachability_probe_success") if v != 1]
    row.observed = f"{m.verdict()[0]} (ipv4 {m.verdict('ipv4')[0]}, ipv6 {m.verdict('ipv6')[0]})"
    row.status = "PASS" if not bad else "FAIL"
    if bad:
        row.notes.append(f"probes not succeeding: {bad}")
    r.add(row)

    # The kernel's linkwatch sends a non-urgent carrier change at most once a second (a veth
    # whose peer has the same ifindex, like most NICs, is non-urgent): settle first, so the
    # time measured is the exporter's and not the rate limit left over from the last change.
    row = Row("carrier lost (peer down)", "none (no_carrier), <1s")
    r.fault(row, lambda: run("ip", "-n", up1, "link", "set", "u1", "down"),
            lambda: run("ip", "-n", up1, "link", "set", "u1", "up"),
            {"overall": ("none", "no_carrier")}, scopes, detect_goal=1.0, settle=1.1)
    r.add(row)

    row = Row("link down (admin)", "none (no_interface), <1s")
    r.fault(row, lambda: run("ip", "-n", c, "link", "set", "c1", "down"), lab.configure_primary,
            {"overall": ("none", "no_interface")}, scopes, detect_goal=1.0, settle=1.1)
    r.add(row)

    def delete_routes():
        run("ip", "-n", c, "route", "del", "default")
        run("ip", "-n", c, "-6", "route", "del", "default")
    row = Row("default routes deleted", "none (no_default_route), <1s")
    r.fault(row, delete_routes, lab.configure_primary, {"overall": ("none", "no_default_route")}, scopes, detect_goal=1.0)
    r.add(row)

    lo = (r.fail_after - 1) * r.interval + r.timeout
    hi = (r.fail_after + 1) * r.interval + 0.5
    row = Row("blackhole (all dropped)", f"limited (timeout), {lo:.1f}-{hi:.1f}s")
    r.fault(row, lambda: lab.nft(up1, DROP_ALL), lambda: lab.nft_flush(up1),
            {"overall": ("limited", "timeout")}, scopes, window=(lo - 0.05, hi))
    r.add(row)

    # Faults the lab services play on command: (scenario, fault, restore, expected state and reason).
    for name, fault, restore, (state, reason) in [
        ("DNS servers dead, IP fine", "dns dead", "dns normal", ("limited", "dns")),
        ("portal: 302 to login", "http portal302", "http normal", ("portal", "redirect")),
        ("portal: 200 login page", "http portal200", "http normal", ("portal", "http_status")),
        ("portal: DNS to private IP", "dns private", "dns normal", ("portal", "private_address")),
        ("HTTPS intercepted (wrong cert)", "tls wrong", "tls normal", ("limited", "partial")),
    ]:
        row = Row(name, f"{state} ({reason})")
        r.fault(row, lambda fault=fault: lab.control(up1, fault), lambda restore=restore: lab.control(up1, restore),
                {"overall": (state, reason)}, scopes)
        r.add(row)

    row = Row("IPv6 broken, IPv4 fine", "ipv6 limited, ipv4 full, overall full")
    r.fault(row, lambda: lab.nft(up1, DROP_V6), lambda: lab.nft_flush(up1),
            {"ipv6": ("limited", None), "ipv4": ("full", None), "overall": ("full", None)}, scopes)
    r.add(row)

    row = Row("ICMP blocked, HTTP fine (parallel)", f"stays full {args.hold:.0f}s, 0 transitions")
    lab.nft(up1, DROP_PING)
    try:
        m0, m, moved, worst = r.hold(row, args.hold)
    finally:
        lab.nft_flush(up1)
    icmp_probes = m.all("reachability_probe_success", probe="icmp")
    icmp_ok = sum(v for l, v in icmp_probes)
    row.observed = f"{m.verdict()[0]}, {moved:.0f} transitions, icmp successes {icmp_ok:.0f} of {len(icmp_probes)} probes"
    quiet = r.history_quiet(row, r.hold_started, time.time())
    row.status = "PASS" if moved == 0 and worst is None and icmp_probes and icmp_ok == 0 and quiet else "FAIL"
    if worst:
        row.notes.append(f"left full: {worst}")
    if not icmp_probes:
        row.notes.append("no ICMP probe series: the exporter runs no ICMP probe")
    r.add(row)

    row = Row(f"flapping carrier ({args.flaps}x {args.flap_down}s down/{args.flap_up}s up)", f"<= {2 * args.flaps} transitions, full after")
    m0 = r.baseline(scopes)
    for _ in range(args.flaps):
        run("ip", "-n", up1, "link", "set", "u1", "down")
        time.sleep(args.flap_down)
        run("ip", "-n", up1, "link", "set", "u1", "up")
        time.sleep(args.flap_up)
    m = r.wait(r.healthy(scopes), 20) or lab.scrape()
    moved = m.transitions() - m0.transitions()
    pairs = {f"{l['from']}->{l['to']}": v - (m0.value("reachability_state_transitions_total", **l) or 0)
             for l, v in m.all("reachability_state_transitions_total")}
    pairs = {k: int(v) for k, v in pairs.items() if v}
    row.observed = f"{moved:.0f} transitions {pairs}, then {m.verdict()[0]}"
    row.status = "PASS" if 2 <= moved <= 2 * args.flaps and m.verdict()[0] == "full" else "FAIL"
    r.add(row)


def phase_loss(r, lab, args):
    """Random loss, with timeouts that leave room for one TCP retransmission (1.5 s; the
    product's default is 3 s). With the other phases' 500 ms, one lost SYN fails a probe, and
    the single HTTPS probe failing two rounds in a row turns the verdict `limited (partial)`
    about once a minute at 5% loss: the partial and DNS rules hang on single probes."""
    if args.loss_seconds <= 0:
        r.skipped(f"{args.loss}% random loss", "stays full, 0 transitions", why="skipped (--loss-seconds=0)")
        return
    lab.start_exporter("loss", probe_flags(interval="2s", timeout="1500ms"))
    row = Row(f"{args.loss}% random loss, {args.loss_seconds:.0f}s", "stays full, 0 transitions, loss ≈ {}%".format(args.loss))
    lab.nft(lab.up1, loss(args.loss))
    try:
        m0, m, moved, worst = r.hold(row, args.loss_seconds, ("overall",))
    finally:
        lab.nft_flush(lab.up1)
    sent = m.total("reachability_icmp_echo_requests_total") - m0.total("reachability_icmp_echo_requests_total")
    got = m.total("reachability_icmp_echo_replies_total") - m0.total("reachability_icmp_echo_replies_total")
    runs = m.total("reachability_probes_total") - m0.total("reachability_probes_total")
    fails = m.total("reachability_probe_failures_total") - m0.total("reachability_probe_failures_total")
    loss_text = f"icmp loss {100 * (sent - got) / sent:.1f}% of {sent:.0f}" if sent else "no icmp echo sent"
    row.observed = f"{m.verdict()[0]}, {moved:.0f} transitions, {loss_text}, probe failures {fails:.0f}/{runs:.0f}"
    ok = moved == 0 and worst is None and r.history_quiet(row, r.hold_started, time.time())
    if not sent:
        row.notes.append("no ICMP echo requests counted: the loss ratio is not measured")
        ok = False
    elif not (0.02 <= (sent - got) / sent <= 0.10):
        row.notes.append("icmp loss ratio outside 2-10%")
        ok = False
    row.status = "PASS" if ok else "FAIL"
    if worst:
        row.notes.append(f"left full: {worst}")
    r.add(row)


def phase_icmp_policy(r, lab, args):
    lab.start_exporter("icmp", probe_flags() + ["--probe.mode=icmp"])
    row = Row("ICMP blocked, HTTP fine (icmp policy)", "limited (timeout)")
    r.fault(row, lambda: lab.nft(lab.up1, DROP_PING), lambda: lab.nft_flush(lab.up1),
            {"overall": ("limited", "timeout")}, ("overall",))
    r.add(row)


def phase_uplinks(r, lab, args):
    lab.add_backup_uplink()
    lab.start_exporter("uplinks", probe_flags() + ["--probe.uplink=c1", "--probe.uplink=c2"])
    row = Row("primary uplink dead, backup alive", "overall limited, c1 limited, c2 full")
    r.fault(row, lambda: lab.nft(lab.up1, DROP_ALL), lambda: lab.nft_flush(lab.up1),
            {"overall": ("limited", None), "c1": ("limited", None), "c2": ("full", None)}, ("overall", "c1", "c2"))
    r.add(row)


# ---- the router phase ---------------------------------------------------------------------
EXIT_STATUS = {"full": 0, "limited": 2, "portal": 3, "none": 4, "unknown": 1}  # CheckCommand.exitStatus
FAMILIES = ("ipv4", "ipv6")


class Sampler(threading.Thread):
    """Scrapes one exporter every 0.1 s for the whole of a scenario: the overall verdict must
    never be `full` while no family is `full`. Bounded in time (`limit` seconds)."""

    def __init__(self, exporter, limit=120.0):
        super().__init__(daemon=True)
        self.exporter, self.limit = exporter, limit
        self.done = threading.Event()
        self.samples, self.errors, self.violations, self.states = 0, 0, [], set()

    def run(self):
        end = time.time() + self.limit
        while not self.done.wait(0.1) and time.time() < end:
            try:
                m = self.exporter.scrape()
            except OSError:
                self.errors += 1
                continue
            self.samples += 1
            overall = m.verdict()[0]
            families = {f: m.verdict(f)[0] for f in FAMILIES}
            self.states.add(overall)
            if overall == "full" and "full" not in families.values():
                self.violations.append((time.time(), families))

    def finish(self):
        self.done.set()
        self.join(5)
        return self


class RouterScenario:
    """One fault applied once and watched through every exporter (one per probe set): a row per
    exporter with the verdicts, detection and recovery times, the family invariant (sampled
    throughout) and `check`'s exit status against the settled daemon's state."""

    def __init__(self, r, sets, name, expected):
        self.r, self.sets, self.name = r, sets, name
        self.rows = {label: Row(f"router: {name} [{label}]", expected) for label, _, _ in sets}
        self.notes = []  # observations shared by every row (resolver, portal answers)
        self.bad = False

    @staticmethod
    def meets(m, expect):
        return all(m.verdict(s)[0] == st and (rs is None or m.verdict(s)[1] == rs) for s, (st, rs) in expect.items())

    @staticmethod
    def describe(m, scopes):
        parts = []
        for s in scopes:
            state, reason = m.verdict(s)
            parts.append((f"{state}({reason})" if reason else f"{state}") if s == "overall" else f"{s} {state}")
        return " ".join(parts)

    def wait(self, exporter, predicate, timeout):
        deadline = time.time() + timeout
        while True:
            try:
                m = exporter.scrape()
                if predicate(m):
                    return m
            except OSError:
                pass
            if time.time() > deadline:
                return None
            time.sleep(0.05)

    def run(self, expect, apply=None, revert=None, during=None, scopes=("overall",) + FAMILIES,
            recover_scopes=("overall",) + FAMILIES, hold=0.0, wait_timeout=10.0):
        """`expect`: scope -> (state, reason or None). `apply` may return the moment the fault
        took effect (else the call's start counts). `during()` -> (ok, text) runs while the
        fault holds, after the daemons settled. Without `apply`, the scenario is the healthy
        lab watched for `hold` seconds."""
        healthy = lambda m: all(m.verdict(s)[0] == "full" for s in recover_scopes)
        for label, ex, _ in self.sets:
            if self.wait(ex, healthy, 30) is None:
                raise RuntimeError(f"[{label}] not healthy before '{self.name}': "
                                   + self.describe(ex.scrape(), scopes) + "\n" + ex.tail())
        samplers = {label: Sampler(ex) for label, ex, _ in self.sets}
        for s in samplers.values():
            s.start()
        reverted = True  # until the fault is in place
        try:
            t0 = time.time()
            if apply:
                t0 = apply() or t0
                reverted = revert is None
            met, deadline = {}, time.time() + (wait_timeout if apply else hold)
            while time.time() < deadline and (not apply or len(met) < len(self.sets)):
                for label, ex, _ in self.sets:
                    try:
                        m = ex.scrape()
                    except OSError:
                        continue
                    if label not in met and self.meets(m, expect):
                        met[label] = m
                time.sleep(0.05)
            if during:
                ok, text = during()
                self.notes.append(text)
                self.bad |= not ok
            checks = {}
            for label, ex, flags in self.sets:
                code, state, reason, probes = ex.check(flags)
                checks[label] = (code, state, reason, probes, ex.scrape())
            t1 = time.time()
            reverted = True
            if revert:
                revert()
            recovered = {}
            if apply:
                for label, ex, _ in self.sets:
                    recovered[label] = self.wait(ex, healthy, 20)
        finally:
            for s in samplers.values():
                s.finish()
            if not reverted:  # the scenario broke while the fault held: undo it for the next one
                try:
                    revert()
                except Exception as e:
                    log(f"  could not revert '{self.name}': {e}")
        for label, ex, _ in self.sets:
            row, sampler = self.rows[label], samplers[label]
            code, state, reason, probes, settled = checks[label]
            m = met.get(label, settled)
            ok = self.meets(m, expect) and not self.bad
            row.observed = f"{self.describe(m, scopes)}, check {code}"
            if apply and recovered.get(label) is None:
                row.notes.append("did not recover within 20 s")
                ok = False
            elif apply and label in met:
                row.detect = Runner.since(m) - t0
                row.recover = Runner.since(recovered[label]) - t1
            daemon = settled.verdict()[0]
            if code != EXIT_STATUS.get(daemon):
                row.notes.append(f"check exited {code} ({state} {reason}) while the daemon said {daemon}")
                ok = False
            if sampler.violations:
                when, families = sampler.violations[0]
                row.notes.append(f"overall full while no family was, in {len(sampler.violations)} of {sampler.samples} samples "
                                 f"(first at +{when - t0:.1f}s: {families})")
                ok = False
            if sampler.samples < 5:
                row.notes.append(f"only {sampler.samples} samples ({sampler.errors} scrape errors)")
                ok = False
            if not self.meets(m, expect):
                row.notes.append(f"states seen: {sorted(s for s in sampler.states if s)}; check said {state}({reason}): {probes}")
            row.notes.extend(self.notes)
            row.status = "PASS" if ok else "FAIL"
            if not ok:
                row.notes.append("exporter log tail:\n" + ex.tail(8))
        return self

    def fail(self, error):
        for row in self.rows.values():
            row.status, row.observed = "FAIL", row.observed or "did not run"
            row.notes.append(str(error))

    def add(self):
        for label, _, _ in self.sets:
            self.r.add(self.rows[label])


def phase_router(r, lab, args):
    """home client -- router (dnsmasq DHCP+DNS, openNDS, NAT, nft) -- upstream (scripts/lab_router.py).
    Two exporters watch every fault at once: A, the product's default probe-set shape with names
    through the system resolver (the lease's dnsmasq), and B, the lab's explicit probes."""
    import lab_router
    router = lab_router.HomeRouter(lab)
    lab.router = router
    router.build()
    lab.enter(router.home)
    try:
        a_flags, b_flags = default_shape_flags(), probe_flags()
        sets = [("A", Exporter(lab, router.home, "router-A", a_flags, PORT).start(), a_flags),
                ("B", Exporter(lab, router.home, "router-B", b_flags, PORT + 1).start(), b_flags)]
        log(f"  home {router.client_ip} by DHCP from dnsmasq, resolver {open(router.resolv).read().split()[-1]}, "
            f"IPv6 static {lab_router.HOME_V6}; dnsmasq --min-cache-ttl={lab_router.MIN_CACHE_TTL} (the lab DNS TTL is 60 s)")
        down = {"overall": ("limited", None), "ipv4": ("limited", None), "ipv6": ("limited", None)}

        def resolver(what, fault, source):
            """The home's lookup must answer during the fault, and dnsmasq's log must show the
            source: "upstream" (its own queries leave the blackholed router; the blackhole
            empties its cache first) or "cached" (nothing reaches the upstream)."""
            mark = {}

            def apply():
                mark["at"] = router.dns_log_mark()
                return fault()

            def check():
                ok, text = router.resolve(LAB_NAME)
                n = router.dns_answers_since(mark.get("at", 0))
                good = n["upstream"] > 0 if source == "upstream" else n["cached"] > 0 and n["upstream"] == 0
                return ok and V4_NET in text and good, (
                    f"home resolver during {what}: {'answers ' + text if ok else 'FAILS: ' + text}; dnsmasq answered "
                    f"{n['cached']}x from cache, {n['upstream']} upstream records, {n['forwarded']} forwarded (want {source})")
            return dict(apply=apply, during=check)

        def scenario(name, expected, **kw):
            sc = RouterScenario(r, sets, name, expected)
            try:
                sc.run(**kw)
            except Exception as e:  # one broken scenario fails its rows; the others still run
                sc.fail(f"{name}: {e}")
            sc.add()
            return sc

        scenario("healthy", "full (ipv4 full, ipv6 full)", expect={s: ("full", None) for s in ("overall",) + FAMILIES}, hold=3.0)
        scenario("blackhole (router drops all forwarded)", "limited (ipv4 limited, ipv6 limited)", expect=down,
                 revert=lambda: router.blackhole(False), **resolver("the blackhole", lambda: router.blackhole(True), "upstream"))
        scenario("router uplink down", "limited (ipv4 limited, ipv6 limited)", expect=down,
                 revert=lambda: router.uplink(True), **resolver("the uplink outage", lambda: router.uplink(False), "cached"))

        # openNDS handles IPv4 only (its docs: disable IPv6 on the managed interface), so the
        # hotspot LAN has no IPv6: no default route at the home, ipv6 `none` throughout.
        router.home_ipv6(False)
        try:
            def portal_answers():
                get = router.http("GET", V4_NET, "/generate_204")
                head = router.http("HEAD", V4_NET, "/generate_204")
                ok = get[0] == 307 and ":2050/" in get[1] and head[0] == 511
                text = f"openNDS before auth: GET {get[0]} -> {get[1][:60]}..., HEAD {head[0]}"
                log("  " + text)
                return ok, text

            def auth():
                p = router.ndsctl("auth", router.client_ip)
                if "authenticated" not in p.stdout:
                    raise RuntimeError(f"ndsctl auth {router.client_ip}: {p.stdout}{p.stderr}")

            scenario("openNDS portal, then ndsctl auth", "portal (ipv4 portal, ipv6 none); full after auth",
                     expect={"overall": ("portal", None), "ipv4": ("portal", None), "ipv6": ("none", None)},
                     apply=router.start_opennds, revert=auth, during=portal_answers, recover_scopes=("overall", "ipv4"))
        finally:
            router.stop_opennds()
            router.home_ipv6(True)
        for _, ex, _ in sets:
            ex.stop()
    finally:
        lab.enter(lab.client)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prefix", required=True, help="namespace name prefix, unique per run (rxlab-PID)")
    ap.add_argument("--exporter-bin", required=True)
    ap.add_argument("--lab-bin", required=True)
    ap.add_argument("--loss", type=int, default=5, help="random loss percent")
    ap.add_argument("--loss-seconds", type=float, default=90, help="duration of the random-loss scenario")
    ap.add_argument("--hold", type=float, default=6, help="how long 'stays full' scenarios are watched")
    ap.add_argument("--flaps", type=int, default=5)
    ap.add_argument("--flap-down", type=float, default=1.0)
    ap.add_argument("--flap-up", type=float, default=2.0)
    ap.add_argument("--keep", action="store_true", help="keep the work directory (logs, certificates)")
    ap.add_argument("--only", default="", help="comma-separated phases: single,loss,icmp,uplinks,router")
    args = ap.parse_args()
    lab = Lab(args)
    started = time.time()
    runner = Runner(lab, args)
    failed, current = True, "lab setup"
    try:
        phases = [p for p in (args.only or "single,loss,icmp,uplinks,router").split(",") if p]
        known = ("single", phase_single_uplink), ("loss", phase_loss), ("icmp", phase_icmp_policy), \
            ("uplinks", phase_uplinks), ("router", phase_router)
        unknown = set(phases) - {name for name, _ in known}
        if unknown:
            raise RuntimeError(f"unknown phase(s) {', '.join(sorted(unknown))}")
        lab.build()
        lab.enter_client()
        log(f"fault lab: namespaces {lab.prefix}-*, ICMP and history (--history.dir) asserted in every phase")
        for name, phase in known:
            if name in phases:
                current = f"phase {name}"
                log(f"phase {name}:")
                phase_started = time.time()
                phase(runner, lab, args)
                log(f"phase {name}: {time.time() - phase_started:.0f}s")
        failed = any(row.status == "FAIL" for row in runner.rows)
    except Exception as e:  # a broken lab or a scenario that cannot run fails the run, with the reason
        log(f"fault lab aborted in {current}: {e}")
        log(runner.tail_log())
        row = Row(f"{current} (aborted)", "runs to the end")
        row.observed = str(e).splitlines()[0][:120] if str(e) else type(e).__name__
        runner.rows.append(row)
    except KeyboardInterrupt:
        log("fault lab interrupted")
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the cleanup short
        lab.stop_exporter()
        lab.close()
    log("")
    runner.table()
    counts = {s: sum(1 for row in runner.rows if row.status == s) for s in ("PASS", "FAIL", "SKIPPED")}
    log(f"fault lab: {counts['PASS']} passed, {counts['FAIL']} failed, {counts['SKIPPED']} skipped "
        f"in {time.time() - started:.0f}s")
    if counts["SKIPPED"]:
        log("NOTICE: fault lab scenarios skipped on request (not passes): "
            + ", ".join(row.scenario for row in runner.rows if row.status == "SKIPPED"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
