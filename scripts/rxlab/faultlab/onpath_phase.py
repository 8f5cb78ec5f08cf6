"""The onpath phase (issue #29): a box on the path answers in place of the internet. Four
classes of imitation, each played with real software on the router of onpathnet.py,
each watched healthy and with the router's uplink cut, each through the product's default
probe shape (faults.default_shape_flags(): captive HTTP and HTTPS by name through the system
resolver, ICMP to the lab's IPv4 and IPv6 addresses, DNS by name) and through explicit probes
for the class:

1. forged echo: with the uplink cut, the router answers every echo request itself (nft DNAT to
   its own address, both families); its replies arrive with TTL / hop limit 64 where the real
   target, one router away, is seen at 63. Explicit: ICMP to both lab addresses.
2. TCP middlebox: with the uplink cut, the router redirects every TCP connection (any address,
   any port) to a listener that accepts and never sends. Explicit: `--probe.tcp` to a banner
   server upstream (port 22, it sends `SSH-2.0-lab`), both families; and, as a configuration
   file, the same with `tcp: {expect: '^SSH-2\\.0-'}` (the row fails while the binary refuses
   that key).
3. transparent caching proxy: squid intercepting TCP 80 on the router (always, healthy too)
   with a memory cache; the upstream page is a 200 with `Cache-Control: public, max-age=600`;
   the explicit probe is that page with `--probe.http.expect-body` and no HTTPS probe (the set
   whose verdict a cache answer would make `full`). The cache is warm (the probes' own requests,
   checked in squid's log) when the uplink is cut.
4. DNS64 + NAT64 on an IPv6-only client: unbound's dns64 with the network-specific prefix
   fd64:ff9b:1::/96 forwarding to an A-only upstream, tayga translating; the default shape
   (names through that unbound: every address is a synthesized one) and, as a configuration
   file, a DNS probe asking AAAA through the system resolver plus a captive check of a name
   that has only an IPv4 address upstream (its traffic crosses tayga).

Each row: the expected verdict, the daemon's verdict and reason (reachability_connectivity_info)
and `reachability_exporter check --output=json` with the same flags (its exit status must match
its state, and its state the daemon's), the detection time after the cut (the daemon's own
transition timestamp) and the recovery time. Expectations: healthy is `full`; with the uplink
cut never `full` (no scrape may show it once the fault was detected), `limited` or `portal`
with a reason that names the imitation for the explicit probes (`forged_reply`, `intercepted`
or `banner_mismatch`, `cached` or the failure a no-cache request gets: `http_status`,
`timeout`), and for the default shape that reason or the plain failure of the other probes
(`timeout`, `unreachable`); NAT64 is `full` healthy (not `portal (private_address)`) and
`limited` cut off. A witness from the client (a raw echo's TTL, a banner read, curl with and
without `Cache-Control: no-cache`, kdig AAAA) must show each imitation as designed, or the
rows fail for the lab's sake.
"""

import os
import subprocess
import threading
import time

from ..util import log
from . import onpathnet as net
from .addresses import PORT
from .faults import default_shape_flags, timing_flags
from .filtered_sets import to_yaml
from .lab import Exporter
from .router_phase import EXIT_STATUS
from .runner import Row, Runner

GLOBAL = {"interval": "1s", "timeout": "500ms", "fail_after": 2, "recover_after": 2}
HEALTHY_WAIT = 12.0  # for every set to be full (one round decides at once after start)
DOWN_WAIT = 10.0  # fail_after 2 at 1 s: detection is expected within ~3 s
HOLD = 3.0  # after detection: no scrape may show `full`
RECOVER_WAIT = 15.0
LIMITED = ("limited", "portal")


