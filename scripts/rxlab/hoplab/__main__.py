#!/usr/bin/env python3
"""The hop lab's driver (run through `scripts/lab hops`, which checks the tools, finds the binary
and sweeps the namespaces afterwards): the last hop that answers (issue #32), proven with the
built exporter on a chain of routers made of namespaces that exist only for this run:

    site (exporter) ── R1 (gateway) ── R2 ── R3 ── R4 ── inet (ICMP + HTTP 204 targets)

IPv4 and IPv6 on every link (chain.py has the addresses: hop k answers from 198.18.k.1 and
2001:db8:k::1), forwarding on the routers, their ICMP rate limits off. The exporter runs as a
daemon in the site with ICMP and HTTP probes toward 198.19.0.1 and 2001:db8:ff::1 (interval 1 s,
timeout 0.8 s, fail-after 1, recover-after 1) and is scraped over HTTP. Rows:

- healthy, --hold seconds: no `reachability_fault_last_hop` series, and an nft counter on R1 (the
  echo requests arriving from the site with a TTL / hop limit of at most 16) counts zero while
  the exporter's own echoes (TTL 64) are counted beside it;
- `check --trace` on the healthy chain, text and JSON: hops 1-4 answer time exceeded from the
  routers' addresses, the target is reached at hop 5, per family;
- a cut after each router in turn (R1..R4 drop what they would forward toward inet; each still
  answers time exceeded for echoes expiring at it): per family the metric's value (the hop) and check's `last_hop` address
  label, the status page's detail, the history's transition record, `check`'s text and
  `check --output=json`'s `fault.last_hop` all name that router, its distance and "N hops past
  the gateway"; detection is timed from the cut to the scrape showing the right hop; during the
  cut after R2 the trace echoes are counted: one trace of 16 per family at the outage's start,
  none in the rounds after it (R1's counters read with the exporter's rounds_total; a trace
  stands for a minute);
- R2 sends no time exceeded (its ICMP output dropped) and R3 cuts: hop 3 is reported, hop 2
  named silent;
- the repaired chain again: no series, no TTL-limited echo for 3 s.

A closing table (cut, family, hop reported, address, expected, detection time, result); exit 1
when any row fails. About 45 s.
"""

import json
import signal
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from ..netns import enter, lab_arguments
from ..util import connects, log, log_table, wait_until
from .chain import FAMILIES, NODES, ROUTERS, TARGET, Chain, hop_address

DETECT_TIMEOUT = 15.0
RECOVER_TIMEOUT = 15.0
AFTER_HOLD = 3.0  # seconds the repaired chain is watched at the end: the traces stop
COUNT_SECONDS = 5.0  # how long the trace echoes are counted per round during an outage
SCOPES = ("overall",) + FAMILIES


class Row:
    def __init__(self, cut, family, expected):
        self.cut, self.family, self.expected = cut, family, expected
        self.hop, self.address, self.detect, self.status, self.notes = "-", "-", None, "FAIL", []


def distance(hop):
    """The fault detail's distance of hop `hop`: 'the gateway', '1 hop past the gateway', ..."""
    past = hop - 1
    return "the gateway" if past == 0 else f"{past} hop{'' if past == 1 else 's'} past the gateway"


def expected_text(hop, family, silent=()):
    text = f"breaks after hop {hop} ({hop_address(hop, family)}), {distance(hop)}, toward {TARGET[family]}"
    if silent:
        text += f" (hop{'' if len(silent) == 1 else 's'} {', '.join(map(str, silent))} silent)"
    return text


def last_hops(m, scope):
    """[hop] of the scrape's reachability_fault_last_hop series of `scope` (the address is in the detail)."""
    return [int(v) for _, v in m.series("reachability_fault_last_hop", scope=scope)]


