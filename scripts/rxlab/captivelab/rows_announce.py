"""Rows 1-3: the network announces its RFC 8908 API and says `captive: true` while the router
forwards nothing; the daemon (interval 5 s, timeout 2 s, fail_after 3, recover_after 2) must say
`portal` (reason captive_portal_api) within one round of the announcement, `check` too (exit 3),
the login URL in check, the metrics and the status page; after login (the API says false, the
router forwards again) `full` within one round.

1. dhcp4_captive: a udhcpc lease without option 114, then a renewal with it (the hook writes
   lan0.dhcp4).
2. ra_captive: no DHCP option; an RA with option 37 and PREF64 (option 38). `check` (started
   after the RA) must solicit one to learn it; its JSON must list the PREF64 prefix.
3. dhcp6_captive: ISC dhclient -6 asking for option 103 (the hook writes lan0.dhcp6); the
   API at an IPv6 literal.
2b. ra_late_start: the RA (option 37, PREF64) went out before the daemon started, as when a
   host boots into a hotspot: the daemon must solicit one (the router answers at once) and be
   portal(captive_portal_api) from its first round, within one round of its start.
2c. ra_solicit_daemon, ra_solicit_check: a router that only answers solicitations (no RA ever
   reached the host): the daemon must solicit at its start and be portal within one round;
   `check` must solicit and say portal (exit 3, source ra, the PREF64 prefix)."""

import os
import re
import time

from ..util import tail
from . import api
from .clients import HOOK
from .common import (
    INTERVAL,
    TIMEOUT,
    Background,
    Result,
    check_line,
    entry,
    one_round,
    portal_series,
    states,
    track,
    wait_file,
)
from .net import PREF64

PORTAL_API = ("portal", "captive_portal_api")
LINK = re.compile(r'<a\s[^>]*href="' + re.escape(api.USER_PORTAL) + '"')


def nat64(m, want=None):
    """The prefixes of reachability_nat64_prefix_info; with `want`: whether it is among them."""
    found = [labels.get("prefix") for labels, _ in m.series("reachability_nat64_prefix_info")]
    return want in found if want else found


def healthy_start(bench, r):
    cfg = bench.config(interval=f"{INTERVAL:.0f}s", timeout=f"{TIMEOUT:.0f}s")
    took = bench.start_exporter(cfg)
    r.note(f"healthy: full {took:.1f}s after start")
    return cfg


def captive_phase(bench, r, t0, source, cfg, text_check=False):
    """From the announcement at `t0` to the portal verdict, then every output."""
    bound, start = one_round(), time.time()
    took, seen = track(bench, lambda m: m.verdict("overall") == PORTAL_API, bound + 2 * INTERVAL)
    since = None if took is None else start + took - t0
    r.note(
        f"announced: overall {states(seen)}; {PORTAL_API[0]}({PORTAL_API[1]}) "
        + (f"{since:.1f}s after the announcement (bound {bound:.0f}s)" if since is not None else "NEVER")
    )
    r.want(since is not None, f"never portal(captive_portal_api) after the announcement: {seen[-1:]}")
    r.want(
        since is None or since <= bound, f"portal {since:.1f}s after the announcement, over one round ({bound:.0f}s)"
    )
    r.want("limited" not in states(seen), f"limited on the way to portal: {states(seen)}")
    json_check = Background(lambda: bench.check(f"--config.file={cfg}"))
    text = Background(lambda: bench.check(f"--config.file={cfg}", output="text")) if text_check else None
    m = bench.scrape()
    s = portal_series(m)
    info = s["info"] if isinstance(s["info"], dict) else {}
    r.note(f"metrics: info {s['info']}, captive {s['captive']}")
    r.want(info.get("user_portal_url") == api.USER_PORTAL, f"reachability_captive_portal_info: {s['info']}")
    r.want(info.get("source") == source, f"info source {info.get('source')}, want {source}")
    r.want(s["captive"] == 1, f"reachability_captive_portal_captive {s['captive']}, want 1")
    page = bench.get("/")
    for name, body in ((f"metrics-{source}.prom", m.text), (f"status-{source}.html", page)):
        with open(bench.path(name), "w") as f:  # kept with --keep: what the row judged
            f.write(body)
    r.want(LINK.search(page) is not None, f"the status page has no login link to {api.USER_PORTAL}")
    r.note("status page: login link " + ("present" if LINK.search(page) else "MISSING"))
    code, js, err = json_check.result()
    e = entry(js)
    r.note(check_line(code, js, err) + (" (agrees)" if code == 3 else " (DISAGREES)"))
    r.want(code == 3 and js and js.get("state") == "portal", "check does not say portal (exit 3)")
    r.want(e is not None and e.get("user_portal_url") == api.USER_PORTAL and e.get("captive") is True,
           "check's captive_portals lacks the login URL")  # fmt: skip
    r.want(e is None or e.get("source") == source, f"check's source {e and e.get('source')}, want {source}")
    if text:
        code_t, out, _ = text.result()
        lines = [line for line in out.splitlines() if line.startswith("  captive portal ")]
        r.note(f"check text: {lines[0][:120] if lines else 'no `  captive portal ` line'}")
        r.want(bool(lines) and api.USER_PORTAL in lines[0], "check's text has no `  captive portal ` line with the URL")
    return js


