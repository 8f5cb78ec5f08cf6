"""The cases about the exporter's history: a corrupt record, a history dated in the future (a
clock step back), two exporters on one history directory."""

import json
import os
import re
import time
from datetime import UTC, datetime, timedelta

from . import harness
from .harness import write

# 2. history_corrupt


def make_history(c, hdir, listener, seconds_rounds=3, name="gen"):
    """Runs the binary on `hdir` for a few rounds to get a valid history; returns its files."""
    gen = c.exporter([f"--probe.tcp={listener.target}"], [f"--history.dir={hdir}"], name=name)
    gen.wait_rounds(seconds_rounds)
    gen.stop()
    return sorted(os.path.join(hdir, f) for f in os.listdir(hdir) if f.endswith(".jsonl"))


def case_history_corrupt(c):
    lst = c.listener()
    hdir = c.path("history")
    files = make_history(c, hdir, lst)
    lines = open(files[-1]).read().splitlines()
    rounds = [json.loads(x) for x in lines if '"type":"round"' in x]
    rnd = next(r for r in reversed(rounds) if r.get("probes"))

    def variant(i, probe_duration=None, raw=None):
        # Dated just after the last round: the status page reads rounds from before its start.
        r = json.loads(json.dumps(rnd))
        r["time"] = round(rnd["time"] + 0.001 * (i + 1), 3)
        r["round"] = rnd["round"] + i + 1
        if probe_duration is not None:
            r["probes"][0]["duration"] = probe_duration
        text = json.dumps(r, separators=(",", ":"))
        if raw:
            text = re.sub(r'("probes":\[\{[^]]*?"duration":)[^,}]+', lambda m: m.group(1) + raw, text, count=1)
        return text

    # Probe durations no reader may trust: negative, NaN, infinite, 1e300, and 1e18 s (the
    # review's crash).
    bad = [variant(0, -5.0), variant(1, raw="NaN"), variant(2, raw="1e999"), variant(3, 1e300), variant(4, 1e18)]
    with open(files[-1], "a") as f:
        f.write("\n".join(bad) + "\n")

    e = c.exporter([f"--probe.tcp={lst.target}"], [f"--history.dir={hdir}"], name="victim")
    e.wait_rounds(2)
    statuses = []
    for _ in range(2):
        try:
            statuses.append(e.request("GET", "/")[0])
        except OSError as err:
            statuses.append(type(err).__name__)
        time.sleep(0.5)
    alive = e.alive()
    c.expect(statuses == [200, 200], f"GET / -> {statuses} (want 200)")
    if not alive:
        why = [ln for ln in e.stderr().splitlines() if "Fatal error" in ln or "fatal" in ln.lower()]
        c.expect(False, f"died with {e.proc.returncode}: {(why[0] if why else harness.tail(e.stderr(), 160))[:200]}")
    if alive:
        corrupt = e.metrics().total("reachability_history_corrupt_records_total")
        c.expect(alive, "alive after GET /")
        c.expect(corrupt >= 1, f"history_corrupt_records_total {corrupt:.0f} (want >= 1)")


# 9. clock_back

NAME_FORMAT = "history-%Y%m%dT%H%M%S.%f"


def case_clock_back(c):
    lst = c.listener()
    hdir = c.path("history")
    for path in make_history(c, hdir, lst):
        out = []
        for line in open(path).read().splitlines():
            if not line.strip():
                continue
            r = json.loads(line)
            for k in ("time", "since"):
                if isinstance(r.get(k), (int, float)):
                    r[k] = round(r[k] + 86400, 3)
            out.append(json.dumps(r, separators=(",", ":")))
        base = os.path.basename(path)
        start = datetime.strptime(base[: -len("Z.jsonl")], NAME_FORMAT).replace(tzinfo=UTC)
        moved = (start + timedelta(days=1)).strftime(NAME_FORMAT)[:-3] + "Z.jsonl"
        write(os.path.join(hdir, moved), "\n".join(out) + "\n")
        os.remove(path)
    e = c.exporter([f"--probe.tcp={lst.target}"], [f"--history.dir={hdir}"], name="after-step")
    m = e.wait_rounds(4)
    avail = {lab["window"]: v for lab, v in m.series("reachability_availability_ratio")}
    cover = {lab["window"]: v for lab, v in m.series("reachability_history_coverage_ratio")}
    c.expect(avail and all(v == v for v in avail.values()), f"availability {avail} (want no NaN)")
    c.expect(
        cover and all(v > 0 for v in cover.values()),
        f"coverage {{{', '.join(f'{k}: {v:.2g}' for k, v in cover.items())}}} (want > 0)",
    )


