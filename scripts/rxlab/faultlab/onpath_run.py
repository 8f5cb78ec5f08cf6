"""How the onpath phase (onpath_phase.py) runs a class of imitation: its probe sets (flags or a
configuration file, each one exporter), healthy, then with the uplink cut and the class's
fault, then back; a row per set for each, from the daemon's verdict, `check --output=json` and
the witness."""

import os
import subprocess
import threading
import time

from ..util import log
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


def observe(c, live, rows, waited, key, what):
    """After a wait (`waited`: label -> (scrape, met)): the class's witness for `key` (what it saw
    logged as WHAT) and each live set's check, its row's `observed` filled in; (witness ok, what
    it saw, the checks)."""
    seen_ok, seen = c.witness(key) if c.witness else (True, "")
    if seen:
        log(f"  {c.name}, {what}: {seen}")
    done = checks(live)
    for s in live:
        m, (code, state, reason, _daemon, _problem) = waited[s.label][0], done[s.label]
        daemon = describe(m.verdict()) if m else "no scrape"
        rows[s.label].observed = f"daemon {daemon}; check {describe((state, reason))} exit {code}"
    return seen_ok, seen, done


class ClassRun:
    """One class's run: its rows (healthy and uplink down, per set) and whether its fault (the
    uplink cut) is in place, for the cleanup."""

    def __init__(self, lab, onet, c):
        self.lab, self.onet, self.c = lab, onet, c
        self.rows_h = {s.label: Row(f"onpath: {c.name}, healthy [{s.label}]", "full") for s in c.sets}
        self.rows_d = {s.label: Row(f"onpath: {c.name}, uplink down [{s.label}]", s.expected_down()) for s in c.sets}
        self.faulted = False


def run_class(r, lab, onet, c, port):
    """Healthy, then the uplink cut with the class's fault: a row per set for each."""
    run = ClassRun(lab, onet, c)
    try:
        if c.setup:
            c.setup()
        lab.enter(c.ns)
        live = start_sets(run, port)
        healthy = check_healthy(run, live)
        check_down(run, live)
        check_recovered(run, live, healthy)
    except Exception as e:  # a class that cannot run fails its rows; the next class still runs
        for row in list(run.rows_h.values()) + list(run.rows_d.values()):
            if row.status != "PASS" or not row.observed:
                row.status, row.observed = "FAIL", row.observed or "did not run"
                row.notes.append(f"{c.name}: {str(e)[:400]}")
    finally:
        undo(run)
    for s in c.sets:
        if s.refused:
            for row in (run.rows_h[s.label], run.rows_d[s.label]):
                row.status, row.observed = "FAIL", "did not run"
                row.notes.insert(0, s.refused)
        r.add(run.rows_h[s.label])
        r.add(run.rows_d[s.label])


def start_sets(run, port):
    """An exporter per set (a configuration the binary refuses, or an exporter that does not
    start, marks the set refused): the sets that run."""
    lab, c = run.lab, run.c
    for i, s in enumerate(c.sets):
        s.write(run.onet.work, c.key)
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
    return [s for s in c.sets if s.exporter]


def check_healthy(run, live):
    """Every set full, `check` and the witness agreeing: the healthy rows. The waits'
    outcome (label -> (scrape, met))."""
    healthy = wait_sets(live, lambda s, m: m.verdict()[0] == "full", HEALTHY_WAIT)
    seen_ok, seen, done = observe(run.c, live, run.rows_h, healthy, "healthy", "healthy")
    for s in live:
        row, (m, met), (_code, state, reason, _daemon, problem) = run.rows_h[s.label], healthy[s.label], done[s.label]
        bad = [] if met else [f"not full within {HEALTHY_WAIT:.0f} s: {describe(m.verdict()) if m else 'no scrape'}"]
        bad += [problem] if problem else []
        bad += [] if state == "full" else [f"check said {describe((state, reason))}"]
        bad += [] if seen_ok else ["the lab did not show the healthy path as designed: " + seen]
        row.notes = bad + ([] if not bad else ["exporter log tail:\n" + s.exporter.tail(6)])
        row.status = "FAIL" if bad else "PASS"
    return healthy


def check_down(run, live):
    """The uplink cut, with the class's imitation: each set detects it as expected and never
    shows full again while it holds; the uplink-down rows."""
    c = run.c
    before = {s.label: scrape(s) for s in live}
    t0 = time.time()
    run.faulted = True
    run.onet.uplink(False)
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
    seen_ok, seen, done = observe(c, live, run.rows_d, down, "down", "uplink down")
    for s in live:
        judge_down(s, run.rows_d[s.label], down[s.label], done[s.label], t0, full_seen, before, (seen_ok, seen))


def judge_down(s, row, waited, done, t0, full_seen, before, witness):
    """One set's uplink-down row from its wait (scrape, met), its check, when it showed full
    again (`full_seen`), its scrape before the cut and the witness (ok, what it saw)."""
    (m, met), (_code, state, reason, _daemon, problem), (seen_ok, seen) = waited, done, witness
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


def check_recovered(run, live, healthy):
    """The fault undone: each set full again (recovery times on the uplink-down rows; a set
    that was full before the cut and is not again fails its row)."""
    c, rows_d = run.c, run.rows_d
    t1 = time.time()
    run.faulted = False
    if c.fault:
        c.fault(False)
    run.onet.uplink(True)
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


def undo(run):
    """Whatever happened: the fault undone if it is still in place, the exporters stopped, the
    class torn down, this thread back in the client namespace."""
    c, onet = run.c, run.onet
    if run.faulted:
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
    run.lab.enter(onet.client)
