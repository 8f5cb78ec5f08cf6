"""The filtered phase: a router that filters what the client may send, and a forward proxy on
it (filterednet.py), watched by exporters whose probes name their DNS transport (UDP,
TCP, TLS) and their proxy. Each scenario applies one nft fault on the router and asserts, for
every probe set, the overall verdict and each probe's state or failure reason through the
scraped metrics, then again through `reachability_exporter check --output=json` (its exit
status against the daemon's settled state); kdig and curl from the same namespace witness the
fault independently of the exporter.

Every probe set's verdict follows from the evidence model: DNS over UDP or TCP and plain HTTP
through a proxy are local evidence; a captive check answered 204 from beyond the gateway, and
verified HTTPS through a proxy's CONNECT (the certificate comes from the target through the
tunnel), are internet evidence; a set whose DNS probes all fail while others succeed is
`limited (dns)`; a verdict that is not `full` takes the most common reason among the probes
that could have proved the internet. Every set that should be `full` holds a verified HTTPS
probe that succeeds, so no verdict hangs on how DNS over TLS is counted.
"""

import re
import time

from ..util import log
from . import filterednet as net
from .addresses import PORT
from .filtered_sets import (
    DROP_UDP53,
    DROP_WEB,
    OK,
    PROXY,
    REJECT_UDP53,
    WEB_BY_IP,
    WEB_BY_NAME,
    FilteredExporter,
    probe_sets,
)
from .router_phase import EXIT_STATUS, Sampler
from .runner import Row


# ---- reading a scrape ---------------------------------------------------------------------
def verdict_ok(m, want):
    state, reason = m.verdict()
    return state == want[0] and (want[1] is None or reason == want[1])


def reasons_since(m, m0, name):
    """Failure reasons of probe `name` counted since the scrape `m0` (None: since start)."""
    out = {}
    for labels, v in m.all("reachability_probe_failures_total", target=name):
        before = m0.value("reachability_probe_failures_total", **labels) if m0 else 0
        if v - (before or 0) > 0:
            out[labels["reason"]] = v - (before or 0)
    return out


def probe_problem(m, m0, name, want):
    """Why probe `name` does not show `want` (OK or a reason) in `m` since `m0`; None if it does."""
    success = m.value("reachability_probe_success", target=name)
    if success is None:
        return f"{name}: no series"
    if want == OK:
        if success != 1:
            return f"{name}: failing ({', '.join(reasons_since(m, m0, name)) or '?'})"
        status = m.value("reachability_http_status_code", target=name)
        if status is not None and status != 204:
            return f"{name}: status {status:.0f}"
        return None
    if success != 0:
        return f"{name}: succeeds, want {want}"
    seen = reasons_since(m, m0, name)
    return None if want in seen else f"{name}: {', '.join(seen) or 'no failure counted'}, want {want}"


def problems(m, m0, want, probes):
    out = [] if verdict_ok(m, want) else ["verdict {}({}), want {}({})".format(*m.verdict(), want[0], want[1] or "any")]
    return out + [p for p in (probe_problem(m, m0, n, w) for n, w in probes.items()) if p]


def settled_problems(m1, m2, probes):
    """Between two scrapes at least one round apart: ok probes ran without failing, failing
    probes failed with their reason only."""
    out = []
    for name, want in probes.items():
        ran = (m2.value("reachability_probes_total", target=name) or 0) - (
            m1.value("reachability_probes_total", target=name) or 0
        )
        seen = reasons_since(m2, m1, name)
        if ran < 1:
            out.append(f"{name}: did not run")
        elif want == OK and seen:
            out.append(f"{name}: failed {seen} while it should succeed")
        elif want != OK and set(seen) != {want}:
            out.append(f"{name}: failures {seen or 'none'}, want only {want}")
    return out


def describe(m, m0, probes):
    """`state(reason); probe reason 1.50s, ...; N ok` for a row."""
    state, reason = m.verdict()
    bad, good = [], 0
    for name, _want in probes.items():
        if m.value("reachability_probe_success", target=name) == 1:
            good += 1
            continue
        seen = reasons_since(m, m0, name)
        last = m.value("reachability_probe_last_duration_seconds", target=name)
        why = max(seen, key=seen.get) if seen else "?"
        bad.append(f"{name} {why}" + (f" {last:.2f}s" if last is not None else ""))
    return f"{state}({reason})" if reason else state, bad, good


