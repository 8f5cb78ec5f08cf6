"""The blackbox side-by-side lab's first two phases: the shipped example modules loaded one by
one into both exporters (and the module file both then share), and every case probed through
both /probe endpoints and compared."""

import os
import re
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from .compare import compare, families
from .exporters import blackbox_check, get, our_check
from .modules import CASES, INSTALLED, SOURCES, adapt, example_path, lab_blocks, module_file, renamed, split_modules

SCRAPE_TIMEOUT = "3"  # X-Prometheus-Scrape-Timeout-Seconds of the lab's own GETs: probes get 2.5 s


# ---- phase 1: the example modules ------------------------------------------------------------
@dataclass
class Entry:
    source: str
    name: str
    block: str
    prober: str = "?"
    adapted: str = None  # the block adapted to the lab, when that changes it
    bb: tuple = (None, "")  # (loads, message) verbatim
    ours: tuple = (None, None)  # (loads, refusal) verbatim
    bb_adapted: tuple = None
    ours_adapted: tuple = None

    @property
    def runnable(self):
        """Both load the block the lab would use."""
        bb = self.bb_adapted or self.bb
        ours = self.ours_adapted or self.ours
        return bool(bb[0] and ours[0])

    @property
    def lab_block(self):
        return self.adapted or self.block


def load_entries(ca):
    entries = []
    for label, rel in SOURCES:
        with open(example_path(rel)) as f:
            text = f.read()
        for name, block in split_modules(text):
            entries.append(Entry(label, name, block))
    for name, block in lab_blocks(ca):
        entries.append(Entry("lab", name, block))
    for e in entries:
        m = re.search(r"^\s+prober:\s*(\S+)", e.block, re.M)
        e.prober = m.group(1) if m else "?"
        adapted = adapt(e.name, e.block, ca)
        e.adapted = adapted if adapted != e.block else None
    return entries


def installed_identical(report):
    """The D example files are byte for byte what Debian's package installed."""
    for rel, installed in INSTALLED.items():
        try:
            with open(installed, "rb") as a, open(example_path(rel), "rb") as b:
                same = a.read() == b.read()
        except OSError as e:
            report.check(False, f"examples: {installed} readable", str(e))
            continue
        report.check(same, f"examples: {rel} is byte for byte {installed}")


def check_examples(lab, exporter, entries, jobs=3):
    """Each module in a file of its own, verbatim (and adapted, when the lab changes it), into
    blackbox (--config.check) and ours (started: served, or exit 78 with the key)."""
    d = os.path.join(lab.work, "single")
    os.makedirs(d, exist_ok=True)
    tasks = []
    for i, e in enumerate(entries):
        for variant, block in (("verbatim", e.block), ("adapted", e.adapted)):
            if block is None:
                continue
            path = os.path.join(d, f"{i:03d}-{e.name}-{variant}.yml")
            with open(path, "w") as f:
                f.write(module_file([block]))
            tasks.append((e, variant, path, 20000 + len(tasks)))

    def one(task):
        e, variant, path, port = task
        bb = blackbox_check(lab.client, path)
        ours = our_check(lab.client, exporter, path, port, lab.work)
        if variant == "verbatim":
            e.bb, e.ours = bb, ours
        else:
            e.bb_adapted, e.ours_adapted = bb, ours

    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(one, tasks))


def shared_modules(entries):
    """[(name in the shared file, entry)] of every module both load, the examples' names kept
    (a later module of the same name and other content gets `__` and its source)."""
    out, by_name = [], {}
    for e in entries:
        if not e.runnable:
            continue
        block = e.lab_block
        if e.name in by_name:
            if by_name[e.name] == block.strip():
                continue
            tag = e.source.replace(" ", "_").replace(".yml", "").replace("blackbox", "bb")
            name = f"{e.name}__{tag}"
        else:
            name = e.name
        by_name.setdefault(e.name, block.strip())
        out.append((name, e, renamed(block, name)))
    return out


# ---- phase 2: the cases ----------------------------------------------------------------------
@dataclass
class Case:
    module: str  # its name in the shared file
    entry: Entry  # the module: where it comes from, its text
    target: str
    kind: str  # healthy or faulted
    note: str
    bb: object = None
    ours: object = None
    comparison: object = None
    problems: list = field(default_factory=list)
    debug: dict = field(default_factory=dict)
    reason: str = ""  # blackbox's, for a faulted case

    @property
    def query(self):
        return "/probe?" + urllib.parse.urlencode({"target": self.target, "module": self.module})

    @property
    def passed(self):
        return not self.problems and self.comparison is not None and self.comparison.passed


