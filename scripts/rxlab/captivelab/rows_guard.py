"""Rows 4 and 6: what the network says must not be believed beyond what it proves.

4. false_while_intercepting: the operator's own API (`captive_portal.api`, source config) says
   `captive: false` while the router DNATs port 80 of both families to a portal answering 302:
   the probes decide: `portal` from the first verdict, never `full` for three rounds; `check`
   agrees. Released, `full` again.
6. hook_files: the API says `captive: true` and the internet works; hook files the exporter must
   not trust (a symlink, world- or group-writable, in a group-writable directory, owned by
   another user, a FIFO) change nothing for two rounds each: `full`, and `check` (exit 0) lists
   no portal that says captive. Then a proper file (root, 0644): `portal` within one round (the control)."""

import os
import time

from . import api
from .common import (
    FAST_INTERVAL,
    INTERVAL,
    TIMEOUT,
    Background,
    Result,
    check_line,
    entry,
    one_round,
    portal_series,
    rounds_later,
    states,
    track,
    watch,
)


def false_while_intercepting(bench):
    r = Result()
    bench.answer(api.LOGGED_IN)
    bench.intercept(True)
    cfg = bench.config(interval=f"{INTERVAL:.0f}s", timeout=f"{TIMEOUT:.0f}s", api_uri=api.API4)
    took = bench.start_exporter(cfg, ready=lambda m: m.verdict("overall")[0] not in (None, "unknown"), timeout=30)
    first = bench.verdict()
    checked = Background(lambda: bench.check(f"--config.file={cfg}"))
    seen = watch(bench, 3 * INTERVAL)
    s = portal_series(bench.scrape())
    r.note(f"first verdict {first[0]}({first[1]}) {took:.1f}s after start; then {states(seen)} for {3 * INTERVAL:.0f}s")
    r.note(f"metrics: info {s['info']}, captive {s['captive']}")
    r.want(first[0] == "portal", f"first verdict {first}, want portal (by the probes)")
    r.want("full" not in states(seen), f"full while the router intercepts: {states(seen)}")
    r.want(s["captive"] == 0, f"reachability_captive_portal_captive {s['captive']}: the API (false) was not read")
    info = s["info"] if isinstance(s["info"], dict) else {}
    r.want(info.get("source") == "config", f"info source {info.get('source')}, want config")
    code, js, err = checked.result()
    e = entry(js)
    r.note(check_line(code, js, err) + (" (agrees)" if code == 3 else " (DISAGREES)"))
    r.want(code == 3 and (js or {}).get("state") == "portal", "check does not say portal (exit 3)")
    r.want(
        e is not None and e.get("captive") is False and not e.get("error"),
        "check's captive_portals lacks the false answer",
    )
    bench.intercept(False)
    back, seen = track(bench, lambda m: m.verdict("overall")[0] == "full", 4 * INTERVAL + 10)
    r.note(f"released: {states(seen)}" + (f", full after {back:.1f}s" if back is not None else ", never full"))
    r.want(back is not None, "not full again once the router stopped intercepting")
    return r


def fresh(path):
    if os.path.lexists(path):
        os.unlink(path)


def hook_files(bench):
    r = Result()
    bench.answer(api.CAPTIVE)
    interval = FAST_INTERVAL
    cfg = bench.config(interval=f"{interval:.0f}s", timeout=f"{TIMEOUT:.0f}s")
    bench.start_exporter(cfg)
    path, elsewhere = bench.hook_file("dhcp4"), bench.path("elsewhere.uri")
    with open(elsewhere, "w") as f:
        f.write(api.API4 + "\n")
    os.chmod(elsewhere, 0o644)

    def symlink():
        os.symlink(elsewhere, path)

    def regular(mode, owner=None):
        def make():
            bench.write_hook_file(api.API4, mode=mode)
            if owner is not None:
                os.chown(path, owner, owner)

        return make

    def fifo():
        os.mkfifo(path, 0o644)
        os.chmod(path, 0o644)

    def dir_writable():
        regular(0o644)()
        os.chmod(bench.hooks, 0o775)

    cases = [
        ("symlink", symlink),
        ("world_writable", regular(0o666)),
        ("group_writable", regular(0o664)),
        ("dir_group_writable", dir_writable),
        ("foreign_owner", regular(0o644, owner=65534)),
        ("fifo", fifo),
    ]
    for name, make in cases:
        fresh(path)
        make()
        checked = Background(lambda: bench.check(f"--config.file={cfg}"))
        t0, seen = time.time(), []
        done = rounds_later(bench, 2, 3 * interval + 5)
        seen = watch(bench, 0.3)
        code, js, err = checked.result()
        e = entry(js)
        ok = done and states(seen) == "full" and code == 0 and (e is None or e.get("captive") is not True)
        agrees = "agrees" if (js or {}).get("state") == states(seen).split("→")[-1] else "DISAGREES"
        r.note(f"{name}: {states(seen)} after 2 rounds ({time.time() - t0:.1f}s), check exit {code} ({agrees})"
               + ("" if e is None else f" entry {e}"))  # fmt: skip
        r.want(ok, f"{name}: not ignored ({states(seen)}; {check_line(code, js, err)})")
        os.chmod(bench.hooks, 0o755)
    fresh(path)
    bench.write_hook_file(api.API4)
    took, seen = track(
        bench, lambda m: m.verdict("overall") == ("portal", "captive_portal_api"), one_round(interval) + 2 * interval
    )
    r.note(f"control (root, 0644): {states(seen)}" + (f" after {took:.1f}s" if took is not None else ", never portal"))
    r.want(
        took is not None and took <= one_round(interval), "a proper hook file did not make it portal within one round"
    )
    return r
