"""Row 5, in three parts side by side: hostile APIs. The internet works; the hook file
(lan0.dhcp4, as the hook writes it) names an API that answers `captive: true` in a way the
exporter must refuse. Each case may change nothing but reachability_captive_portal_api_errors_total:
the verdict stays `full` through the round that reads it and the next, `check` says full (exit
0) with the error in its captive_portals entry, no label of the scrape holds hostile text (the
mark `rxhostile`, control characters, over 2 KiB) and the status page does not carry the mark.
The router's access log says which URLs were fetched: never the redirect's target, never an
http:// API; and with which Accept header."""

import os
import time

from . import api
from .api import LAN4
from .common import (
    FAST_INTERVAL,
    TIMEOUT,
    Background,
    Result,
    check_line,
    entry,
    errors,
    grown,
    hostile_labels,
    rounds_later,
    states,
    track,
)

H = f"https://{LAN4}/h"
INJECTED = (f"<script>{api.MARK}", '"><script>')  # markup a hostile URL would bring, unescaped
# row -> [(case, API URI, the error reason expected (reported, not required))]
CASES = {
    "hostile_tls": [
        ("other_name", f"https://{LAN4}:{api.OTHER_NAME_PORT}/h/true.json", "tls"),
        ("untrusted_ca", f"https://{LAN4}:{api.ROGUE_PORT}/h/true.json", "tls"),
        ("api_http", f"http://{LAN4}/h/true.json", "uri"),
        ("redirect", f"{H}/redirect", "redirect"),
        ("slow", f"https://{LAN4}:{api.SLOW_PORT}/slow", "timeout"),
    ],
    "hostile_body": [
        ("body_10mb", f"{H}/big.json", "too_large"),
        ("wrong_type", f"{H}/wrongtype.html", "content_type"),
        ("invalid_json", f"{H}/invalid.json", "invalid"),
        ("captive_missing", f"{H}/missing.json", "invalid"),
        ("repeated_key", f"{H}/repeated.json", "invalid"),
    ],
    "hostile_strings": [
        ("control_bel", f"{H}/bel.json", "invalid"),
        ("newline_script", f"{H}/script.json", "invalid"),
        ("markup_url", f"{H}/markup.json", "invalid"),
        ("url_100k", f"{H}/url100k.json", "too_large"),
        ("url_3k", f"{H}/url3k.json", "invalid"),
        ("portal_url_http", f"{H}/httpportal.json", "invalid"),
    ],
}


def settle(bench, r, name):
    """Before a case: no hook file, and the verdict full again (a failed case before must not
    spill into this one)."""
    path = bench.hook_file("dhcp4")
    if bench.verdict("overall")[0] == "full":
        return
    if os.path.lexists(path):
        os.unlink(path)
    took, seen = track(bench, lambda m: m.verdict("overall")[0] == "full", 3 * FAST_INTERVAL + TIMEOUT + 5)
    r.note(f"(before {name}: hook file removed, {states(seen)}" + (f" in {took:.1f}s)" if took else ", never full)"))


def one_case(bench, r, cfg, name, uri, expected):
    settle(bench, r, name)
    m0 = bench.scrape()
    e0, mark = errors(m0), api.access_mark(bench.work)
    t0 = bench.write_hook_file(uri)
    checked = Background(lambda: bench.check(f"--config.file={cfg}"))
    seen, took, end = [], None, t0 + 2 * FAST_INTERVAL + 5 + 2
    while time.time() < end:
        m = bench.scrape()
        v = m.verdict("overall")
        if not seen or seen[-1] != v:
            seen.append(v)
        if grown(e0, errors(m)):
            took = time.time() - t0
            break
        time.sleep(0.1)
    rounds_later(bench, 1, FAST_INTERVAL + TIMEOUT + 5)  # the next round too stays full
    page = bench.get("/")
    m = bench.scrape()
    with open(bench.path(f"status-{name}.html"), "w") as f:  # kept with --keep
        f.write(page)
    v = m.verdict("overall")
    if seen[-1] != v:
        seen.append(v)
    more = grown(e0, errors(m))
    bad = hostile_labels(m)
    s = m.value("reachability_captive_portal_captive", interface="lan0")
    code, js, err = checked.result()
    e = entry(js)
    served = api.fetched(bench.work, mark)
    accepts = sorted({a for *_, a in served})
    agrees = "agrees" if (js or {}).get("state") == states(seen).split("→")[-1] else "DISAGREES"
    r.note(f"{name}: {states(seen)}; errors +{more or '{}'}"
           + (f" after {took:.1f}s" if took is not None else " (NONE)")
           + f"; {check_line(code, js, err)} ({agrees}); fetched {len(served)}x accept={accepts}")  # fmt: skip
    injected = [t for t in INJECTED if t in page]
    r.want(not injected, f"{name}: the status page carries unescaped markup: {injected}")
    r.want(states(seen) == "full", f"{name}: overall {states(seen)}, want full throughout")
    r.want(bool(more), f"{name}: reachability_captive_portal_api_errors_total did not grow")
    if more and expected not in more:
        r.note(f"{name}: reason {sorted(more)} (the lab expected {expected})")
    r.want(s != 1, f"{name}: reachability_captive_portal_captive is 1")
    r.want(not bad, f"{name}: hostile text in labels: {bad[:3]}")
    r.want(code == 0 and (js or {}).get("state") == "full", f"{name}: check exit {code}, want 0 (full)")
    r.want(e is None or (e.get("captive") is not True and bool(e.get("error"))), f"{name}: check's entry {e}")
    if name == "api_http":
        plain = [f for f in served if f[0] == "80"]
        r.want(not plain, f"api_http: the http:// API was fetched: {plain[:2]}")
    if name == "redirect":
        followed = [f for f in served if f[1].endswith("/redirected.json")]
        r.want(not followed, "redirect: the redirect was followed")
    wrong_accept = [a for a in accepts if api.CAPTIVE_TYPE not in a]
    r.want(not wrong_accept, f"{name}: fetched with Accept {wrong_accept}")


def hostile(row):
    def play(bench):
        r = Result()
        cfg = bench.config(interval=f"{FAST_INTERVAL:.0f}s", timeout=f"{TIMEOUT:.0f}s")
        bench.start_exporter(cfg)
        for name, uri, expected in CASES[row]:
            one_case(bench, r, cfg, name, uri, expected)
        page = bench.get("/")
        r.want(api.MARK not in page, "the status page carries hostile text")
        r.note(f"errors by reason at the end: {errors(bench.scrape())}")
        return r

    return play