def phase_problems(m, phases):
    out = []
    for name, wanted in phases.items():
        have = {lab["phase"] for lab, _ in m.all("reachability_probe_phase_duration_seconds", target=name)}
        if not wanted <= have:
            out.append(f"{name}: phases {sorted(have)}, missing {sorted(wanted - have)}")
    return out


def check_problems(code, out, raw, want, probes, daemon_state):
    """`check --output=json` against the expected verdict and probe results."""
    if out is None:
        return [f"check exited {code} without JSON: {raw}"]
    found = []
    state, reason = out.get("state"), out.get("reason")
    if state != want[0] or (want[1] is not None and reason != want[1]):
        found.append(f"check said {state}({reason}), want {want[0]}({want[1] or 'any'})")
    if code != EXIT_STATUS.get(state):
        found.append(f"check exited {code} for {state}")
    if daemon_state != state:
        found.append(f"check said {state}, the daemon {daemon_state}")
    by_name = {p.get("name"): p for p in out.get("probes", [])}
    for name, w in probes.items():
        p = by_name.get(name) or next((q for q in out.get("probes", []) if q.get("target") == name), None)
        if p is None:
            found.append(f"check: no probe {name} (has {sorted(by_name)})")
        elif w == OK and p.get("status") != "success":
            found.append(f"check: {name} {p.get('status')} ({p.get('reason')}: {p.get('detail')})")
        elif w != OK and (p.get("status") != "failure" or p.get("reason") != w):
            found.append(f"check: {name} {p.get('status')} ({p.get('reason')}: {p.get('detail')}), want {w}")
    return found


