#!/usr/bin/env python3
"""The uplink lab's driver (run through `scripts/lab uplinks`, which checks the tools, finds the
binary and sweeps the namespaces afterwards): metered and policy-routed uplinks (issue #31),
proven with the built exporter in namespaces that exist only for this run:

    site ─eth0── isp1 (primary, the main table's default route) ──┐
         └wwan0─ isp2 (metered; its default route only in table 102) ─┴─ inet (targets)

The site is a multi-WAN host as mwan3 sets one up: `ip rule fwmark 0x2 lookup 102`, table 102
holding the only default route through wwan0, and the exporter marking wwan0's probes 0x2
(`uplink_settings: {wwan0: {mark: 0x2}}`). nftables counters on isp2 are the witness of what
crosses the metered uplink (per target and direction, IP packets as the exporter counts them).
IPv4 only; benchmark addresses (198.18.0.0/15), nothing routes to the host. Rows:

- probe set and interval: wwan0 runs only `web` and `echo` (not `far`), every 3 s while the
  rounds run every 1 s; isp2 never sees `far`'s target; the exporter's bytes for wwan0 (in all,
  and per probe) are within 10 % of the counters;
- table-only backup: wwan0 is `full` through table 102; its provider cut upstream, wwan0 is
  `limited`, located `upstream` (its gateway, only in table 102, checked and answering); its
  gateway silent too, located `gateway`;
- budget: 6 KB per 1 m window for wwan0 while its probes could cost ~60 KB: what the counters
  see in the window stays within the budget, the interval is stretched (cause budget or
  exhausted) and probes run again once the next window starts;
- prefer: a long-lived TCP transfer bound to wwan0 (marked like the probes) keeps wwan0 `full`
  with zero probe packets on the counters for 15 s (its interval 10 s);
- stall: wwan0's provider cut mid-transfer: wwan0 leaves `full` sooner than its 10 s interval
  (the connection's retransmissions start a round at once); the time is stated.

A closing table; exit 1 when any row fails. About 2 minutes.
"""

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

from .. import netns, procs
from ..exposition import Exposition
from ..netns import enter, lab_arguments
from ..util import connects, log, log_table, run, wait_until

NODES = ("site", "isp1", "isp2", "inet")
WEB, STREAM, FAR = "198.19.0.1", "198.19.0.2", "198.19.0.3"
STREAM_PORT = 9000
EXPORTER_PORT = 10371
GATEWAY = {"eth0": "198.18.1.1", "wwan0": "198.18.2.1"}
TOLERANCE = 0.10
ROUTER_SYSCTLS = ("net.ipv4.ip_forward=1", "net.ipv4.icmp_ratelimit=0")
COUNTERS = ("web_out", "web_in", "echo_out", "echo_in", "far", "gw_in", "gw_out", "stream")


class Row:
    def __init__(self, name, expected):
        self.name, self.expected, self.measured, self.status, self.notes = name, expected, "-", "FAIL", []