def login_phase(bench, r):
    """The person logs in: the API says false, the router forwards: full within one round."""
    bound = one_round()
    bench.answer(api.LOGGED_IN)
    bench.captive(False)
    t0 = time.time()
    took, seen = track(bench, lambda m: m.verdict("overall")[0] == "full", bound + 3 * INTERVAL)
    r.note(
        f"login: overall {states(seen)}; full "
        + (f"{took:.1f}s after login (bound {bound:.0f}s)" if took is not None else "NEVER")
    )
    r.want(took is not None and took <= bound, f"not full within one round of login ({took})")
    s = portal_series(bench.scrape())
    r.note(f"after login: captive {s['captive']}, seconds {s['seconds']}, bytes {s['bytes']}")
    r.want(s["captive"] == 0, f"reachability_captive_portal_captive {s['captive']} after login, want 0")
    r.want(s["seconds"] is not None and 0 < s["seconds"] <= 300, f"seconds_remaining {s['seconds']}, want (0, 300]")
    r.want(s["bytes"] == 1000000, f"bytes_remaining {s['bytes']}, want 1000000")
    return time.time() - t0


def dhcp4_captive(bench):
    r = Result()
    bench.start_udhcpc()  # a lease without option 114: the network is open
    cfg = healthy_start(bench, r)
    bench.answer(api.CAPTIVE)
    bench.captive(True)
    bench.dhcp_options(f'114,"{api.API4}"')
    bench.renew()
    t0 = wait_file(bench.hook_file("dhcp4"), 10)
    if t0 is None:
        r.note("udhcpc events: " + " | ".join(tail(bench.path("udhcpc-events.log"), 2).splitlines()))
        r.want(os.path.exists(HOOK), f"no hook at {HOOK} (RXCAP_HOOK=PATH names another)")
        r.want(False, "udhcpc's renewal with option 114 wrote no lan0.dhcp4")
        return r
    captive_phase(bench, r, t0, "dhcp4", cfg, text_check=True)
    login_phase(bench, r)
    return r


def ra_captive(bench):
    r = Result()
    cfg = healthy_start(bench, r)
    bench.answer(api.CAPTIVE)
    bench.captive(True)
    t0 = bench.announce(api.API4, PREF64)
    rs0 = bench.ra_counts()[0]
    js = captive_phase(bench, r, t0, "ra", cfg)
    rs1 = bench.ra_counts()[0]
    listed = (js or {}).get("nat64_prefixes")
    r.note(f"check: nat64_prefixes {listed}; router solicitations during check: {rs1 - rs0}")
    r.want(listed is not None and PREF64 in listed, f"check's nat64_prefixes {listed} lack the RA's {PREF64}")
    r.want(rs1 > rs0, "check sent no Router Solicitation (it could only have learned the API from one)")
    late, _ = track(bench, lambda m: nat64(m, PREF64), INTERVAL + TIMEOUT)
    r.note(
        f"daemon reachability_nat64_prefix_info: {nat64(bench.scrape())}"
        + (f" (after {late:.1f}s more)" if late else "")
    )
    login_phase(bench, r)
    return r


