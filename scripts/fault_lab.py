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
is asserted through the exporter's scraped metrics (and its history, when the build has one);
the run ends with a table: scenario, expected, observed, detection and recovery times.
"""
import argparse
import ctypes
import glob
import json
import math
import os
import shutil
import socket
import subprocess
import sys
import tempfile
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
        self.exporter_log = os.path.join(self.work, f"exporter-{name}.log")
        argv = ["ip", "netns", "exec", self.client, "env", f"SSL_CERT_FILE={self.work}/ca.pem",
                "REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1", self.args.exporter_bin,
                f"--web.listen-address=127.0.0.1:{PORT}", "--log.level=debug"] + flags
        if self.args.history:
            self.history_dir = os.path.join(self.work, f"history-{name}")
            os.makedirs(self.history_dir, exist_ok=True)
            argv.append(f"--history.dir={self.history_dir}")
        self.exporter = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=open(self.exporter_log, "w"))
        self.processes.append(self.exporter)
        deadline = time.time() + 20
        while time.time() < deadline:
            if self.exporter.poll() is not None:
                raise RuntimeError(f"exporter exited {self.exporter.returncode}: {open(self.exporter_log).read()[-2000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{PORT}/-/ready", timeout=1) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError("exporter did not become ready within 20 s")

    def stop_exporter(self):
        if self.exporter and self.exporter.poll() is None:
            self.exporter.terminate()
            try:
                self.exporter.wait(5)
            except subprocess.TimeoutExpired:
                self.exporter.kill()
                self.exporter.wait()
        self.exporter = None

    def scrape(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{PORT}/metrics", timeout=2) as r:
            return Metrics(r.read().decode())

    def enter_client(self):
        """Moves this process into the client namespace, where the exporter listens on
        127.0.0.1. Commands name their namespace explicitly, so nothing else changes."""
        libc = ctypes.CDLL(None, use_errno=True)
        fd = os.open(f"/var/run/netns/{self.client}", os.O_RDONLY)
        try:
            if libc.setns(fd, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns")
        finally:
            os.close(fd)

    def close(self):
        for p in self.processes:
            if p.poll() is None:
                p.terminate()
        for p in self.processes:
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
        for ns in reversed(self.namespaces):
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
        for path in sorted(glob.glob(os.path.join(self.lab.history_dir or "/nonexistent", "history-*.jsonl"))):
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
        if self.lab.history_dir and ok:
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
        if not self.lab.history_dir:
            return True
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
        for note in row.notes:
            if "\n" in note:
                log("    " + note.replace("\n", "\n    "))

    def pending(self, scenario, expected, why="pending ICMP"):
        row = Row(scenario, expected)
        row.status, row.observed = "PENDING", why
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


def probe_flags(icmp, interval="1s", timeout="500ms"):
    flags = [f"--probe.http=http://{V4_NET}/generate_204", f"--probe.http=https://{V4_NET}/generate_204",
             f"--probe.http=http://[{V6_NET}]/generate_204",
             f"--probe.dns={LAB_NAME}@{V4_DNS}", f"--probe.dns={LAB_NAME}@{V6_DNS}"]
    if icmp:
        flags += [f"--probe.icmp={V4_NET}", f"--probe.icmp={V6_NET}"]
    return flags + [f"--probe.interval={interval}", f"--probe.timeout={timeout}", "--probe.fail-after=2", "--probe.recover-after=2"]


def phase_single_uplink(r, lab, args, icmp):
    """One uplink, the parallel policy: every fault of the table but the policy and uplink ones."""
    lab.start_exporter("parallel", probe_flags(icmp))
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

    if icmp:
        row = Row("ICMP blocked, HTTP fine (parallel)", f"stays full {args.hold:.0f}s, 0 transitions")
        lab.nft(up1, DROP_PING)
        try:
            m0, m, moved, worst = r.hold(row, args.hold)
        finally:
            lab.nft_flush(up1)
        icmp_ok = sum(v for l, v in m.all("reachability_probe_success", probe="icmp"))
        row.observed = f"{m.verdict()[0]}, {moved:.0f} transitions, icmp successes {icmp_ok:.0f}"
        quiet = r.history_quiet(row, r.hold_started, time.time())
        row.status = "PASS" if moved == 0 and worst is None and icmp_ok == 0 and quiet else "FAIL"
        if worst:
            row.notes.append(f"left full: {worst}")
        r.add(row)
    else:
        r.pending("ICMP blocked, HTTP fine (parallel)", "full")

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


def phase_loss(r, lab, args, icmp):
    """Random loss, with timeouts that leave room for one TCP retransmission (1.5 s; the
    product's default is 3 s). With the other phases' 500 ms, one lost SYN fails a probe, and
    the single HTTPS probe failing two rounds in a row turns the verdict `limited (partial)`
    about once a minute at 5% loss: the partial and DNS rules hang on single probes."""
    if args.loss_seconds <= 0:
        r.pending(f"{args.loss}% random loss", "stays full, 0 transitions", why="skipped (--loss-seconds=0)")
        return
    lab.start_exporter("loss", probe_flags(icmp, interval="2s", timeout="1500ms"))
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
    loss_text = f"icmp loss {100 * (sent - got) / sent:.1f}% of {sent:.0f}" if sent else "icmp loss: pending ICMP"
    row.observed = f"{m.verdict()[0]}, {moved:.0f} transitions, {loss_text}, probe failures {fails:.0f}/{runs:.0f}"
    ok = moved == 0 and worst is None and r.history_quiet(row, r.hold_started, time.time())
    if sent and not (0.02 <= (sent - got) / sent <= 0.10):
        row.notes.append("icmp loss ratio outside 2-10%")
        ok = False
    row.status = "PASS" if ok else "FAIL"
    if worst:
        row.notes.append(f"left full: {worst}")
    r.add(row)



def phase_icmp_policy(r, lab, args, icmp):
    if not icmp:
        r.pending("ICMP blocked, HTTP fine (icmp policy)", "limited")
        return
    lab.start_exporter("icmp", probe_flags(icmp) + ["--probe.mode=icmp"])
    row = Row("ICMP blocked, HTTP fine (icmp policy)", "limited (timeout)")
    r.fault(row, lambda: lab.nft(lab.up1, DROP_PING), lambda: lab.nft_flush(lab.up1),
            {"overall": ("limited", "timeout")}, ("overall",))
    r.add(row)


def phase_uplinks(r, lab, args, icmp):
    lab.add_backup_uplink()
    lab.start_exporter("uplinks", probe_flags(icmp) + ["--probe.uplink=c1", "--probe.uplink=c2"])
    row = Row("primary uplink dead, backup alive", "overall limited, c1 limited, c2 full")
    r.fault(row, lambda: lab.nft(lab.up1, DROP_ALL), lambda: lab.nft_flush(lab.up1),
            {"overall": ("limited", None), "c1": ("limited", None), "c2": ("full", None)}, ("overall", "c1", "c2"))
    r.add(row)


def detect_features(lab):
    """Which landed features the built exporter has: ICMP probes and history."""
    help_text = run(lab.args.exporter_bin, "--help", check=False).stdout
    history = "--history.dir" in help_text
    p = run("ip", "netns", "exec", lab.client, "env", "REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1",
            lab.args.exporter_bin, "check", "--probe.icmp=127.0.0.1", "--no-path.monitor",
            "--probe.interval=1s", "--probe.timeout=500ms", check=False)
    icmp = "not available" not in (p.stdout + p.stderr) and p.returncode != 64
    return icmp, history


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
    ap.add_argument("--only", default="", help="comma-separated phases: single,loss,icmp,uplinks")
    args = ap.parse_args()
    lab = Lab(args)
    started = time.time()
    runner = Runner(lab, args)
    failed = True
    try:
        lab.build()
        lab.enter_client()
        icmp, history = detect_features(lab)
        args.history = history
        log(f"fault lab: namespaces {lab.prefix}-*, ICMP {'on' if icmp else 'PENDING (not in this build)'}, "
            f"history {'on' if history else 'NOTICE: --history.dir not accepted by this build; history assertions skipped'}")
        phases = [p for p in (args.only or "single,loss,icmp,uplinks").split(",") if p]
        for name, phase in (("single", phase_single_uplink), ("loss", phase_loss), ("icmp", phase_icmp_policy), ("uplinks", phase_uplinks)):
            if name in phases:
                log(f"phase {name}:")
                phase(runner, lab, args, icmp)
        failed = any(row.status == "FAIL" for row in runner.rows)
    except Exception as e:  # a broken lab is a failed run, with the reason in the output
        log(f"fault lab aborted: {e}")
        log(runner.tail_log())
    finally:
        lab.stop_exporter()
        lab.close()
    log("")
    runner.table()
    counts = {s: sum(1 for row in runner.rows if row.status == s) for s in ("PASS", "FAIL", "PENDING")}
    log(f"fault lab: {counts['PASS']} passed, {counts['FAIL']} failed, {counts['PENDING']} pending "
        f"in {time.time() - started:.0f}s")
    if counts["PENDING"]:
        log("NOTICE: fault lab scenarios pending (not passes): " + ", ".join(row.scenario for row in runner.rows if row.status == "PENDING"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
