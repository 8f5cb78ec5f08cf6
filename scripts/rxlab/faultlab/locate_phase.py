"""The locate phase: fault localization and path-MTU measurement (issue #15) on the router
phase's home network (homerouter.py): home (the exporter, DHCP lease and resolver from
dnsmasq) -- router (dnsmasq, NAT) -- inet (reachability-lab).

One exporter watches the home with a plain-HTTP captive check, ICMP to both lab addresses, the
lab name through the system resolver (the router's dnsmasq) and a path-MTU probe per family.
Each fault sits at one place on the path, and the exporter must name that place in three
outputs that agree: `reachability_fault_info{scope="overall"}` on /metrics, the `fault` object
of `reachability_exporter check --output=json`, and the `location` (with a non-empty `fault`
detail) of the overall transition in its history (--history.dir):

- healthy: no location (no series, or location="none"), and a path MTU of 1500 to both targets;
- the gateway vanishes (HomeRouter.gateway_vanish: the home's link, address and routes stay,
  nothing answers ARP or neighbour solicitation for 198.18.1.1 / 2001:db8:14::1): `gateway`,
  with the gateway's address in the detail;
- the router's uplink dies (its WAN link down; the gateway itself answers): `upstream`;
- only DNS dies (the router drops port 53 from the LAN; IP traffic flows): `dns`, reason `dns`;
- a path-MTU black hole (WAN MTU 1400, the router's "fragmentation needed" and ICMPv6 packet
  too big dropped; small packets and TCP pass): reason `mtu`, `upstream`, and a measured path
  MTU within 20 bytes below 1400 for each family.

After each fault the lab is reverted and the exporter must be `full`, without a location again
(the recovery time). Detection is timed to the history record that first names the expected
location (the state's own timestamp without it).
"""

import os
import time

from ..util import log
from . import homerouter
from .addresses import LAB_NAME, PORT, V4_NET, V6_NET
from .faults import timing_flags
from .lab import Exporter
from .router_phase import EXIT_STATUS
from .runner import Row, Runner

SCOPES = ("overall", "ipv4", "ipv6")
HEALTHY_MTU = 1500
HEALTHY_HOLD = 5.0  # seconds of healthy rounds (1 s interval) in which the gateway must not be pinged
BLACK_HOLE_MTU = 1400
MTU_SLACK = 20  # the measured MTU may undershoot the link's by this much (a search's last step)
NO_FAULT = (None, "none")
PROBE_FLAGS = ("--probe.http", "--probe.icmp", "--probe.dns", "--probe.mtu")
# The exporter's echo to the gateway fails in the first round of the fault, but the home keeps
# its neighbour entry REACHABLE for 15-45 s after the last confirmation, then STALE, DELAY 5 s
# and PROBE 3 s: the kernel itself says FAILED only after up to ~53 s (measured 31 s for IPv6,
# 40 s for IPv4; homerouter.HomeRouter.gateway_vanish). The gateway scenario waits that long, so
# a locator that needs the neighbour unresolved shows up as a slow detection, not a timeout.
GATEWAY_WAIT = 65.0


def locate_flags():
    return [
        f"--probe.http=http://{V4_NET}/generate_204",
        f"--probe.icmp={V4_NET}",
        f"--probe.icmp={V6_NET}",
        f"--probe.dns={LAB_NAME}",
        f"--probe.mtu={V4_NET}",
        f"--probe.mtu={V6_NET}",
    ] + timing_flags()


def home_router(lab):
    """The router phase's HomeRouter when it ran in this lab, else one built the same way
    (registered as lab.router, so Lab.close() closes it and removes its namespaces). Every
    fault of ours is switched off first: the phase starts from the healthy home network."""
    router = lab.router
    if router is None:
        router = homerouter.HomeRouter(lab)
        lab.router = router
        router.build()
    router.home_ipv6(True)
    router.gateway_vanish(False)
    router.dns_down(False)
    router.wan_mtu(None)
    router.uplink(True)
    return router


def fault_of(check_out):
    """The `fault` object of check's JSON as (location, detail); (None, "") for null or absent."""
    fault = (check_out or {}).get("fault")
    if not isinstance(fault, dict):
        return None, ""
    return fault.get("location"), str(fault.get("detail") or "")


