"""The scenario machinery: a Row per scenario, the Runner that applies a fault, waits for the
expected verdicts, times detection and recovery, checks the history files, and prints the table."""

import glob
import json
import os
import time

from ..util import log, log_table, poll


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
        return poll(self.lab.scrape, predicate, timeout)

    def healthy(self, scopes):
        return lambda m: all(m.verdict(s)[0] == "full" for s in scopes)

    def baseline(self, scopes):
        m = self.wait(self.healthy(scopes), 30)
        if m is None:
            m = self.lab.scrape()
            raise RuntimeError(
                "lab never became healthy: " + ", ".join(f"{s}={m.verdict(s)}" for s in scopes) + "\n" + self.tail_log()
            )
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
            if (
                record.get("scope") == scope
                and record.get("to") == state
                and record.get("time", 0) >= after - 0.5
                and (reason is None or record.get("reason", "") == reason)
            ):
                return record
        return None

    # ---- one fault ------------------------------------------------------------------------
    def fault(
        self,
        row,
        apply,
        revert,
        expect,
        scopes=("overall",),
        detect_goal=None,
        window=None,
        recover=True,
        wait_timeout=15.0,
        settle=0.0,
    ):
        """Applies a fault, waits for the expected verdicts, measures detection (the exporter's
        own transition timestamp minus the moment the fault was applied), reverts and measures
        recovery. `expect` maps scope -> (state, reason or None)."""
        self.baseline(scopes)
        time.sleep(settle)
        t0 = time.time()
        apply()
        m = self.wait(
            lambda m: all(
                m.verdict(s)[0] == st and (r is None or m.verdict(s)[1] == r) for s, (st, r) in expect.items()
            ),
            wait_timeout,
        )
        if m is None:
            m = self.lab.scrape()
        row.observed = "; ".join(
            f"{s}={m.verdict(s)[0]}({m.verdict(s)[1]})" if s != "overall" else f"{m.verdict(s)[0]}({m.verdict(s)[1]})"
            for s in expect
        )
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
        moved = [
            r
            for r in self.history_records("transition")
            if r.get("scope") == "overall" and start <= r.get("time", 0) <= end
        ]
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
        log(
            f"  [{row.status}] {row.scenario}: expected {row.expected}, observed {row.observed or '-'}"
            f", detect {row.seconds(row.detect)}, recover {row.seconds(row.recover)}{extra}"
        )
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
        rows = [
            (r.scenario, r.expected, r.observed, r.seconds(r.detect), r.seconds(r.recover), r.history, r.status)
            for r in self.rows
        ]
        log_table(head, rows)