def dhcp6_captive(bench):
    r = Result()
    cfg = healthy_start(bench, r)
    bench.answer(api.CAPTIVE)
    bench.captive(True)
    bench.dhcp_options(f'option6:103,"{api.API6}"')
    events = bench.start_dhclient6()
    t0 = wait_file(bench.hook_file("dhcp6"), 15)
    if t0 is None:
        r.note("dhclient -6 events: " + (" | ".join(tail(events, 3).splitlines()) or "none"))
        r.want(os.path.exists(HOOK), f"no hook at {HOOK} (RXCAP_HOOK=PATH names another)")
        r.want(False, "dhclient -6 with option 103 and the hook wrote no lan0.dhcp6")
        return r
    captive_phase(bench, r, t0, "dhcp6", cfg)
    login_phase(bench, r)
    return r


def ra_late_start(bench):
    r = Result()
    bench.answer(api.CAPTIVE)
    bench.captive(True)
    bench.announce(api.API4, PREF64)  # armed: every solicitation is answered from now on
    rs0 = bench.ra_counts()[0]
    cfg = bench.config(interval=f"{INTERVAL:.0f}s", timeout=f"{TIMEOUT:.0f}s")
    bound = one_round()
    try:
        took = bench.start_exporter(
            cfg, ready=lambda m: m.verdict("overall") == PORTAL_API, timeout=bound + 2 * INTERVAL
        )
    except RuntimeError as e:
        took = None
        r.note(str(e)[:200])
    rs1 = bench.ra_counts()[0]
    m = bench.scrape()
    late, _ = track(bench, lambda m: nat64(m, PREF64), INTERVAL + TIMEOUT)
    prefixes = nat64(bench.scrape())
    r.note(
        f"started after the RA: overall {m.verdict('overall')}"
        + (
            f" {took:.1f}s after start (bound {bound:.0f}s)"
            if took is not None
            else f" (not portal within {bound + 2 * INTERVAL:.0f}s)"
        )
        + f"; router solicitations since start {rs1 - rs0}; reachability_nat64_prefix_info {prefixes}"
        + (f" ({late:.1f}s after the portal verdict)" if late else "")
    )
    r.want(rs1 > rs0, "the daemon sent no Router Solicitation at start")
    r.want(took is not None and took <= bound, "not portal(captive_portal_api) within one round of start")
    r.want(PREF64 in prefixes, f"reachability_nat64_prefix_info lacks the RA's {PREF64}")
    return r


def fresh_daemon(bench, r, cfg, label):
    """Starts the daemon; (seconds to portal(captive_portal_api) or None, solicitations)."""
    bound, rs0 = one_round(), bench.ra_counts()[0]
    try:
        took = bench.start_exporter(
            cfg, ready=lambda m: m.verdict("overall") == PORTAL_API, timeout=bound + 2 * INTERVAL
        )
    except RuntimeError:
        took = None
    rs = bench.ra_counts()[0] - rs0
    r.note(f"daemon, {label}: {bench.safe_verdict()}"
           + (f" {took:.1f}s after start (bound {bound:.0f}s)" if took is not None else f" {bound + 2 * INTERVAL:.0f}s after start")
           + f", router solicitations {rs}")  # fmt: skip
    bench.stop_exporter()
    return took, rs


def fresh_check(bench, r, cfg, label):
    """Runs check; whether it said portal from the RA with the PREF64 prefix, and solicitations."""
    rs0 = bench.ra_counts()[0]
    code, js, err = bench.check(f"--config.file={cfg}")
    rs = bench.ra_counts()[0] - rs0
    e, listed = entry(js), (js or {}).get("nat64_prefixes")
    r.note(f"check, {label}: {check_line(code, js, err)}; nat64 {listed}; router solicitations {rs}")
    ok = code == 3 and e is not None and e.get("source") == "ra" and listed is not None and PREF64 in listed
    return ok, rs


def solicit_only(daemon):
    """The router answers solicitations only (no RA ever reached the host)."""

    def play(bench):
        r = Result()
        bench.answer(api.CAPTIVE)
        bench.captive(True)
        bench.arm(api.API4, PREF64)
        cfg = bench.config(interval=f"{INTERVAL:.0f}s", timeout=f"{TIMEOUT:.0f}s")
        what = "the daemon" if daemon else "check"
        if daemon:
            took, rs = fresh_daemon(bench, r, cfg, "started with no RA heard")
            ok = took is not None and took <= one_round()
        else:
            ok, rs = fresh_check(bench, r, cfg, "with no RA heard")
        r.want(rs > 0, f"{what} sent no Router Solicitation")
        r.want(ok, f"{what} did not say portal from the solicited RA" + (" within one round" if daemon else ""))
        return r

    return play