class Locate:
    """The phase's one exporter and the scenario machinery around it (the Runner's waits,
    timing and history reading, pointed at this exporter)."""

    def __init__(self, r, lab, router, exporter, flags):
        self.r, self.lab, self.router, self.ex, self.flags = r, lab, router, exporter, flags

    def describe(self, m):
        state, reason = m.verdict()
        families = ", ".join(f"{s} {m.verdict(s)[0]}" for s in SCOPES[1:])
        mtu = "/".join(f"{m.mtu(t):.0f}" if m.mtu(t) is not None else "-" for t in (V4_NET, V6_NET))
        return f"{f'{state}({reason})' if reason else state} ({families}), location {m.fault() or '-'}, mtu {mtu}"

    @staticmethod
    def mtu_problems(m, low, high):
        """What is wrong with the measured path MTUs, for both targets: [] when both are in
        [low, high]."""
        out = []
        for target in (V4_NET, V6_NET):
            value = m.mtu(target)
            if value is None:
                out.append(f'no reachability_path_mtu_bytes{{target="mtu:{target}"}}')
            elif not low <= value <= high:
                out.append(f"path MTU to {target} is {value:.0f}, want {low}..{high}")
        return out

    def clean(self, m):
        """Full everywhere, and no location on any scope."""
        return all(m.verdict(s)[0] == "full" for s in SCOPES) and all(m.fault(s) in NO_FAULT for s in SCOPES)

    def check(self, row, daemon_state, location, detail_has=()):
        """`check --output=json` against the settled daemon: exit status, fault location, and
        (for the gateway) an address in the detail. Returns the problems found."""
        code, out, raw = self.ex.check_json(self.flags)
        if out is None:
            return [f"check --output=json printed no JSON (exit {code}): {raw}"]
        got, detail = fault_of(out)
        problems = []
        row.observed += f", check {code} {out.get('state')} location {got or '-'}"
        if code != EXIT_STATUS.get(daemon_state):
            problems.append(
                f"check exited {code} ({out.get('state')} {out.get('reason')}) while the daemon said {daemon_state}"
            )
        if location in NO_FAULT:
            if got not in NO_FAULT:
                problems.append(f"check's fault is {out.get('fault')!r}, want null or location none")
        elif got != location:
            problems.append(f"check's fault location is {got!r} ({detail!r}), want {location!r}")
        elif not detail:
            problems.append("check's fault detail is empty")
        elif detail_has and not any(a in detail for a in detail_has):
            problems.append(f"check's fault detail {detail!r} names none of {', '.join(detail_has)}")
        for key in ("families", "uplinks"):
            entries = out.get(key)
            entries = entries.values() if isinstance(entries, dict) else entries or []
            if any(not isinstance(e, dict) or "fault" not in e for e in entries):
                problems.append(f'an entry of check\'s "{key}" has no "fault" key')
        return problems

    def history(self, state, reason, location, after):
        """The overall transition to `state` (and `reason`) naming `location`, recorded after
        `after` (waits up to 5 s for the file): (record or None, what was found instead)."""
        deadline, seen = time.time() + 5, []
        while True:
            seen = [
                t
                for t in self.r.history_records("transition")
                if t.get("scope") == "overall" and t.get("time", 0) >= after - 0.5
            ]
            for t in seen:
                if (
                    t.get("to") == state
                    and (reason is None or t.get("reason", "") == reason)
                    and t.get("location") == location
                ):
                    return t, seen
            if time.time() > deadline:
                return None, seen
            time.sleep(0.2)

    def healthy(self):
        """Scenario: the healthy home network. Proves the baseline the faults are judged
        against: full in every scope, no fault location anywhere (metrics and check), and the
        path MTU probe measuring the lab's 1500-byte links for both families."""
        row = Row(
            "locate: healthy", f"full (ipv4 full, ipv6 full), location none, path MTU {HEALTHY_MTU}/{HEALTHY_MTU}"
        )
        try:
            m = self.r.wait(lambda m: self.clean(m) and not self.mtu_problems(m, HEALTHY_MTU, HEALTHY_MTU), 30)
            ok = m is not None
            m = m or self.lab.scrape()
            row.observed = self.describe(m)
            problems = (
                []
                if ok
                else [f"not clean within 30 s: {self.describe(m)}"] + self.mtu_problems(m, HEALTHY_MTU, HEALTHY_MTU)
            )
            problems += [f"{s}: location {m.fault(s)}" for s in SCOPES if m.fault(s) not in NO_FAULT]
            # No extra traffic on a healthy host: the gateway is not pinged while every scope is full.
            before = self.router.gateway_echoes()
            time.sleep(HEALTHY_HOLD)
            echoes = self.router.gateway_echoes() - before
            row.notes.append(f"gateway echo requests in {HEALTHY_HOLD:.0f} s of healthy rounds: {echoes}")
            if echoes:
                problems.append(f"{echoes} echo requests to the gateway while healthy")
            problems += self.check(row, m.verdict()[0], "none")
        except Exception as e:  # a broken scenario fails its row; the others still run
            problems = [f"healthy: {e}"]
        self.finish(row, problems)

    def fault(
        self,
        name,
        expected,
        apply,
        revert,
        state,
        reason,
        location,
        detail_has=(),
        mtu=None,
        wait_timeout=15.0,
        recover_timeout=20.0,
        on_met=None,
    ):
        """One fault: applied, waited for until the metrics show `state` (`reason`) with
        `location` on the overall scope (and, with `mtu` = (low, high), both path MTUs in that
        range), checked through `check --output=json` and the history, reverted, and waited
        for until the exporter is full without a location again."""
        row = Row(f"locate: {name}", expected)
        problems, applied = [], False

        def meets(m):
            return (
                m.verdict()[0] == state
                and (reason is None or m.verdict()[1] == reason)
                and m.fault() == location
                and not (mtu and self.mtu_problems(m, *mtu))
            )

        try:
            if self.r.wait(self.clean, 30) is None:
                raise RuntimeError(f"not full without a location before the fault: {self.describe(self.lab.scrape())}")
            t0 = time.time()
            apply()
            applied = True
            m = self.r.wait(meets, wait_timeout)
            met = m is not None
            if on_met:  # before `check`, whose own round would send its own traffic
                on_met()
            m = m or self.lab.scrape()
            row.observed = self.describe(m)
            if not met:
                problems.append(f"not {state}({reason or '*'}) at {location} within {wait_timeout:.0f} s")
                if mtu:
                    problems += self.mtu_problems(m, *mtu)
            problems += self.check(row, m.verdict()[0], location, detail_has)
            record = self.judge_history(row, problems, state, reason, location, t0, detail_has)
            if met:
                since = Runner.since(m)
                row.detect = (record["time"] if record else since) - t0
                if record and since is not None and record["time"] - since > 0.05:
                    row.notes.append(f"the location followed the state by {record['time'] - since:.2f}s")
        except Exception as e:  # a broken scenario fails its row; the others still run
            problems.append(f"{name}: {e}")
        finally:
            t1 = time.time()
            if applied:
                try:
                    revert()
                except Exception as e:
                    problems.append(f"could not revert: {e}")
        if applied:
            self.judge_recovery(row, problems, t1, recover_timeout, mtu)
        self.finish(row, problems)

    def judge_history(self, row, problems, state, reason, location, t0, detail_has):
        """The history's transition for the fault (overall -> `state` at `location`, since `t0`)
        with a fault detail naming one of `detail_has`: row.history set, `problems` added to;
        the record, or None."""
        record, seen = self.history(state, reason, location, t0)
        if record is None:
            row.history = "missing"
            found = "; ".join(
                f"{t.get('to')}" + (f"({t['reason']})" if t.get("reason") else "") + f" at {t.get('location') or '-'}"
                for t in seen
            )
            problems.append(
                f"no history transition overall -> {state}({reason or '*'}) at {location}; "
                f"recorded since the fault: {found or 'none'}"
            )
        elif not isinstance(record.get("fault"), str) or not record["fault"].strip():
            row.history = "no detail"
            problems.append(f"history transition without a fault detail: {record}")
        else:
            row.history = "ok"
            row.notes.append(
                f"history: {record.get('to')}({record.get('reason') or '-'}) "
                f"at {record.get('location')}: {record['fault']}"
            )
            if detail_has and not any(a in record["fault"] for a in detail_has):
                row.history = "detail"
                problems.append(f"history fault detail {record['fault']!r} names none of {', '.join(detail_has)}")
        return record

    def judge_recovery(self, row, problems, t1, recover_timeout, mtu):
        """After the revert (at `t1`): full without a location again within `recover_timeout`
        seconds, its recovery time on the row."""
        back = self.r.wait(self.clean, recover_timeout)
        if back is None:
            problems.append(
                f"not full without a location within {recover_timeout:.0f} s of the revert: "
                + self.describe(self.lab.scrape())
            )
        elif row.detect is not None:  # a recovery from a fault that was seen
            row.recover = Runner.since(back) - t1
            if mtu:
                row.notes.append(f"after the revert: {self.describe(back)}")

    def finish(self, row, problems):
        row.notes = problems + row.notes
        row.status = "FAIL" if problems else "PASS"
        if problems:
            row.notes.append("exporter log tail:\n" + self.ex.tail(12))
        self.r.add(row)