# ---- a scenario ---------------------------------------------------------------------------
class FilteredScenario:
    """One router fault, watched through several probe sets at once: a row per set. A set
    fails on any problem: a verdict or probe result not as expected (in the metrics, over two
    settled rounds, or in `check`), a missing phase, no recovery, the family invariant broken,
    or the independent witness not seeing the fault."""

    def __init__(self, r, fnet, name, rules, sets, witness=None):
        self.r, self.net, self.name, self.rules, self.sets = r, fnet, name, rules, sets
        self.witness = witness  # (squid log mark) -> (ok, text), run while the fault holds
        self.rows = {s.label: Row(f"filtered: {name} [{s.label}]", self.expected(s)) for s in sets}
        self.active = list(sets)  # the sets that were as expected before the fault
        self.bad = {s.label: [] for s in sets}
        self.info = {s.label: [] for s in sets}  # shown under the row, not failures

    @staticmethod
    def expected(s):
        state, reason = s.during
        failing = [f"{n} {w}" for n, w in s.ok_during.items() if w != OK]
        head = f"{state}({reason})" if reason else state
        head = f"stays {head}" if s.before[0] == state else f"{s.before[0]} -> {head}"
        rest = ["rest ok"] if any(w == OK for w in s.ok_during.values()) else []
        return head + "; " + ", ".join(failing + rest)

    @staticmethod
    def stays(s):
        return s.before[0] == s.during[0]

    def wait_all(self, want, m0, timeout):
        """Polls every set until its scrape shows `want(set)` = (verdict, probes); returns
        label -> (scrape, problems, seconds waited)."""
        started, deadline, done, last = time.time(), time.time() + timeout, {}, {}
        while len(done) < len(self.active):
            for s in self.active:
                if s.label in done:
                    continue
                try:
                    m = last[s.label] = s.exporter.scrape()
                except OSError:
                    continue
                verdict, probes = want(s)
                if not problems(m, m0.get(s.label) if m0 else None, verdict, probes):
                    done[s.label] = (m, [], time.time() - started)
            if time.time() > deadline:
                break
            time.sleep(0.1)
        for s in self.active:
            if s.label not in done:
                m = last.get(s.label)
                verdict, probes = want(s)
                done[s.label] = (
                    m,
                    problems(m, m0.get(s.label) if m0 else None, verdict, probes) if m else ["no scrape"],
                    None,
                )
        return done

    def settle(self, during, rounds=2, limit=12.0):
        """Scrapes taken once every set has run `rounds` more rounds after `during`."""
        deadline, out = time.time() + limit, {}
        while time.time() < deadline and len(out) < len(self.active):
            for s in self.active:
                m = s.exporter.scrape()
                if (
                    m.total("reachability_rounds_total")
                    >= during[s.label][0].total("reachability_rounds_total") + rounds
                ):
                    out.setdefault(s.label, m)
            time.sleep(0.1)
        return {s.label: out.get(s.label) or s.exporter.scrape() for s in self.active}

    def run(self):
        before = self.wait_all(lambda s: (s.before, s.ok_before), None, 30)
        for s in self.sets:  # a set that is wrong on the healthy lab fails alone; the others go on
            m, bad, _ = before[s.label]
            if bad:
                row = self.rows[s.label]
                row.status, row.observed = (
                    "FAIL",
                    "before the fault: " + (describe(m, None, s.ok_before)[0] if m else "no scrape"),
                )
                row.notes = [
                    f"not as expected before the fault: {'; '.join(bad)}",
                    "exporter log tail:\n" + s.exporter.tail(6),
                ]
                self.active.remove(s)
            else:
                self.bad[s.label] += phase_problems(m, s.phases)
        if not self.active:
            return self
        samplers = {s.label: Sampler(s.exporter) for s in self.active}
        for sampler in samplers.values():
            sampler.start()
        m0 = {s.label: s.exporter.scrape() for s in self.active}
        mark, witness = self.net.squid_log_mark(), (True, "")
        try:
            t0 = time.time()
            self.net.filter(self.rules)
            during = self.wait_all(lambda s: (s.during, s.ok_during), m0, 20)
            settled = self.settle(during)
            for s in self.active:
                self.observe(s, m0[s.label], during[s.label], settled[s.label], t0)
            if self.witness:
                witness = self.witness(mark)
        finally:
            t1 = time.time()
            self.net.filter([])
        after = self.wait_all(lambda s: (s.before, s.ok_before), None, 25)
        for s in self.active:
            row, sampler, (m, bad, waited) = self.rows[s.label], samplers[s.label].finish(), after[s.label]
            if bad:
                self.bad[s.label].append("did not recover within 25 s: " + "; ".join(bad))
            elif not self.stays(s):
                row.recover = self.r.since(m) - t1
            elif s.ok_before != s.ok_during:
                row.recover = waited  # the verdict stayed: the probes' return, as polled
            if sampler.violations:
                self.bad[s.label].append(
                    f"overall full while no family was, in {len(sampler.violations)} of {sampler.samples} samples"
                )
            if not witness[0]:
                self.bad[s.label].append("the lab did not show the fault as designed (witness below)")
            shown = witness[1] and (s is self.active[0] or not witness[0])  # once per scenario, unless it failed
            row.notes = self.bad[s.label] + self.info[s.label] + ([witness[1]] if shown else [])
            row.status = "FAIL" if self.bad[s.label] else "PASS"
            if self.bad[s.label]:
                row.notes.append("exporter log tail:\n" + s.exporter.tail(8))
        return self

    def observe(self, s, m0, during, m2, t0):
        """The set's row while the fault holds: verdict and probe results when first met (the
        detection time: the exporter's transition, or when the probes showed the fault if the
        verdict stays), the same over two more rounds with no other reason counted, then `check`."""
        row, bad = self.rows[s.label], self.bad[s.label]
        m, found, waited = during
        if m is None:
            bad.append("no scrape during the fault")
            return
        state, failing, good = describe(m, m0, s.ok_during)
        row.observed = f"{state}; " + ", ".join(failing + [f"{good} ok"])
        if found:
            bad.append("during the fault: " + "; ".join(found))
            return
        if not self.stays(s):
            row.detect = self.r.since(m) - t0
        elif s.ok_before != s.ok_during:
            row.detect = waited
        bad += settled_problems(m, m2, s.ok_during) + problems(m2, m0, s.during, s.ok_during)
        if m2.verdict() != m.verdict():
            row.observed += f"; then {describe(m2, m0, s.ok_during)[0]}"
        moved = m2.transitions() - m0.transitions()
        if self.stays(s) and moved:
            bad.append(f"{moved:.0f} overall transitions while it should stay {s.during[0]}")
        code, js, raw = s.exporter.check_json(s.argv())
        bad += check_problems(code, js, raw, s.during, s.ok_during, m2.verdict()[0])
        for p in (js or {}).get("probes", []):
            if p.get("status") != "success":
                self.info[s.label].append(
                    f"check: {p.get('name')} {p.get('status')} {p.get('reason')}: {p.get('detail')}"
                )
        row.observed += f"; check {code} {js.get('state') if js else '?'}" + (
            f", {moved:.0f} transitions" if self.stays(s) else ""
        )


