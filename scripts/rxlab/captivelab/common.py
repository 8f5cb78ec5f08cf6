"""What the captive lab's rows share: timing, sampling the verdict until something holds, reading
the captive-portal series, `check` in a thread beside the daemon, and the hostile-text test."""

import os
import re
import threading
import time

from ..truthlab.common import Result, states, watch
from . import api

__all__ = ["Result", "states", "watch"]

INTERVAL, TIMEOUT = 5.0, 2.0  # the announce rows: the "one round" is measured against these
FAST_INTERVAL = 3.0  # the guard and hostile rows, whose rounds only pace the cases
SLACK = 1.0  # the API fetch beside the round, and sampling every 0.1 s


def one_round(interval=INTERVAL, timeout=TIMEOUT):
    """The most a change may take to show "within one round": the round that starts next, run
    to its end (all probes time out while captive), plus SLACK."""
    return interval + timeout + SLACK


def track(bench, predicate, timeout, step=0.1):
    """Samples the daemon until `predicate(scrape)` holds: (seconds or None, [(state, reason)] seen
    on the way, in order)."""
    t0, seen = time.time(), []
    while time.time() - t0 < timeout:
        try:
            m = bench.scrape()
        except OSError:
            time.sleep(step)
            continue
        v = m.verdict("overall")
        if not seen or seen[-1] != v:
            seen.append(v)
        if predicate(m):
            return time.time() - t0, seen
        time.sleep(step)
    return None, seen


def wait_file(path, timeout, step=0.05):
    """The time a file appeared at `path`, or None within `timeout`."""
    end = time.time() + timeout
    while time.time() < end:
        if os.path.lexists(path):
            return time.time()
        time.sleep(step)
    return None


def rounds_later(bench, n, timeout):
    """Waits until `n` more rounds completed (reachability_rounds_total); False on timeout."""
    start, end = bench.scrape().total("reachability_rounds_total"), time.time() + timeout
    while time.time() < end:
        try:
            if bench.scrape().total("reachability_rounds_total") >= start + n:
                return True
        except OSError:
            pass
        time.sleep(0.1)
    return False


def portal_series(m, interface="lan0"):
    """The captive-portal series of an interface: info labels, captive, seconds, bytes."""
    info = [labels for labels, v in m.series("reachability_captive_portal_info", interface=interface) if v == 1]
    return {
        "info": info[0] if len(info) == 1 else (info or None),
        "captive": m.value("reachability_captive_portal_captive", interface=interface),
        "seconds": m.value("reachability_captive_portal_seconds_remaining", interface=interface),
        "bytes": m.value("reachability_captive_portal_bytes_remaining", interface=interface),
    }


def errors(m):
    """{reason: count} of reachability_captive_portal_api_errors_total."""
    out = {}
    for labels, v in m.series("reachability_captive_portal_api_errors_total"):
        out[labels.get("reason", "")] = out.get(labels.get("reason", ""), 0) + v
    return out


def grown(before, after):
    return {k: after[k] - before.get(k, 0) for k in after if after[k] > before.get(k, 0)}


def entry(js, interface="lan0"):
    """The `captive_portals` entry of `check`'s JSON for an interface (None without one)."""
    for e in (js or {}).get("captive_portals") or []:
        if e.get("interface") == interface:
            return e
    return None


class Background(threading.Thread):
    """Runs `fn()` in a thread (a `check` beside the daemon); `result()` waits for its value."""

    def __init__(self, fn):
        super().__init__(daemon=True)
        self.fn, self.value, self.error = fn, None, None
        self.start()

    def run(self):
        try:
            self.value = self.fn()
        except Exception as e:  # handed to the row
            self.error = e

    def result(self, timeout=60):
        self.join(timeout)
        if self.error:
            raise self.error
        return self.value


def check_line(code, js, err):
    """What a `check` said, in a few words: exit, state(reason), the lan0 entry."""
    if js is None:
        return f"check exit {code}: {str(err).strip()[:160]}"
    e = entry(js)
    portal = "no captive_portals entry" if e is None else (
        f"captive_portals[lan0] source={e.get('source')} captive={e.get('captive')} "
        f"user_portal_url={str(e.get('user_portal_url'))[:60]} error={str(e.get('error'))[:80]}"
    )  # fmt: skip
    return f"check exit {code} {js.get('state')}({js.get('reason')}); {portal}"


CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def hostile_labels(m, limit=2048):
    """Label values of a scrape that carry hostile text: the mark, control characters, or more
    than `limit` bytes. Empty when clean."""
    bad = []
    for name, labels, _ in m.samples:
        for k, v in labels.items():
            if api.MARK in v or CONTROL.search(v) or len(v.encode()) > limit:
                bad.append(f"{name}{{{k}={v[:60]!r}…}}")
    if api.MARK in m.text and not bad:
        bad.append("the mark is in the scrape outside any label")
    return bad