class ProbeSet:
    """One exporter's probes: flags, or a configuration file (`config`: the probes' list), and
    what it must show with the uplink cut: a state in `down_states` and, unless None, a reason
    in `down_reasons`."""

    def __init__(self, label, flags=(), config=None, down_states=LIMITED, down_reasons=None):
        self.label, self.flags, self.config = label, list(flags), config
        self.down_states, self.down_reasons = down_states, down_reasons
        self.path, self.exporter, self.refused = None, None, None

    def expected_down(self):
        reasons = "|".join(self.down_reasons) if self.down_reasons else "any reason"
        return f"{'|'.join(self.down_states)} ({reasons}), never full"

    def down_ok(self, verdict):
        state, reason = verdict
        return state in self.down_states and (self.down_reasons is None or reason in self.down_reasons)

    def write(self, work, key):
        if self.config is not None:
            self.path = os.path.join(work, f"onpath-{key}-{self.label}.yml")
            with open(self.path, "w") as f:
                f.write(to_yaml({"global": GLOBAL, "probes": self.config}) + "\n")

    def argv(self):
        return ([f"--config.file={self.path}"] if self.path else []) + self.flags


class OnpathClass:
    """One imitation: the client namespace its sets run in, the sets, the fault that goes with
    the uplink cut (`fault(on)`), what runs around the class (`setup`, `teardown`) and the
    witness (`witness(phase)` -> (as designed, text), phase "healthy" or "down")."""

    def __init__(self, key, name, ns, sets, fault=None, setup=None, teardown=None, witness=None):
        self.key, self.name, self.ns, self.sets = key, name, ns, sets
        self.fault, self.setup, self.teardown, self.witness = fault, setup, teardown, witness


def describe(verdict):
    state, reason = verdict
    return f"{state}({reason})" if reason else f"{state}"


def scrape(s):
    try:
        return s.exporter.scrape()
    except OSError:
        return None


def wait_sets(sets, ok, limit):
    """Polls every set until `ok(set, scrape)`; returns label -> (scrape when met or the last
    one, met)."""
    deadline, out = time.time() + limit, {}
    while True:
        for s in sets:
            if s.label in out and out[s.label][1]:
                continue
            m = scrape(s)
            if m is not None:
                out[s.label] = (m, ok(s, m))
        if all(s.label in out and out[s.label][1] for s in sets) or time.time() > deadline:
            break
        time.sleep(0.1)
    return {s.label: out.get(s.label, (None, False)) for s in sets}