class HopLab:
    def __init__(self, chain, args):
        self.c, self.args, self.rows, self.measured = chain, args, [], []

    # ---- helpers --------------------------------------------------------------------------
    def clean(self, m):
        return all(m.verdict(s)[0] == "full" for s in SCOPES) and not m.series("reachability_fault_last_hop")

    def wait_clean(self, timeout):
        return wait_until(lambda: (m := self.c.scrape()) and self.clean(m) and m, timeout, step=0.05)

    def describe(self, m):
        series = ", ".join(f"{lab['scope']}={v:.0f}" for lab, v in m.series("reachability_fault_last_hop"))
        return " ".join(f"{s} {m.verdict(s)[0]}" for s in SCOPES) + f"; last hop series: {series or 'none'}"

    def add(self, row, problems):
        row.notes = problems + row.notes
        row.status = "FAIL" if problems else "PASS"
        self.rows.append(row)
        detect = "" if row.detect is None else f", detected in {row.detect:.2f}s"
        log(f"  [{row.status}] {row.cut} [{row.family}]: hop {row.hop} {row.address}, expected {row.expected}{detect}")
        for note in row.notes:
            log("    " + note.replace("\n", "\n    "))

    # ---- healthy ----------------------------------------------------------------------------
    def healthy(self, hold, label="healthy"):
        """No last-hop series and no TTL-limited echo while every scope is full, for `hold` s."""
        row = Row(f"none ({label}, {hold:.0f} s)", "both", "no last hop; 0 echoes with TTL <= 16")
        problems = []
        if self.wait_clean(30) is None:
            problems.append(f"not full without a last hop within 30 s: {self.describe(self.c.scrape())}")
        else:
            before, samples, seen = self.c.echoes(), 0, []
            end = time.time() + hold
            while time.time() < end:
                m = self.c.scrape()
                samples += 1
                if not self.clean(m):
                    seen.append(self.describe(m))
                time.sleep(0.25)
            after = self.c.echoes()
            delta = {k: after[k] - before[k] for k in after}
            row.hop = "none" if not seen else "seen"
            row.notes.append(
                f"R1 counted from the site in {hold:.0f} s: {delta['trace4']} IPv4 / {delta['trace6']} IPv6 echoes "
                f"with TTL <= 16, {delta['echo4']} / {delta['echo6']} other echo requests (the probes'); "
                f"{samples} scrapes"
            )
            self.measured.append(f"{label} {hold:.0f} s: {delta['trace4']} + {delta['trace6']} TTL-limited echoes")
            if delta["trace4"] or delta["trace6"]:
                problems.append(
                    f"{delta['trace4'] + delta['trace6']} TTL-limited echo requests left the site while it was healthy"
                )
            if not delta["echo4"] or not delta["echo6"]:
                problems.append("R1's counters saw none of the probes' echoes: the counting is broken")
            if seen:
                problems.append(f"not clean in {len(seen)} of {samples} scrapes, first: {seen[0]}")
        self.add(row, problems)

    # ---- check --trace ----------------------------------------------------------------------
    def check_trace(self):
        """`check --trace` on the healthy chain: hops 1-4 the routers, the target at hop 5."""
        before = self.c.echoes()
        code, text, err = self.c.check("--trace")
        jcode, jtext, jerr = self.c.check("--trace", "--output=json")
        after = self.c.echoes()
        sent = {f: after[k] - before[k] for f, k in (("ipv4", "trace4"), ("ipv6", "trace6"))}
        self.measured.append(f"check --trace, 2 runs: {sent['ipv4']} IPv4 + {sent['ipv6']} IPv6 TTL-limited echoes")
        try:
            out = json.loads(jtext)
        except ValueError:
            out = None
        for family in FAMILIES:
            target = TARGET[family]
            row = Row("none: check --trace", family, f"hops 1-4 routers, 5 {target} reached")
            problems = []
            if code != 0 or jcode != 0:
                problems.append(f"check --trace exited {code} (text) / {jcode} (JSON), want 0: {err}{jerr}".strip())
            # Text: the block toward the target, one line per hop up to the reply, then the summary.
            want = [f"{hop}  {hop_address(hop, family)}" for hop in range(1, ROUTERS + 1)]
            want.append(f"{ROUTERS + 1}  {target}  reached")
            lines = text.splitlines()
            start = next((i for i, s in enumerate(lines) if s.startswith(f"trace toward {target} ")), None)
            if start is None:
                problems.append(f"text: no 'trace toward {target}' block in:\n{text}")
            else:
                block = [s.strip() for s in lines[start + 1 : start + 2 + len(want)]]
                if block[: len(want)] != want:
                    problems.append(f"text: hops {block[: len(want)]}, want {want}")
                summary = f"→ reached {target} at hop {ROUTERS + 1}"
                if len(block) <= len(want) or block[len(want)] != summary:
                    problems.append(f"text: summary {block[len(want) :][:1]}, want {summary!r}")
                if f"via wan (gateway {hop_address(1, family)})" not in lines[start]:
                    problems.append(f"text: heading {lines[start]!r} names no route via wan and the gateway")
            # JSON: the trace toward the target, its hops and last_hop.
            trace = next((t for t in (out or {}).get("traces", []) if t.get("destination") == target), None)
            if trace is None:
                problems.append(f"JSON: no trace toward {target}: {jtext[:300]}")
            else:
                got = [(h.get("answer"), h.get("address")) for h in trace.get("hops", [])[: ROUTERS + 1]]
                want_json = [("time_exceeded", hop_address(h, family)) for h in range(1, ROUTERS + 1)]
                want_json.append(("reached", target))
                if got != want_json:
                    problems.append(f"JSON: hops {got}, want {want_json}")
                last = trace.get("last_hop") or {}
                row.hop = f"{last.get('hop')}" + (" (reached)" if last.get("reached") else "")
                row.address = last.get("address")
                if not (
                    last.get("hop") == ROUTERS + 1 and last.get("reached") is True and last.get("address") == target
                ):
                    problems.append(f"JSON: last_hop {last}, want hop {ROUTERS + 1} reached at {target}")
                if trace.get("interface") != "wan" or trace.get("gateway") != hop_address(1, family):
                    problems.append(f"JSON: interface {trace.get('interface')}, gateway {trace.get('gateway')}")
                row.notes.append(f"summary: {trace.get('summary')}")
            # Both runs traced once per family: 16 echoes each, counted on R1.
            if not 0 < sent[family] <= 2 * 16:
                problems.append(f"R1 counted {sent[family]} TTL-limited echoes for the two runs, want 1..32")
            self.add(row, problems)

    # ---- a cut ------------------------------------------------------------------------------
    def count_per_round(self, seconds=COUNT_SECONDS):
        """The trace echoes of each family per round: R1's counters and the exporter's
        reachability_rounds_total, read together every 0.05 s for `seconds`; each echo counted is
        put to the round number read with it. Returns {family: [echoes in each round seen]} (the
        first and last rounds of the window may be cut short, never longer than a whole one)."""
        samples, end = [], time.time() + seconds
        while time.time() < end:
            rounds = self.c.scrape().value("reachability_rounds_total")
            samples.append((rounds, self.c.echoes()))
            time.sleep(0.05)
        out = {}
        for family, key in (("ipv4", "trace4"), ("ipv6", "trace6")):
            per_round = {}
            for (_, a), (n, b) in zip(samples, samples[1:], strict=False):
                per_round[n] = per_round.get(n, 0) + b[key] - a[key]
            out[family] = [per_round[n] for n in sorted(per_round)]
        return out

    def cut(self, hop, silent=(), count=False):
        """Router `hop` cuts (and the routers in `silent` send no time exceeded): every family
        must report hop `hop` at its address, with the distance and the silent hops, in the
        metric, the status page, the history and `check --output=json`."""
        name = f"{NODES[hop].upper()}→{NODES[hop + 1].upper() if hop < ROUTERS else 'inet'}"
        if silent:
            name += ", " + ", ".join(f"{NODES[s].upper()} silent" for s in silent)
        rows = {f: Row(name, f, f"{hop} {hop_address(hop, f)}") for f in FAMILIES}
        problems = {f: [] for f in FAMILIES}
        applied = False
        try:
            if self.wait_clean(30) is None:
                raise RuntimeError(f"not full without a last hop before the cut: {self.describe(self.c.scrape())}")
            for s in silent:
                self.c.silence(s)
            before = self.c.echoes()
            t0 = time.time()
            self.c.cut(hop)
            applied = True
            self.judge_last_hop(hop, t0, rows, problems)
            if count:
                self.judge_trace_echoes(name, before, rows, problems)
            self.details(hop, silent, t0, rows, problems)
        except Exception as e:  # a broken scenario fails its rows; the others still run
            for f in FAMILIES:
                problems[f].append(f"{type(e).__name__}: {e}")
        finally:
            t1 = time.time()
            self.c.heal()
        if applied:
            self.judge_repair(t1, rows, problems)
        for f in FAMILIES:
            if problems[f]:
                rows[f].notes.append("exporter log tail:\n" + self.c.tail(8))
            self.add(rows[f], problems[f])

    def judge_last_hop(self, hop, t0, rows, problems):
        """The metric: every family's last hop is `hop` within DETECT_TIMEOUT of the cut (at `t0`),
        never another one, and the overall scope's is one of theirs."""
        want = {f: hop for f in FAMILIES}
        met, wrong, m = {}, {f: set() for f in FAMILIES}, None
        while len(met) < len(FAMILIES) and time.time() < t0 + DETECT_TIMEOUT:
            m = self.c.scrape()
            now = time.time()
            for f in FAMILIES:
                got = last_hops(m, f)
                if f not in met and got == [want[f]]:
                    met[f] = now - t0
                elif got and got != [want[f]]:
                    wrong[f].update(got)
            time.sleep(0.05)
        m = self.c.scrape()
        for f in FAMILIES:
            row, got = rows[f], last_hops(m, f)
            # The metric has the hop; the address comes from check's last_hop (details()).
            row.hop = str(got[0]) if len(got) == 1 else ("-" if not got else "many")
            row.detect = met.get(f)
            if f not in met:
                problems[f].append(f"no last hop {want[f]} within {DETECT_TIMEOUT:.0f} s: {self.describe(m)}")
            if wrong[f]:
                problems[f].append(f"the metric also showed {sorted(wrong[f])}")
        overall = last_hops(m, "overall")
        if len(overall) != 1 or overall[0] not in want.values():
            for f in FAMILIES:
                problems[f].append(f"scope overall's last hop {overall}, want one of {list(want.values())}")

    def judge_trace_echoes(self, name, before, rows, problems):
        """One trace at the outage's start (16 echoes), then none within the minute it stands
        (counted per round; `before`: the echo counters before the cut)."""
        counted = self.count_per_round()
        for f in FAMILIES:
            per_round = counted[f]
            text = f"{'IPv4' if f == 'ipv4' else 'IPv6'} {'/'.join(map(str, per_round))} in {len(per_round)} rounds"
            rows[f].notes.append(f"trace echoes per round, {COUNT_SECONDS:.0f} s into the outage: {text}")
            self.measured.append(f"cut {name}: trace echoes per round {text} ({COUNT_SECONDS:.0f} s)")
            key = "trace4" if f == "ipv4" else "trace6"
            total = self.c.echoes()[key] - before[key]
            rows[f].notes.append(f"trace echoes since the cut: {total}")
            if len(per_round) < 2 or any(per_round) or total != 16:
                problems[f].append(f"want one trace of 16 echoes, then none within the minute: {text}, {total} in all")

    def judge_repair(self, t1, rows, problems):
        """After the repair (at `t1`): full without a last hop again within RECOVER_TIMEOUT."""
        back = self.wait_clean(RECOVER_TIMEOUT)
        for f in FAMILIES:
            if back is None:
                problems[f].append(
                    f"still not full without a last hop {RECOVER_TIMEOUT:.0f} s after the repair: "
                    + self.describe(self.c.scrape())
                )
            else:
                rows[f].notes.append(f"repaired: full, last hop series gone in {time.time() - t1:.2f}s")

    def details(self, hop, silent, t0, rows, problems):
        """The fault detail of the daemon (status page, history) and of `check --output=json`."""
        page = self.c.status_faults()
        records = [r for r in self.c.records("transition", t0) if r.get("to") == "limited"]
        # `check` as text and as JSON at once (each a round of its own, ~1.7 s while cut).
        with ThreadPoolExecutor(2) as pool:
            as_text = pool.submit(self.c.check)
            code, out, err = self.c.check("--output=json")
            text_code, text_out, text_err = as_text.result()
        try:
            checked = json.loads(out)
        except ValueError:
            checked = None
        for f in FAMILIES:
            text = expected_text(hop, f, silent)
            rows[f].notes.append(f"detail: {page[f] or '(none)'}")
            if text not in page[f]:
                problems[f].append(f"status page's {f} card says {page[f]!r}, want it to contain {text!r}")
            record = next((r for r in records if r.get("scope") == f), None)
            if record is None or text not in str(record.get("fault")):
                problems[f].append(
                    f"history transition of {f} to limited: {record}, want its fault to contain {text!r}"
                )
            else:
                rows[f].notes.append(f"history: {f} limited at +{record['time'] - t0:.2f}s with that detail")
            if text_code != 2 or text not in text_out:
                problems[f].append(f"check exited {text_code}, want 2 and {text!r} in:\n{text_out}{text_err}")
            if checked is None:
                problems[f].append(f"check --output=json exited {code} without JSON: {out[:200]}{err[:200]}")
                continue
            fault = ((checked.get("families") or {}).get(f) or {}).get("fault") or {}
            last = fault.get("last_hop") or {}
            want = {
                "hop": hop,
                "address": hop_address(hop, f),
                "destination": TARGET[f],
                "reached": False,
                "past_gateway": hop - 1,
                "silent_hops": list(silent),
            }
            if code != 2 or fault.get("location") != "upstream" or text not in str(fault.get("detail")):
                problems[f].append(
                    f"check exited {code}, fault {fault.get('location')}: {fault.get('detail')!r}, want 2, upstream, {text!r}"
                )
            rows[f].address = last.get("address") or "-"
            if {k: last.get(k) for k in want} != want:
                problems[f].append(f"check's last_hop {last}, want {want}")