class Lab:
    def __init__(self, prefix, exporter_bin, keep):
        self.prefix, self.bin, self.keep = prefix, exporter_bin, keep
        self.names = {n: f"{prefix}-{n}" for n in NODES}
        self.namespaces = netns.Namespaces()
        self.work = tempfile.mkdtemp(prefix=f"{prefix}-")
        self.processes, self.exporter, self.rows = [], None, []

    def ns(self, node):
        return self.names[node]

    # ---- topology ---------------------------------------------------------------------------
    def build(self):
        for n in NODES:
            self.namespaces.add(self.ns(n))
        for r in ("isp1", "isp2"):
            netns.sysctl(self.ns(r), *ROUTER_SYSCTLS)
        site, inet = self.ns("site"), self.ns("inet")
        self.namespaces.link(site, "eth0", "198.18.1.2/24", self.ns("isp1"), "lan", "198.18.1.1/24")
        self.namespaces.link(site, "wwan0", "198.18.2.2/24", self.ns("isp2"), "lan", "198.18.2.1/24")
        self.namespaces.link(self.ns("isp1"), "wan", "198.18.3.1/24", inet, "up1", "198.18.3.2/24")
        self.namespaces.link(self.ns("isp2"), "wan", "198.18.4.1/24", inet, "up2", "198.18.4.2/24")
        run("ip", "-n", self.ns("isp1"), "route", "add", "default", "via", "198.18.3.2")
        run("ip", "-n", self.ns("isp2"), "route", "add", "default", "via", "198.18.4.2")
        run("ip", "-n", inet, "route", "add", "198.18.1.0/24", "via", "198.18.3.1")
        run("ip", "-n", inet, "route", "add", "198.18.2.0/24", "via", "198.18.4.1")
        for a in (WEB, STREAM, FAR):
            run("ip", "-n", inet, "addr", "add", f"{a}/32", "dev", "lo")
        # The site: main table by eth0; wwan0's default route only in table 102, chosen by mark.
        run("ip", "-n", site, "route", "add", "default", "via", GATEWAY["eth0"], "dev", "eth0")
        run("ip", "-n", site, "route", "add", "default", "via", GATEWAY["wwan0"], "dev", "wwan0", "table", "102")
        run("ip", "-n", site, "rule", "add", "fwmark", "0x2", "lookup", "102", "priority", "100")
        # Replies to wwan0's address come back on wwan0 although main routes by eth0.
        netns.sysctl(site, "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.wwan0.rp_filter=0")
        self.meter()

    def meter(self):
        """The witness on isp2: what crosses the metered uplink, per target and direction."""
        c = "\n".join(f"  counter {n} {{}}" for n in COUNTERS)
        netns.nft(
            self.ns("isp2"),
            "table inet rxmeter {\n" + c + "\n"
            "  chain forward_count {\n    type filter hook forward priority -300;\n"
            f'    iifname "lan" ip daddr {WEB} tcp dport 80 counter name "web_out"\n'
            f'    oifname "lan" ip saddr {WEB} tcp sport 80 counter name "web_in"\n'
            f'    iifname "lan" ip daddr {WEB} icmp type echo-request counter name "echo_out"\n'
            f'    oifname "lan" ip saddr {WEB} icmp type echo-reply counter name "echo_in"\n'
            f'    ip daddr {FAR} counter name "far"\n    ip saddr {FAR} counter name "far"\n'
            f'    ip daddr {STREAM} counter name "stream"\n    ip saddr {STREAM} counter name "stream"\n'
            "  }\n"
            '  chain input_count {\n    type filter hook input priority -300;\n    iifname "lan" counter name "gw_in"\n  }\n'
            '  chain output_count {\n    type filter hook output priority -300;\n    oifname "lan" counter name "gw_out"\n  }\n'
            "}\n",
        )

    def counters(self):
        """{name: (packets, bytes)} of isp2's witness."""
        out = run("ip", "netns", "exec", self.ns("isp2"), "nft", "-j", "list", "counters", "table", "inet", "rxmeter")
        got = {}
        for item in json.loads(out.stdout).get("nftables", []):
            c = item.get("counter")
            if c:
                got[c["name"]] = (c["packets"], c["bytes"])
        return got

    def cut(self, on, silent=False):
        """isp2 drops what it would forward upstream (and, `silent`, everything for itself too)."""
        netns.nft_delete(self.ns("isp2"), "inet", "rxcut")
        if not on:
            return
        rules = '    type filter hook forward priority 0;\n    oifname "wan" drop\n'
        text = "table inet rxcut {\n  chain forward_cut {\n" + rules + "  }\n"
        if silent:
            text += '  chain input_cut {\n    type filter hook input priority 0;\n    iifname "lan" drop\n  }\n'
            # Nor any ICMP of its own (a trace's time exceeded is made on the forward path).
            text += '  chain output_cut {\n    type filter hook output priority 0;\n    oifname "lan" drop\n  }\n'
        netns.nft(self.ns("isp2"), text + "}\n")

    def start(self, module_args, ns, expect):
        log = os.path.join(self.work, f"{module_args[0]}.{ns}.log")
        return procs.start_module(self.ns(ns), module_args, log, expect, self.processes)

    # ---- the exporter -------------------------------------------------------------------------
    def config(self, wwan0, interval="1s"):
        path = os.path.join(self.work, "config.yml")
        with open(path, "w") as f:
            f.write(
                f"global: {{interval: {interval}, timeout: 800ms, fail_after: 1, recover_after: 1}}\n"
                "uplinks: [eth0, wwan0]\n"
                f"uplink_settings:\n  wwan0: {wwan0}\n"
                "probes:\n"
                f'  - {{name: web, type: http, target: "http://{WEB}/generate_204"}}\n'
                f"  - {{name: echo, type: icmp, target: {WEB}}}\n"
                f"  - {{name: far, type: icmp, target: {FAR}}}\n"
            )
        return path

    def start_exporter(self, wwan0, *flags):
        self.stop_exporter()
        argv = [
            "ip", "netns", "exec", self.ns("site"), "env", "REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1",
            self.bin, f"--web.listen-address=127.0.0.1:{EXPORTER_PORT}", f"--config.file={self.config(wwan0)}",
            *flags,
        ]  # fmt: skip
        log_path = os.path.join(self.work, "exporter.log")
        self.exporter = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=open(log_path, "a"))
        self.processes.append(self.exporter)
        if not wait_until(lambda: self.exporter.poll() is None and self.get("/-/ready"), 20, 0.1):
            raise RuntimeError(f"the exporter did not become ready: {self.tail()}")
        if not wait_until(lambda: self.verdict("wwan0") == "full" and self.verdict("eth0") == "full", 20, 0.2):
            raise RuntimeError(f"wwan0 and eth0 are not full: {self.tail()}")

    def stop_exporter(self):
        if self.exporter is not None:
            procs.stop(self.exporter)
            self.processes.remove(self.exporter)
            self.exporter = None

    def get(self, path):
        with urllib.request.urlopen(f"http://127.0.0.1:{EXPORTER_PORT}{path}", timeout=2) as r:
            return r.read().decode(errors="replace")

    def scrape(self):
        return Exposition(self.get("/metrics"))

    def verdict(self, scope):
        return self.scrape().verdict(scope)[0]

    def tail(self, lines=12):
        try:
            with open(os.path.join(self.work, "exporter.log"), errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""

    def settled(self, target="echo@wwan0", timeout=10, attempts=5):
        """A scrape and the counters read together, 1 s after a round of `target` ended (the
        round's connections closed and their last segments counted on both sides), and with no
        round of `target` in flight while they were read: one that ended within a second after
        (rounds time out at 800 ms) may have put packets on the counters that the scrape did not
        yet count, so the reading is taken again (a non-full verdict runs the uplink every round)."""
        for _ in range(attempts):
            first = self.scrape().total("reachability_probes_total", target=target)
            if not wait_until(
                lambda first=first: self.scrape().total("reachability_probes_total", target=target) > first,
                timeout,
                0.05,
            ):
                raise RuntimeError(f"no round of {target} within {timeout} s")
            time.sleep(1.0)
            m, c = self.scrape(), self.counters()
            time.sleep(1.0)
            if self.scrape().total("reachability_probes_total", target=target) == m.total(
                "reachability_probes_total", target=target
            ):
                return m, c
            log(f"  a round of {target} overlapped the reading; reading again")
        raise RuntimeError(f"no quiet second between rounds of {target} in {attempts} attempts")

    # ---- rows ---------------------------------------------------------------------------------
    def add(self, row, problems):
        row.notes = problems
        row.status = "PASS" if not problems else "FAIL"
        self.rows.append(row)
        for p in problems:
            log(f"  {row.name}: {p}")

    def probe_set_and_bytes(self, seconds=24.0):
        self.start_exporter("{mark: 0x2, probes: [web, echo], interval: 3s}")
        m0, c0 = self.settled()
        time.sleep(seconds)
        m1, c1 = self.settled()

        def d(name, **labels):
            return m1.total(name, **labels) - m0.total(name, **labels)

        def nft(*names):
            return sum(c1[n][1] - c0[n][1] for n in names)

        problems = []
        rounds_w, rounds_e = (
            d("reachability_probes_total", target="echo@wwan0"),
            d("reachability_probes_total", target="echo@eth0"),
        )
        row = Row("probe set and interval", "wwan0: web, echo every 3 s; far never")
        row.measured = f"{rounds_w:.0f} rounds on wwan0, {rounds_e:.0f} on eth0; far on isp2: {nft('far')} B"
        if not (rounds_e > 0 and 0.25 <= rounds_w / rounds_e <= 0.42):
            problems.append(f"wwan0 ran {rounds_w} rounds to eth0's {rounds_e}: want about a third")
        if nft("far") != 0 or m1.series("reachability_probes_total", target="far@wwan0"):
            problems.append(f"far crossed wwan0 ({nft('far')} B) or has a wwan0 series")
        if d("reachability_probes_total", target="far@eth0") <= 0:
            problems.append("far did not run on eth0")
        self.add(row, problems)

        parts = [
            ("uplink wwan0 (all)", d("reachability_uplink_traffic_bytes_total", interface="wwan0"),
             nft("web_out", "web_in", "echo_out", "echo_in", "gw_in", "gw_out")),
            ("web@wwan0", d("reachability_probe_traffic_bytes_total", target="web@wwan0"), nft("web_out", "web_in")),
            ("echo@wwan0", d("reachability_probe_traffic_bytes_total", target="echo@wwan0"), nft("echo_out", "echo_in")),
        ]  # fmt: skip
        for name, exported, counted in parts:
            row = Row(f"bytes: {name}", f"within {TOLERANCE:.0%} of nftables")
            ratio = exported / counted if counted else math.inf
            row.measured = f"exported {exported:.0f} B, nftables {counted} B ({ratio - 1:+.1%})"
            self.add(row, [] if abs(ratio - 1) <= TOLERANCE else [row.measured])
            log(f"measured: {name}: {row.measured}")
        sent = d("reachability_probe_traffic_packets_total", target="web@wwan0", direction="sent")
        counted = c1["web_out"][0] - c0["web_out"][0]
        log(f"measured: web@wwan0 packets sent: exported {sent:.0f}, nftables {counted}")

    def table_only_backup(self):
        problems = []
        m = self.scrape()
        if m.verdict("wwan0")[0] != "full":
            problems.append(f"wwan0 is {m.verdict('wwan0')} before the cut")
        self.cut(True)
        upstream = wait_until(lambda: self.fault("wwan0") == "upstream", 15, 0.2)
        state, at_cut = self.verdict("wwan0"), self.fault_seen
        self.cut(True, silent=True)
        gateway = wait_until(lambda: self.fault("wwan0") == "gateway", 15, 0.2)
        self.cut(False)
        back = wait_until(lambda: self.verdict("wwan0") == "full", 15, 0.2)
        row = Row("backup routed by table 102 only", "full; cut: limited at upstream; silent: gateway")
        row.measured = f"cut: {state} at {at_cut or '-'}; silent gateway: {self.fault_seen if gateway else '-'}"
        if not upstream or state != "limited":
            problems.append(f"the cut upstream gave {state} at {at_cut}: {self.tail(4)}")
        if not gateway:
            problems.append(f"the silent gateway was located at {self.fault_seen}")
        if not back:
            problems.append("wwan0 did not recover")
        self.add(row, problems)

    fault_seen = None

    def fault(self, scope):
        for labels, v in self.scrape().series("reachability_fault_info", scope=scope):
            if v == 1:
                self.fault_seen = labels.get("location")
                return self.fault_seen
        return None

    def budget(self, budget=6000):
        now = time.time()
        end = math.ceil(now / 60) * 60
        if end - now < 25:  # too little of this window left to watch: start with the next one
            time.sleep(end - now + 0.3)
            end += 60
        c0 = self.counters()
        self.start_exporter(f"{{mark: 0x2, probes: [web, echo], budget: {budget}, budget_period: 1m}}")
        start = time.time()
        time.sleep(max(0.0, end - time.time() - 0.4))
        m, c1 = self.scrape(), self.counters()
        used = sum(c1[n][1] - c0[n][1] for n in ("web_out", "web_in", "echo_out", "echo_in", "gw_in", "gw_out"))
        intervals = m.series("reachability_uplink_probe_interval_seconds", interface="wwan0")
        cause = intervals[0][0].get("cause") if intervals else "-"
        interval = intervals[0][1] if intervals else 0
        remaining = m.value("reachability_uplink_budget_remaining_bytes", interface="wwan0")
        rounds = m.total("reachability_probes_total", target="echo@wwan0")
        unbudgeted = (end - start) * (used / max(rounds, 1))
        row = Row(f"budget {budget} B per 1 m", "the window's bytes on nftables within the budget")
        row.measured = (
            f"{used} B in {end - start:.0f} s of the window ({rounds:.0f} rounds; unbudgeted ~{unbudgeted:.0f} B), "
            f"interval {interval:.1f} s ({cause}), {remaining} B left"
        )
        problems = []
        if used > budget:
            problems.append(f"the window used {used} B of {budget}")
        # Stretched past the global 1 s, or spent (its value is then the time left in the window).
        if not (cause == "exhausted" or (cause == "budget" and interval > 1.0)):
            problems.append(f"the interval was not stretched: {interval} ({cause})")
        if rounds < 2:
            problems.append(f"only {rounds} rounds ran")
        self.add(row, problems)
        log(f"measured: budget: {row.measured}")
        # The next window: the probes run again.
        again = wait_until(
            lambda: self.scrape().total("reachability_probes_total", target="echo@wwan0") > rounds, 8, 0.2
        )
        row = Row("budget: the next window", "wwan0 probed again within 8 s of the window's start")
        row.measured = f"{'probed' if again else 'not probed'} {time.time() - end:.1f} s after"
        self.add(row, [] if again else [row.measured])

    def prefer_and_stall(self, hold=15.0):
        self.start_exporter(
            "{mark: 0x2, probes: [web, echo], interval: 10s}",
            "--passive.mode=prefer",
            "--passive.interval=500ms",
            "--passive.freshness=2s",
        )
        client = self.start(
            ["rxlab.uplinklab.stream", "client", STREAM, str(STREAM_PORT), "wwan0", "0x2"], "site", "connected"
        )
        vouched = wait_until(
            lambda: self.scrape().value("reachability_passive_connections", scope="wwan0", state="receiving"), 10, 0.2
        )
        time.sleep(1.5)  # a round in flight when the evidence came ends
        c0 = self.counters()
        r0 = self.scrape().total("reachability_probes_total", target="echo@wwan0")
        full_all_along = True
        t0 = time.time()
        while time.time() - t0 < hold:
            full_all_along = full_all_along and self.verdict("wwan0") == "full"
            time.sleep(0.5)
        c1 = self.counters()
        rounds = self.scrape().total("reachability_probes_total", target="echo@wwan0") - r0
        probe_packets = sum(c1[n][0] - c0[n][0] for n in ("web_out", "web_in", "echo_out", "echo_in"))
        streamed = c1["stream"][1] - c0["stream"][1]
        # Without prefer the carrying uplink runs every 1 s round (15 here); prefer pauses it for
        # at most two of its own 10 s intervals, so at most one round falls in the hold (#42).
        row = Row("prefer during a transfer", f"wwan0 full, at most 1 round of its probes in {hold:.0f} s")
        row.measured = (
            f"{rounds:.0f} rounds, {probe_packets} probe packets, {streamed / 1e6:.1f} MB of transfer, "
            f"full throughout: {full_all_along}"
        )
        problems = []
        if not vouched:
            problems.append("the transfer was never seen receiving on wwan0")
        if rounds > 1 or not full_all_along or streamed <= 0:
            problems.append(row.measured)
        self.add(row, problems)
        log(f"measured: prefer: {row.measured}")

        rechecks = self.scrape().total("reachability_passive_stall_rechecks_total")
        cut = time.time()
        self.cut(True)
        left = wait_until(lambda: self.verdict("wwan0") != "full", 12, 0.05)
        took = time.time() - cut
        state = self.verdict("wwan0")
        more = self.scrape().total("reachability_passive_stall_rechecks_total") - rechecks
        self.cut(False)
        row = Row("stall mid-transfer", "wwan0 leaves full sooner than its 10 s interval")
        row.measured = f"{state} after {took:.2f} s ({more:.0f} stall re-checks)"
        self.add(row, [] if left and took < 10 else [row.measured])
        log(f"measured: stall: {row.measured}")
        procs.stop(client)
        self.processes.remove(client)

    def close(self):
        procs.stop_all(self.processes)
        self.namespaces.close()
        if self.keep:
            log(f"uplink lab: logs kept in {self.work}")
        else:
            shutil.rmtree(self.work, ignore_errors=True)


def main():
    ap = lab_arguments(
        "scripts/lab uplinks", __doc__, "--prefix and --exporter-bin are given by scripts/lab (RX_BIN_DIR).", "rxup-PID"
    )
    ap.add_argument("--keep", action="store_true", help="keep the work directory (exporter log)")
    args = ap.parse_args()
    started = time.time()
    lab = Lab(args.prefix, args.exporter_bin, args.keep)
    current = "setup"
    try:
        lab.build()
        lab.start(["rxlab.hoplab.http204", "80"], "inet", "ready")
        lab.start(["rxlab.uplinklab.stream", "server", str(STREAM_PORT)], "inet", "ready")
        enter(lab.ns("site"))  # the exporter listens on the site's 127.0.0.1
        if not wait_until(lambda: connects(WEB, 80), 10):
            raise RuntimeError("the site does not reach the web target")
        log(f"uplink lab: namespaces {args.prefix}-*, exporter {args.exporter_bin}")
        for name, step in (
            ("probe set and bytes", lab.probe_set_and_bytes),
            ("table-only backup", lab.table_only_backup),
            ("budget", lab.budget),
            ("prefer and stall", lab.prefer_and_stall),
        ):
            current = name
            step()
    except Exception as e:  # a lab that cannot run fails, with the reason
        lab.add(Row(f"{current} (aborted)", "runs to the end"), [f"{type(e).__name__}: {e}", lab.tail(8)])
    except KeyboardInterrupt:
        log("uplink lab interrupted")
        lab.rows.append(Row(f"{current} (interrupted)", "runs to the end"))
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        lab.close()
    log("")
    log_table(("row", "expected", "measured", "result"), [(r.name, r.expected, r.measured, r.status) for r in lab.rows])
    failed = sum(1 for r in lab.rows if r.status != "PASS")
    log(f"uplink lab: {len(lab.rows) - failed} passed, {failed} failed in {time.time() - started:.0f}s")
    return 1 if failed or not lab.rows else 0


if __name__ == "__main__":
    sys.exit(main())