def make_cases(shared):
    cases, without = [], []
    for name, e, _ in shared:
        listed = CASES.get(e.name)
        if not listed:
            without.append((name, e))
            continue
        for target, kind, note in listed:
            cases.append(Case(name, e, target, kind, note))
    return cases, without


def probe_both(cases, pool, ports):
    """Every case through both exporters (each request its own task, so a case's two probes run
    at the same time), then compared."""
    headers = {"X-Prometheus-Scrape-Timeout-Seconds": SCRAPE_TIMEOUT}
    futures = []
    for c in cases:
        futures.append((c, "bb", pool.submit(get, ports[0], c.query, headers, 15)))
        futures.append((c, "ours", pool.submit(get, ports[1], c.query, headers, 15)))
    for c, who, f in futures:
        try:
            setattr(c, who, f.result(timeout=60))
        except Exception as e:  # a request that failed is the case's failure
            c.problems.append(f"{who}: GET {c.query}: {type(e).__name__}: {e}")
    fetch_debug([c for c in cases if c.kind == "faulted"], pool, ports, ("blackbox",))
    for c in cases:
        judge(c)


def judge(c):
    if c.bb is None or c.ours is None:
        return
    for who, r in (("blackbox", c.bb), ("ours", c.ours)):
        if r.status != 200:
            c.problems.append(f"{who} answered {r.status}: {r.body.strip()[:200]}")
    c.comparison = compare(c.bb.body, c.ours.body, c.entry.prober, c.entry.lab_block, c.reason)
    want = 1.0 if c.kind == "healthy" else 0.0
    if c.comparison.bb_success != want:
        c.problems.append(f"lab: blackbox says probe_success {c.comparison.bb_success} for a {c.kind} case")
    if c.comparison.our_success != c.comparison.bb_success:
        bb, ours = (("none" if v is None else f"{v:.0f}") for v in (c.comparison.bb_success, c.comparison.our_success))
        c.problems.append(f"probe_success: blackbox {bb}, ours {ours}")


def fetch_debug(cases, pool, ports, who=("blackbox", "ours")):
    """debug=true of `cases` from the exporters named in `who`: the logs, for the report, and
    blackbox's reason for a failure (a faulted case must fail for the reason the lab meant; some
    expected differences depend on it)."""
    headers = {"X-Prometheus-Scrape-Timeout-Seconds": SCRAPE_TIMEOUT}
    futures = []
    for c in cases:
        for name, port in (("blackbox", ports[0]), ("ours", ports[1])):
            if name in who and name not in c.debug:
                futures.append((c, name, pool.submit(get, port, c.query + "&debug=true", headers, 15)))
    for c, name, f in futures:
        try:
            body = f.result(timeout=60).body
            c.debug[name] = body.split("\n\n\n\nMetrics that would have been returned:")[0]
        except Exception as e:
            c.debug[name] = f"(debug=true failed: {e})"
        if name == "blackbox":
            c.reason = failure_reason(c.debug[name])


def failure_reason(logs):
    """Why blackbox failed a probe, from its debug log: its first error (or the info line that
    says what was wrong: a status, a version), else its last line before "Probe failed"."""
    last = ""
    for line in logs.splitlines():
        msg = re.search(r'msg="?((?<=")[^"]*|[^ ]*)', line)
        if not msg or msg.group(1) in SKIP:
            continue
        err = re.search(r'err="((?:[^"\\]|\\.)*)"', line)
        text = msg.group(1) + (f": {err.group(1)}" if err else "")
        if "level=error" in line or msg.group(1).startswith(("Invalid", "Not following")):
            return text
        last = text
    return last


SKIP = ("Probe failed", "Beginning probe", "Probe succeeded", "Response timings for roundtrip", "Making HTTP request",
        "Received HTTP response", "Resolving target address", "Resolved target address")  # fmt: skip


def sample_lines(text):
    """The samples of an exposition (no comments), for the report."""
    return "\n".join(line for line in text.splitlines() if line and not line.startswith("#"))


def names(text):
    return sorted(families(text))
