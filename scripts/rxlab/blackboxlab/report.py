"""The blackbox side-by-side lab's output: PASS/FAIL lines and tables on stdout, and the same as
Markdown in .build/artifacts/blackbox-side-by-side.md."""

import os

from ..util import ROOT, log, log_table
from .compare import AGREED, ENDPOINT_EXPECTED, EXPECTED
from .phases import sample_lines
from .refusals import summary

ARTIFACT = os.path.join(ROOT, ".build", "artifacts", "blackbox-side-by-side.md")


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


class Report:
    def __init__(self):
        self.passed = self.failed = 0
        self.md = []

    def check(self, ok, what, detail=""):
        """One PASS/FAIL line; counted."""
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        log(f"{'PASS' if ok else 'FAIL'} {what}" + (f": {detail}" if detail else ""))
        return ok

    def note(self, text):
        log(f"NOTE {text}")

    def section(self, title, text=""):
        log(f"\n== {title}")
        self.md.append(f"\n## {title}\n")
        if text:
            log(text)
            self.md.append(text + "\n")

    def table(self, head, rows, title=None):
        if title:
            log(f"\n{title}")
            self.md.append(f"\n### {title}\n")
        log_table(head, [[cell(c) for c in r] for r in rows])
        self.md.append("| " + " | ".join(head) + " |")
        self.md.append("|" + "|".join("---" for _ in head) + "|")
        for r in rows:
            self.md.append("| " + " | ".join(cell(c) for c in r) + " |")
        self.md.append("")

    def text(self, text):
        self.md.append(text)

    def write(self, header):
        os.makedirs(os.path.dirname(ARTIFACT), exist_ok=True)
        with open(ARTIFACT, "w") as f:
            f.write(header + "\n" + "\n".join(self.md) + "\n")
        return ARTIFACT


def examples_table(report, entries):
    rows = []
    for e in entries:
        if e.source == "lab":
            continue
        bb_ok, bb_msg = e.bb
        ours_ok, refusal = e.ours
        ours = "loads" if ours_ok else f"refused: `{refusal.get('key')}` (line {refusal.get('line')})"
        detail = "" if ours_ok else refusal.get("message", "")
        if e.adapted is not None:
            a_bb, a_ours = e.bb_adapted, e.ours_adapted
            detail += (" · " if detail else "") + (
                f"adapted: blackbox {'loads' if a_bb[0] else 'refuses'}, ours "
                + ("loads" if a_ours[0] else f"refuses `{a_ours[1].get('key')}`")
            )
        rows.append(
            [
                e.source,
                e.name,
                e.prober,
                "loads" if bb_ok else f"no: {bb_msg[:80]}",
                ours,
                detail,
                "yes" if e.runnable else "no",
            ]
        )
    report.table(
        ["file", "module", "prober", "blackbox 0.23.0", "ours", "our message", "run by the lab"],
        rows,
        "Each shipped example module in a file of its own",
    )


def case_tables(report, cases):
    modules = []
    for c in cases:
        if c.module not in modules:
            modules.append(c.module)
    for m in modules:
        rows = []
        for c in (c for c in cases if c.module == m):
            comp = c.comparison
            if comp is None:
                rows.append([f"{c.target} ({c.note})", c.kind, "-", "-", "-", "; ".join(c.problems), "", "FAIL"])
                continue
            success = f"{fmt(comp.bb_success)} / {fmt(comp.our_success)}"
            only_bb = ", ".join(d.text() for d in comp.of("only_blackbox")) or "-"
            only_ours = ", ".join(d.text() for d in comp.of("only_ours")) or "-"
            mism = "; ".join(d.text() for d in comp.differences if d.kind in ("value", "labels"))
            mism = "; ".join(x for x in (mism, *c.problems) if x) or "-"
            verdict = "PASS" if c.passed else "FAIL"
            rows.append([f"{c.target} ({c.note})", c.kind, success, only_bb, only_ours, mism, c.reason[:120], verdict])
        report.table(
            [
                "case",
                "kind",
                "success bb / ours",
                "only in blackbox",
                "only in ours",
                "value mismatches",
                "blackbox's failure",
                "verdict",
            ],
            rows,
            f"module {m}",
        )


def fmt(v):
    return "none" if v is None else f"{v:.0f}"


def failure_details(report, cases):
    failed = [c for c in cases if not c.passed]
    if not failed:
        return
    report.section("Failed cases in detail")
    for c in failed:
        report.text(f"\n### `{c.module}` · `{c.target}` ({c.kind}: {c.note})\n")
        report.text(f"`GET {c.query}` with `X-Prometheus-Scrape-Timeout-Seconds: 3`\n")
        for p in c.problems + [d.detail for d in (c.comparison.unexpected() if c.comparison else [])]:
            report.text(f"- {p}")
        for who, r in (("blackbox", c.bb), ("ours", c.ours)):
            if r is None:
                continue
            report.text(f"\n{who} ({r.status}):\n\n```\n{sample_lines(r.body)}\n```")
            if c.debug.get(who):
                lines = c.debug[who].strip().splitlines()
                if len(lines) > 24:
                    lines = lines[:14] + [f"… {len(lines) - 22} lines …"] + lines[-8:]
                shown = "\n".join(lines)
                report.text(f"\n{who}'s debug=true logs:\n\n```\n{shown}\n```")


def refusal_table(report, rows):
    out = []
    for r in rows:
        verdict = "PASS" if r.passed else "FAIL"
        notes = "; ".join(r.problems + r.notes) or "-"
        out.append([r.what, f"`{r.query}`", summary(r.bb), summary(r.ours), notes, verdict])
    report.table(["request", "query", "blackbox", "ours", "differences", "verdict"], out, "Refusals and debug=true")


def expected_list(report):
    rows = [[e.kind, e.metric, e.why, e.seen] for e in EXPECTED]
    rows += [["endpoint", k, v, "-"] for k, v in ENDPOINT_EXPECTED.items()]
    report.table(["kind", "what", "why", "cases where seen"], rows, "Expected differences (marked * above)")


def unexplained(report, cases, rows):
    """Every difference no EXPECTED entry explains, grouped: what, in how many cases, the first."""
    groups = {}
    for c in cases:
        items = [(p.split(":")[0], p) for p in c.problems]
        if c.comparison:
            items += [(f"{d.kind} {d.metric}", d.detail) for d in c.comparison.unexpected()]
        for key, detail in items:
            g = groups.setdefault(key, [0, f"`{c.module}` `{c.target}`", detail])
            g[0] += 1
    for r in rows:
        for p in r.problems:
            key = "refusal " + p.split(":")[0]
            g = groups.setdefault(key, [0, f"{r.what}", p])
            g[0] += 1
    out = [[k, n, first, detail[:200]] for k, (n, first, detail) in sorted(groups.items(), key=lambda kv: -kv[1][0])]
    report.table(
        ["difference", "cases", "first case", "detail"], out or [["none", 0, "-", "-"]], "Unexplained differences"
    )


def agreed(report):
    rows = [[m, n, ", ".join(sorted(v))[:160]] for m, (n, v) in sorted(AGREED.items())]
    report.table(["metric", "cases where both agreed", "values seen"], rows, "Values compared and equal")