def phase_locate(r, lab, args):
    """home -- router -- inet with one exporter whose probes include path MTU: every fault must
    be located (gateway, upstream, dns) and the black hole measured, in the metrics, `check`
    and the history."""
    router = home_router(lab)
    lab.enter(router.home)
    try:
        lab.stop_exporter()
        lab.history_dir = os.path.join(lab.work, "history-locate")
        os.makedirs(lab.history_dir, exist_ok=True)
        flags = locate_flags()
        ex = Exporter(lab, router.home, "locate", flags + [f"--history.dir={lab.history_dir}"], PORT + 2).start()
        lab.exporter, lab.exporter_log = ex, ex.log  # the Runner's waits and log tails read this one
        gateways = (homerouter.LAN_V4, homerouter.LAN_V6)
        log(
            f"  home {router.client_ip} by DHCP, gateway {gateways[0]} / {gateways[1]}, resolver dnsmasq; "
            f"probes {' '.join(f for f in flags if f.split('=')[0] in PROBE_FLAGS)}"
        )
        router.count_gateway_echoes()
        s = Locate(r, lab, router, ex, flags)
        s.healthy()

        # (a) The home's link is untouched; only its neighbour entries for the gateway fail,
        # on the kernel's schedule (up to ~53 s from a confirmed entry: GATEWAY_WAIT).
        s.fault(
            "gateway vanishes (no ARP/ND answer, link up)",
            "limited, location gateway (detail names it)",
            lambda: router.gateway_vanish(True),
            lambda: router.gateway_vanish(False),
            "limited",
            None,
            "gateway",
            detail_has=gateways,
            wait_timeout=GATEWAY_WAIT,
            recover_timeout=30.0,
        )
        uplink_down(r, s, router)  # (b)
        # (c) dnsmasq never sees a query; HTTP, ICMP and the MTU probe (IP addresses) all pass.
        s.fault(
            "only DNS dies (router drops :53)",
            "limited (dns), location dns",
            lambda: router.dns_down(True),
            lambda: router.dns_down(False),
            "limited",
            "dns",
            "dns",
        )
        # (d) Every probe passes but the path MTU one: DF packets above 1400 vanish silently.
        s.fault(
            f"path-MTU black hole (WAN MTU {BLACK_HOLE_MTU}, PTB filtered)",
            f"limited (mtu), location upstream, path MTU {BLACK_HOLE_MTU - MTU_SLACK}-{BLACK_HOLE_MTU} v4/v6",
            lambda: router.wan_mtu(BLACK_HOLE_MTU),
            lambda: router.wan_mtu(None),
            "limited",
            "mtu",
            "upstream",
            mtu=(BLACK_HOLE_MTU - MTU_SLACK, BLACK_HOLE_MTU),
            wait_timeout=30.0,
            recover_timeout=60.0,
        )
        lab.stop_exporter()
    finally:
        lab.enter(lab.client)


def uplink_down(r, s, router):
    """Scenario (b), the router's uplink down: the gateway answers (ARP, ND, ICMP "net
    unreachable" from 198.18.1.1); beyond it nothing: dnsmasq still answers the name from its
    cache. The daemon's echo requests to the gateway are counted until the outage was located."""
    counted = {"before": router.gateway_echoes()}
    s.fault(
        "router uplink down",
        "limited, location upstream",
        lambda: router.uplink(False),
        lambda: router.uplink(True),
        "limited",
        None,
        "upstream",
        detail_has=("answers",),
        on_met=lambda: counted.update(met=router.gateway_echoes()),
    )
    # The counter that read 0 while healthy does see the daemon's checks (read before the
    # scenario's `check` run), so that 0 means something.
    daemon = counted.get("met", counted["before"]) - counted["before"]
    log(f"  gateway echo requests by the daemon until the outage was located: {daemon}")
    if not daemon:
        row = r.rows[-1]
        row.status = "FAIL"
        row.notes.insert(0, "no gateway echo request counted while limited: the counter or the check is broken")
