"""The cases about basic auth on the HTTP front: wrong-password floods from one address and from
many, the success cache across a web config reload, and the timing of unknown users."""

import threading
import time

from .auth import basic, bcrypt_hash
from .context import fmt
from .harness import median, write

# 4. auth_flood and auth_reload_cache


def auth_exporter(c, cost=10):
    """An exporter probing a listener, behind basic auth (user prom, "right-password" hashed at
    bcrypt `cost`): (the exporter, its web config file, the hash)."""
    lst = c.listener()
    web = c.path("web.yml")
    h = bcrypt_hash("right-password", cost)
    write(web, f"basic_auth_users:\n  prom: {h}\n")
    return c.exporter([f"--probe.tcp={lst.target}"], [f"--web.config.file={web}"]), web, h


def timed_get(e, headers, source, timeout=5.0):
    """One GET /metrics from `source`: (its status, or "error", and the seconds it took)."""
    t = time.monotonic()
    try:
        st = e.request("GET", "/metrics", headers, source=source, timeout=timeout)[0]
    except OSError:
        st = "error"
    return st, time.monotonic() - t


def scrape_until(e, headers, until, limit, period, timeout):
    """A scraper at 127.0.0.1: GET /metrics every `period` s until `until` (monotonic) or `limit`
    answers; (the statuses, the seconds each took)."""
    answers, took = [], []
    while time.monotonic() < until and len(answers) < limit:
        st, dt = timed_get(e, headers, "127.0.0.1", timeout)
        answers.append(st)
        took.append(dt)
        time.sleep(max(0.0, period - dt))
    return answers, took


def scrape_during(floods, settle, e, headers, until, limit, period, timeout):
    """Starts the `floods` (threads), gives them `settle` s, scrapes as `scrape_until` does, then
    joins them; what `scrape_until` returns."""
    for t in floods:
        t.start()
    time.sleep(settle)
    answers = scrape_until(e, headers, until, limit, period, timeout)
    for t in floods:
        t.join(5)
    return answers


def case_auth_flood(c):
    e, _, _ = auth_exporter(c)
    wrong = {"Authorization": basic("prom", "wrong-password")}
    right = {"Authorization": basic("prom", "right-password")}
    stop = time.monotonic() + 6.0
    flood_codes = {}
    lock = threading.Lock()

    def flood():
        n = 0
        while time.monotonic() < stop and n < 3000:
            n += 1
            st = timed_get(e, wrong, "127.0.0.2", 2)[0]
            with lock:
                flood_codes[st] = flood_codes.get(st, 0) + 1

    threads = [threading.Thread(target=flood, daemon=True) for _ in range(8)]
    scrapes, _ = scrape_during(threads, 0.3, e, right, stop - 0.2, 40, 0.25, 3)
    ok = scrapes.count(200)
    c.expect(
        scrapes and ok >= 0.9 * len(scrapes),
        f"scraper: {ok}/{len(scrapes)} scrapes 200 (others {sorted(set(s for s in scrapes if s != 200), key=str)})"
        f" during a flood from 127.0.0.2 answered {dict(sorted(flood_codes.items(), key=str))}",
    )


def case_auth_flood_many(c):
    """Review of the fix for [4]: wrong passwords from 20 addresses at bcrypt cost 12 (~0.2 s a
    check, more than the server can do) must not park the workers: a scraper whose login is
    cached is answered at once, and /-/healthy too."""
    e, _, _ = auth_exporter(c, cost=12)
    right = {"Authorization": basic("prom", "right-password")}
    first = e.request("GET", "/metrics", right, source="127.0.0.1", timeout=5)[0]  # cached from here on
    stop = time.monotonic() + 6.0

    def flood(source):
        n = 0
        while time.monotonic() < stop and n < 500:
            n += 1
            try:
                e.request("GET", "/metrics", {"Authorization": basic("prom", "wrong")}, source=source, timeout=3)
            except OSError:
                pass

    threads = [threading.Thread(target=flood, args=(f"127.0.0.{10 + i // 2}",), daemon=True) for i in range(40)]
    answers, slow = scrape_during(threads, 0.5, e, right, stop - 0.3, 30, 0.2, 5)
    worst = max(slow) if slow else float("inf")
    c.expect(
        first == 200 and answers and answers.count(200) == len(answers) and worst < 1.0,
        f"cached scraper during a flood from 20 addresses at cost 12: {answers.count(200)}/{len(answers)} "
        f"answered 200, slowest {fmt(worst * 1000, ' ms', 0)} (want all, each < 1 s)",
    )