def checks(sets):
    """`check --output=json` of every set at once, each then compared with a scrape of its
    daemon taken right after: label -> (exit, state, reason, daemon verdict, problem or None)."""
    out = {}

    def one(s):
        try:
            code, js, raw = s.exporter.check_json(s.argv())
        except subprocess.TimeoutExpired:
            code, js, raw = None, None, "check did not finish within 30 s"
        m = scrape(s)
        daemon = m.verdict() if m else (None, None)
        if js is None:
            out[s.label] = (code, None, None, daemon, f"check exited {code} without JSON: {raw}")
            return
        state, reason = js.get("state"), js.get("reason")
        problem = None
        if code != EXIT_STATUS.get(state):
            problem = f"check exited {code} for {state}"
        elif state != daemon[0]:
            problem = f"check said {describe((state, reason))}, the daemon {describe(daemon)}"
        out[s.label] = (code, state, reason, daemon, problem)

    threads = [threading.Thread(target=one, args=(s,), daemon=True) for s in sets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(40)
    return {s.label: out.get(s.label, (None, None, None, (None, None), "check did not return")) for s in sets}


def run_class(r, lab, onet, c, port):
    """Healthy, then the uplink cut with the class's fault: a row per set for each."""
    rows_h = {s.label: Row(f"onpath: {c.name}, healthy [{s.label}]", "full") for s in c.sets}
    rows_d = {s.label: Row(f"onpath: {c.name}, uplink down [{s.label}]", s.expected_down()) for s in c.sets}
    faulted = False
    try:
        if c.setup:
            c.setup()
        lab.enter(c.ns)
        for i, s in enumerate(c.sets):
            s.write(onet.work, c.key)
            if s.path:  # a key the binary does not know yet fails the set's rows, not the class
                p = subprocess.run(
                    ["ip", "netns", "exec", c.ns, lab.args.exporter_bin, "check-config", s.path],
                    capture_output=True,
                    text=True,
                    timeout=30,
                )
                if p.returncode != 0:
                    s.refused = (p.stdout + p.stderr).strip().splitlines()[-1:] or [f"exit {p.returncode}"]
                    s.refused = f"configuration refused (check-config exit {p.returncode}): {s.refused[0][:150]}"
                    continue
            try:
                s.exporter = Exporter(lab, c.ns, f"onpath-{c.key}-{s.label}", s.argv(), port + i).start()
            except RuntimeError as e:
                s.refused = f"exporter did not start: {str(e).splitlines()[0][:150]}"
        live = [s for s in c.sets if s.exporter]

        # ---- healthy
        healthy = wait_sets(live, lambda s, m: m.verdict()[0] == "full", HEALTHY_WAIT)
        seen_ok, seen = c.witness("healthy") if c.witness else (True, "")
        if seen:
            log(f"  {c.name}, healthy: {seen}")
        done = checks(live)
        for s in live:
            row, (m, met), (code, state, reason, _daemon, problem) = rows_h[s.label], healthy[s.label], done[s.label]
            row.observed = (
                f"daemon {describe(m.verdict()) if m else 'no scrape'}; check {describe((state, reason))} exit {code}"
            )
            bad = (
                [] if met else [f"not full within {HEALTHY_WAIT:.0f} s: {describe(m.verdict()) if m else 'no scrape'}"]
            )
            bad += [problem] if problem else []
            bad += [] if state == "full" else [f"check said {describe((state, reason))}"]
            bad += [] if seen_ok else ["the lab did not show the healthy path as designed: " + seen]
            row.notes = bad + ([] if not bad else ["exporter log tail:\n" + s.exporter.tail(6)])
            row.status = "FAIL" if bad else "PASS"

        # ---- the uplink cut, with the class's imitation
        before = {s.label: scrape(s) for s in live}
        t0 = time.time()
        faulted = True
        onet.uplink(False)
        if c.fault:
            c.fault(True)
        down = wait_sets(live, lambda s, m: s.down_ok(m.verdict()), DOWN_WAIT)
        full_seen, end = {}, time.time() + HOLD
        while time.time() < end:  # once detected, never full again while the fault holds
            for s in live:
                m = scrape(s)
                if m is not None and down[s.label][1] and m.verdict()[0] == "full":
                    full_seen.setdefault(s.label, time.time() - t0)
            time.sleep(0.1)
        seen_ok, seen = c.witness("down") if c.witness else (True, "")
        if seen:
            log(f"  {c.name}, uplink down: {seen}")
        done = checks(live)
        for s in live:
            row, (m, met), (code, state, reason, _daemon, problem) = rows_d[s.label], down[s.label], done[s.label]
            row.observed = (
                f"daemon {describe(m.verdict()) if m else 'no scrape'}; check {describe((state, reason))} exit {code}"
            )
            bad = []
            if met:
                since = Runner.since(m)
                if since is not None and since >= t0 - 0.05:
                    row.detect = since - t0
            else:
                bad.append(
                    f"not {s.expected_down()} within {DOWN_WAIT:.0f} s: daemon {describe(m.verdict()) if m else 'no scrape'}"
                )
            if s.label in full_seen:
                bad.append(f"full again at +{full_seen[s.label]:.1f}s")
            if problem:
                bad.append(problem)
            elif not s.down_ok((state, reason)):
                bad.append(f"check said {describe((state, reason))}, want {s.expected_down()}")
            if not seen_ok:
                bad.append("the lab did not show the imitation as designed: " + seen)
            if before.get(s.label) is not None and before[s.label].verdict()[0] != "full":
                row.notes.append(f"not full before the cut ({describe(before[s.label].verdict())})")
            row.notes = bad + row.notes + ([] if not bad else ["exporter log tail:\n" + s.exporter.tail(6)])
            row.status = "FAIL" if bad else "PASS"

        # ---- back to healthy
        t1 = time.time()
        faulted = False
        if c.fault:
            c.fault(False)
        onet.uplink(True)
        back = wait_sets(live, lambda s, m: m.verdict()[0] == "full", RECOVER_WAIT)
        for s in live:
            m, met = back[s.label]
            if met:
                since = Runner.since(m)
                rows_d[s.label].recover = since - t1 if since is not None and since >= t1 - 0.05 else None
            elif healthy[s.label][1]:  # full before the cut, and not again after it
                rows_d[s.label].notes.insert(
                    0, f"did not recover within {RECOVER_WAIT:.0f} s: {describe(m.verdict()) if m else '-'}"
                )
                rows_d[s.label].status = "FAIL"
    except Exception as e:  # a class that cannot run fails its rows; the next class still runs
        for row in list(rows_h.values()) + list(rows_d.values()):
            if row.status != "PASS" or not row.observed:
                row.status, row.observed = "FAIL", row.observed or "did not run"
                row.notes.append(f"{c.name}: {str(e)[:400]}")
    finally:
        if faulted:
            try:
                if c.fault:
                    c.fault(False)
                onet.uplink(True)
            except Exception as e:
                log(f"  could not undo '{c.name}': {e}")
        for s in c.sets:
            if s.exporter:
                s.exporter.stop()
        if c.teardown:
            try:
                c.teardown()
            except Exception as e:
                log(f"  could not tear down '{c.name}': {e}")
        lab.enter(onet.client)
    for s in c.sets:
        if s.refused:
            for row in (rows_h[s.label], rows_d[s.label]):
                row.status, row.observed = "FAIL", "did not run"
                row.notes.insert(0, s.refused)
        r.add(rows_h[s.label])
        r.add(rows_d[s.label])


def phase_onpath(r, lab, args):
    """client / client6 -- router (dnsmasq, unbound dns64, tayga, squid, nft) -- inet (issue #29)."""
    onet = net.OnpathNet(lab)
    try:
        onet.build()
        lab.enter(onet.client)
        onet.start_daemons()
        log(
            f"  client {net.CLIENT_V4} {net.CLIENT_V6} (resolver dnsmasq {net.LAN_V4}); client6 {net.CLIENT6_V6} only "
            f"(resolver unbound dns64 {net.LAN6_V6}, NAT64 {net.NAT64_PREFIX}/96 by tayga)"
        )
        timing = timing_flags()
        ssh_v4, ssh_v6 = f"{net.BANNER_V4}:{net.BANNER_PORT}", f"[{net.BANNER_V6}]:{net.BANNER_PORT}"
        page = f"http://{net.PAGE_V4}/page"

        def echo_witness(phase):
            want = "64" if phase == "down" else "63"
            v4, v6 = onet.witness("echo", net.WEB_V4), onet.witness("echo", net.WEB_V6)
            ok = v4.endswith(f" {want}") and v6.endswith(f" {want}")
            counters = f"; router forge rules {onet.counters(net.FORGE_TABLE)}" if phase == "down" else ""
            return ok, f"echo {net.WEB_V4}: {v4}, {net.WEB_V6}: {v6} (want {want}){counters}"

        def box_witness(phase):
            ssh, canary = onet.witness("banner", net.BANNER_V4, "22"), onet.witness("banner", net.BANNER_V4, "1")
            ssh6 = onet.witness("banner", net.BANNER_V6, "22")
            if phase == "down":
                ok = ssh == ssh6 == canary == "connected, silent"
            else:
                ok = net.BANNER in ssh and net.BANNER in ssh6 and canary.startswith("no connection")
            counters = f"; router redirect {onet.counters(net.BOX_TABLE)}" if phase == "down" else ""
            return ok, f"tcp {ssh_v4}: {ssh}; {ssh_v6}: {ssh6}; {net.BANNER_V4}:1: {canary}{counters}"

        mark = {}

        def cache_witness(phase):
            plain = onet.curl(page)
            fresh = onet.curl(page, headers=("Cache-Control: no-cache", "Pragma: no-cache"))
            carried = onet.squid_log(mark.get("at", 0))
            mark["at"] = onet.squid_log_mark()
            hits = carried.count("TCP_MEM_HIT/200")
            misses = carried.count("TCP_MISS/200") + carried.count("TCP_REFRESH")
            if phase == "down":
                ok = net.PAGE_BODY[:20] in plain and fresh.startswith("503") and hits > 0
            else:
                ok = net.PAGE_BODY[:20] in plain and net.PAGE_BODY[:20] in fresh and hits > 0
            return ok, (
                f"curl {page}: {plain}; with Cache-Control: no-cache: {fresh}; squid since the last look: "
                f"{hits} TCP_MEM_HIT/200, {misses} misses/refreshes; redirect {onet.counters(net.CACHE_TABLE)}"
            )

        def nat64_witness(phase):
            aaaa = onet.dig(net.LAN6_V6, net.LAB_NAME, "AAAA")
            wka = onet.dig(net.LAN6_V6, "ipv4only.arpa", "AAAA")
            web = onet.curl(f"http://{net.V4ONLY_NAME}/generate_204", ns=onet.client6)
            synthesized = net.nat64(net.WEB_V4) in aaaa and net.nat64("192.0.0.170") in wka
            ok = synthesized and (web == "204" if phase == "healthy" else web.startswith("curl exit"))
            return (
                ok,
                f"client6: AAAA {net.LAB_NAME} {aaaa}; ipv4only.arpa {wka}; http://{net.V4ONLY_NAME}/generate_204 {web}",
            )

        def squid_up():
            onet.start_squid()
            mark["at"] = onet.squid_log_mark()

        tcp_expect = {"expect": r"^SSH-2\.0-"}
        classes = [
            OnpathClass(
                "echo",
                "forged echo",
                onet.client,
                [
                    ProbeSet("default", default_shape_flags(), down_reasons=("forged_reply", "timeout", "unreachable")),
                    ProbeSet(
                        "explicit",
                        [f"--probe.icmp={net.WEB_V4}", f"--probe.icmp={net.WEB_V6}"] + timing,
                        down_reasons=("forged_reply",),
                    ),
                ],
                fault=onet.forge_echo,
                witness=echo_witness,
            ),
            OnpathClass(
                "tcp",
                "TCP middlebox",
                onet.client,
                [
                    ProbeSet("default", default_shape_flags(), down_reasons=("intercepted", "timeout", "unreachable")),
                    ProbeSet(
                        "explicit",
                        [f"--probe.tcp={ssh_v4}", f"--probe.tcp={ssh_v6}"] + timing,
                        down_reasons=("intercepted",),
                    ),
                    ProbeSet(
                        "tcp-expect",
                        config=[
                            {"name": "ssh-v4", "type": "tcp", "target": ssh_v4, "tcp": tcp_expect},
                            {"name": "ssh-v6", "type": "tcp", "target": ssh_v6, "tcp": tcp_expect},
                        ],
                        down_reasons=("banner_mismatch", "intercepted"),
                    ),
                ],
                fault=onet.middlebox,
                witness=box_witness,
            ),
            OnpathClass(
                "cache",
                "caching proxy",
                onet.client,
                [
                    ProbeSet(
                        "default",
                        default_shape_flags(),
                        down_reasons=("cached", "http_status", "timeout", "unreachable"),
                    ),
                    ProbeSet(
                        "explicit",
                        [f"--probe.http={page}", f"--probe.http.expect-body={net.PAGE_BODY}"] + timing,
                        down_reasons=("cached", "http_status", "timeout"),
                    ),
                ],
                setup=squid_up,
                teardown=onet.stop_squid,
                witness=cache_witness,
            ),
            OnpathClass(
                "nat64",
                "DNS64+NAT64",
                onet.client6,
                [
                    ProbeSet("default", default_shape_flags(), down_states=("limited",)),
                    ProbeSet(
                        "explicit",
                        config=[
                            {"name": "aaaa", "type": "dns", "target": net.LAB_NAME, "dns": {"record_type": "AAAA"}},
                            {"name": "v4only-http", "type": "http", "target": f"http://{net.V4ONLY_NAME}/generate_204"},
                        ],
                        down_states=("limited",),
                    ),
                ],
                witness=nat64_witness,
            ),
        ]
        for i, c in enumerate(classes):
            started = time.time()
            run_class(r, lab, onet, c, PORT + 40 + 10 * i)
            log(f"  {c.name}: {time.time() - started:.0f}s")
    finally:
        lab.enter(lab.client)
        onet.close()