# ---- the phase ----------------------------------------------------------------------------
def phase_filtered(r, lab, args):
    """client -- router (NAT, nft, squid :3128 open / :3129 basic auth) -- upstream (unbound
    UDP/TCP/TLS, reachability-lab HTTP/HTTPS). Scenarios: UDP/53 dropped, UDP/53 rejected by
    ICMP, direct web dropped (only the proxy carries it), and the same with the authenticating
    proxy; each asserted per probe set through the metrics and `check`."""
    fnet = net.FilteredNet(lab)
    try:
        fnet.build_namespaces()
        lab.enter(fnet.client)
        fnet.start_daemons()
        log(
            f"  client {net.CLIENT_IP} via {net.ROUTER_LAN}; unbound {net.DNS_IP} udp/tcp 53, tls 853; web {net.WEB_IP} "
            f"({net.WEB_NAME}); squid {net.ROUTER_LAN}:{net.PROXY_PORT} open, :{net.AUTH_PROXY_PORT} basic auth"
        )

        def dns_witness(mark):
            udp, tcp, tls = fnet.dig("udp"), fnet.dig("tcp"), fnet.dig("tls")
            ok = not udp[0] and tcp[0] and tls[0] and net.WEB_IP in tcp[1] + tls[1]
            return (
                ok,
                f"kdig during the fault: udp {udp[1]!r}, tcp {tcp[1]!r}, tls {tls[1]!r}; router {fnet.filter_counters()}",
            )

        def web_witness(mark):
            direct = fnet.curl(f"http://{WEB_BY_IP}"), fnet.curl(f"https://{WEB_BY_IP}")
            proxied = fnet.curl(f"http://{WEB_BY_NAME}", PROXY), fnet.curl(f"https://{WEB_BY_NAME}", PROXY)
            carried = fnet.squid_log(mark)
            tunnels = len(
                re.findall(
                    rf"{re.escape(net.CLIENT_IP)} TCP_TUNNEL/200 \d+ CONNECT {re.escape(net.WEB_NAME)}:443", carried
                )
            )
            gets = len(
                re.findall(rf"{re.escape(net.CLIENT_IP)} TCP_MISS/204 \d+ GET http://{re.escape(WEB_BY_NAME)}", carried)
            )
            ok = all(d.startswith("curl exit") for d in direct) and proxied == ("204", "204") and tunnels and gets
            return ok, (
                f"curl during the fault: direct {direct}, via squid {proxied}; squid carried {tunnels} CONNECT "
                f"tunnels and {gets} GETs from the client; router {fnet.filter_counters()}"
            )

        def scenario(name, rules, labels, witness):
            sets = probe_sets(fnet.ca, udp_refused=rules == REJECT_UDP53)
            chosen = [sets[label] for label in labels]
            sc = FilteredScenario(r, fnet, name, rules, chosen, witness)
            try:
                for i, s in enumerate(chosen):
                    s.write(fnet.work)
                    s.exporter = FilteredExporter(
                        lab, fnet.client, f"filtered-{s.label}", s.argv(), PORT + 20 + i, s.env
                    ).start()
                sc.run()
            except Exception as e:  # one broken scenario fails its rows; the others still run
                for row in sc.rows.values():
                    row.status, row.observed = "FAIL", row.observed or "did not run"
                    row.notes.append(f"{name}: {e}")
            finally:
                for s in chosen:
                    if s.exporter:
                        s.exporter.stop()
                    s.exporter = None
            for label in labels:
                r.add(sc.rows[label])

        scenario("udp53 dropped", DROP_UDP53, ["dns", "udp-only", "flags"], dns_witness)
        scenario("udp53 rejected (ICMP port unreachable)", REJECT_UDP53, ["dns", "udp-only"], dns_witness)
        scenario("web only through the proxy", DROP_WEB, ["web", "web-flags", "direct-only"], web_witness)
        scenario("web only through the auth proxy", DROP_WEB, ["auth", "auth-wrong", "proxy-errors"], web_witness)
    finally:
        lab.enter(lab.client)
        fnet.close()