def case_auth_reload_cache(c):
    """Optional part of [4]: a web config rewrite that keeps the users must not cost a bcrypt."""
    e, web, h = auth_exporter(c, cost=13)  # ~0.4 s a check: one bcrypt stands out of any load
    right = {"Authorization": basic("prom", "right-password")}
    wrong = {"Authorization": basic("prom", "wrong-password")}

    def timed(headers, source):
        t = time.monotonic()
        st, hdrs, _ = e.request("GET", "/-/healthy", headers, source=source)
        return st, hdrs, time.monotonic() - t

    timed(right, "127.0.0.6")  # the first check is a bcrypt; from now on it is cached
    after_reload, bcrypts = [], []
    reloaded = 0
    for i in range(3):
        time.sleep(1.2)
        write(
            web,
            f'http_server_config:\n  headers: {{Content-Security-Policy: "default-src v{i}"}}\n'
            f"basic_auth_users:\n  prom: {h}\n",
        )
        time.sleep(1.2)
        st, hdrs, dt = timed(right, "127.0.0.6")
        reloaded += hdrs.get("content-security-policy") == f"default-src v{i}"
        after_reload.append(dt)
        time.sleep(0.2)
        bcrypts.append(timed(wrong, "127.0.0.5")[2])  # a bcrypt at the same moment, for scale
    b, a = median(bcrypts), median(after_reload)
    c.expect(reloaded == 3, f"{reloaded}/3 rewrites applied (header seen)")
    c.expect(
        a < 0.25 * b,
        f"first correct request after a reload keeping the users: median {a * 1000:.1f} ms "
        f"vs a bcrypt {b * 1000:.1f} ms (want < 25 %)",
    )


# 5. auth_timing


def case_auth_timing(c):
    e, _, _ = auth_exporter(c)
    unknown = {"Authorization": basic("nobody", "wrong-password")}
    known = {"Authorization": basic("prom", "wrong-password")}
    times = {"unknown": [], "known": []}
    codes = {"unknown": [], "known": []}
    for _ in range(15):
        for kind, headers, source in [("unknown", unknown, "127.0.0.3"), ("known", known, "127.0.0.4")]:
            st, dt = timed_get(e, headers, source)
            times[kind].append(dt)
            codes[kind].append(st)
            time.sleep(0.15)
    mu, mk = median(times["unknown"]), median(times["known"])
    c.expect(
        all(s == 401 for s in codes["unknown"] + codes["known"]),
        f"answers {sorted(set(map(str, codes['unknown'] + codes['known'])))} (want 401)",
    )
    c.expect(mu >= 0.5 * mk, f"median unknown user {mu * 1000:.1f} ms vs known user {mk * 1000:.1f} ms (want >= 50 %)")


# Second review (issue #41)

# [5] auth_flood_blocks


def case_auth_flood_blocks(c):
    """A shared bcrypt budget: wrong passwords from 20 addresses (bcrypt cost 10) must not lock
    out a scraper whose login is not cached yet (a fresh start): trying once a second, it is
    served within 3 tries, and never refused more than twice in a row."""
    e, _, _ = auth_exporter(c, cost=10)
    right = {"Authorization": basic("prom", "right-password")}
    wrong = {"Authorization": basic("prom", "wrong-password")}
    stop = time.monotonic() + 6.0
    codes = {}
    lock = threading.Lock()

    def flood(source):
        n = 0
        while time.monotonic() < stop and n < 2000:
            n += 1
            st = timed_get(e, wrong, source, 3)[0]
            with lock:
                codes[st] = codes.get(st, 0) + 1

    sources = [f"127.0.0.{40 + i}" for i in range(20)]
    threads = [threading.Thread(target=flood, args=(s,), daemon=True) for s in sources for _ in range(3)]
    answers, _ = scrape_during(threads, 0.7, e, right, stop - 0.2, 5, 1.0, 3)
    first = next((i + 1 for i, st in enumerate(answers) if st == 200), None)
    run = worst = 0
    for st in answers:
        run = 0 if st == 200 else run + 1
        worst = max(worst, run)
    c.expect(sum(codes.values()) > 100, f"the flood from 20 addresses answered {dict(sorted(codes.items(), key=str))}")
    c.expect(
        first is not None and first <= 3 and worst <= 2,
        f"uncached scraper once a second during the flood: {answers}, served at try {first} "
        f"(want <= 3), {worst} refused in a row (want <= 2)",
    )