# 11. history_lock


def case_history_lock(c):
    lst = c.listener()
    hdir = c.path("history")
    first = c.exporter([f"--probe.tcp={lst.target}"], [f"--history.dir={hdir}"], name="first")
    first.wait_rounds(1)
    second = c.exporter([f"--probe.tcp={lst.target}"], [f"--history.dir={hdir}"], wait=False, name="second")
    rc = second.wait_exit(5)
    err = second.stderr()
    c.expect(rc in (78, 1), f"second exporter: exit {rc if rc is not None else 'none in 5 s'} (want 78 or 1)")
    said = [
        ln
        for ln in err.splitlines()
        if re.search(r"\b(lock|locked|in use|already)\b", ln, re.I) and re.search(r"histor", ln, re.I)
    ]
    c.expect(said, f"message: {said[0][-160:] if said else harness.tail(err, 140)!r}")
    try:
        healthy = first.request("GET", "/-/healthy")[0]
    except OSError:
        healthy = None
    c.expect(first.alive() and healthy == 200, f"first still serving: alive={first.alive()}, healthy {healthy}")


# Second review (issue #41)

# [3] history_symlink


def case_history_symlink(c):
    """The newest history file replaced by a symlink to a file outside the directory: the
    exporter must not write through it (it followed it and truncated the target). It may refuse,
    start a new file or log; it stays up, or exits with an error naming the file."""
    lst = c.listener()
    hdir = c.path("history")
    files = make_history(c, hdir, lst, seconds_rounds=2)
    victim = c.path("victim.txt")
    known = b"precious bytes outside the history directory\n" * 64
    with open(victim, "wb") as f:
        f.write(known)
    newest = files[-1]
    os.remove(newest)
    os.symlink(victim, newest)
    e = c.exporter([f"--probe.tcp={lst.target}"], [f"--history.dir={hdir}"], wait=False, name="linked")
    try:
        e.wait_listening(10)
        e.wait_rounds(2, limit=5)
    except RuntimeError:
        pass
    time.sleep(0.3)
    with open(victim, "rb") as f:
        now = f.read()
    c.expect(
        now == known,
        f"victim behind the symlinked {os.path.basename(newest)}: {len(known)} -> {len(now)} bytes"
        f"{', same bytes' if now == known else ', changed'} (want unchanged)",
    )
    if e.alive():
        c.expect(True, "exporter still running")
    else:
        err = e.stderr()
        said = re.search(re.escape(os.path.basename(newest)) + r"|symlink|symbolic link|not a regular file", err)
        c.expect(said, f"exited {e.proc.returncode}: {harness.tail(err, 140)!r} (want an error naming the file)")


# [4] history_lock_rm


def case_history_lock_rm(c):
    """The lock of a history directory removed while its exporter runs (`rm .lock`, as a
    cleanup script might): a second exporter on the same directory must still be refused, as in
    history_lock (exit non-zero, a message that the history directory is in use)."""
    lst = c.listener()
    hdir = c.path("history")
    first = c.exporter([f"--probe.tcp={lst.target}"], [f"--history.dir={hdir}"], name="first")
    first.wait_rounds(1)
    removed = []
    for name in sorted(os.listdir(hdir)):
        if "lock" in name.lower():
            os.remove(os.path.join(hdir, name))
            removed.append(name)
    second = c.exporter([f"--probe.tcp={lst.target}"], [f"--history.dir={hdir}"], wait=False, name="second")
    rc = second.wait_exit(4)
    err = second.stderr()
    if rc is None:
        second.stop()
    said = [
        ln
        for ln in err.splitlines()
        if re.search(r"\b(lock|locked|in use|already)\b", ln, re.I) and re.search(r"histor", ln, re.I)
    ]
    c.expect(
        rc not in (None, 0) and said,
        f"after removing {removed or 'no lock file (none found)'}: second exporter "
        f"{f'exit {rc}' if rc is not None else 'still running after 4 s'}; "
        f"message {said[0][-140:] if said else harness.tail(err, 100)!r} (want refused: in use)",
    )
    c.expect(first.alive(), f"first still running: {first.alive()}")