def main():
    ap = lab_arguments(
        "scripts/lab hops", __doc__, "--prefix and --exporter-bin are given by scripts/lab (RX_BIN_DIR).", "rxhops-PID"
    )
    ap.add_argument("--hold", type=float, default=10.0, help="seconds the healthy chain is watched (default 10)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory (exporter log, history)")
    args = ap.parse_args()
    started = time.time()
    chain = Chain(args.prefix, args.exporter_bin, keep=args.keep)
    lab = HopLab(chain, args)
    current = "setup"
    try:
        chain.build()
        chain.start_web()
        enter(chain.ns("site"))  # the exporter listens on the site's 127.0.0.1
        # Neighbours resolved along the chain both ways before the exporter's first round.
        if not wait_until(lambda: all(connects(TARGET[f], 80) for f in FAMILIES), 10):
            raise RuntimeError("the site does not reach the web target over both families")
        chain.start_exporter()
        log(f"hop lab: namespaces {args.prefix}-*, exporter {args.exporter_bin}")
        current = "healthy"
        lab.healthy(args.hold)
        current = "check --trace"
        lab.check_trace()
        for hop in range(1, ROUTERS + 1):
            current = f"cut after hop {hop}"
            lab.cut(hop, count=hop == 2)
        current = "a silent router"
        lab.cut(3, silent=(2,))
        current = "healthy again"
        lab.healthy(AFTER_HOLD, "healthy again after the cuts")
    except Exception as e:  # a lab that cannot run fails, with the reason
        row = Row(f"{current} (aborted)", "-", "runs to the end")
        lab.add(row, [f"{type(e).__name__}: {e}", "exporter log tail:\n" + chain.tail(12)])
    except KeyboardInterrupt:
        log("hop lab interrupted")
        lab.rows.append(Row(f"{current} (interrupted)", "-", "runs to the end"))
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the cleanup short
        chain.close()
    log("")
    log_table(
        ("cut", "family", "hop reported", "address", "expected", "detected", "result"),
        [
            (r.cut, r.family, r.hop, r.address, r.expected, "-" if r.detect is None else f"{r.detect:.2f}s", r.status)
            for r in lab.rows
        ],
    )
    for line in lab.measured:
        log(f"measured: {line}")
    failed = sum(1 for r in lab.rows if r.status != "PASS")
    log(f"hop lab: {len(lab.rows) - failed} passed, {failed} failed in {time.time() - started:.0f}s")
    return 1 if failed or not lab.rows else 0


if __name__ == "__main__":
    sys.exit(main())
