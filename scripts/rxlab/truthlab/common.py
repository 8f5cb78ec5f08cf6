"""What the truth lab's rows share: probe sets, timing flags, sampling a verdict over time and
comparing the one-shot `check` with the daemon."""

import time

from ..faultlab.addresses import V4_NET, V6_NET

# The lab internet by address, both families, captive checks and echoes.
LITERAL = [
    f"--probe.http=http://{V4_NET}/generate_204",
    f"--probe.http=http://[{V6_NET}]/generate_204",
    f"--probe.icmp={V4_NET}",
    f"--probe.icmp={V6_NET}",
]


def timing(interval="2s", timeout="1s", fail_after=3, recover_after=2):
    return [
        f"--probe.interval={interval}",
        f"--probe.timeout={timeout}",
        f"--probe.fail-after={fail_after}",
        f"--probe.recover-after={recover_after}",
    ]


def watch(bench, seconds, scope="overall", step=0.2):
    """Samples `scope`'s (state, reason) for `seconds`: the list of distinct values seen, in order."""
    seen, end = [], time.time() + seconds
    while time.time() < end:
        try:
            v = bench.verdict(scope)
        except OSError:
            v = ("unreachable", "")
        if not seen or seen[-1] != v:
            seen.append(v)
        time.sleep(step)
    return seen


def until(bench, predicate, timeout, step=0.1):
    """Seconds until `predicate(scrape)` holds, or None within `timeout`."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        try:
            if predicate(bench.scrape()):
                return time.time() - t0
        except OSError:
            pass
        time.sleep(step)
    return None


def states(seen):
    return "→".join(s for s, _ in seen)


def check_agrees(bench, flags, daemon_state, scope=None):
    """Runs `check` with `flags`; returns (agrees, text). `scope`: None for overall, 'ipv4'/'ipv6'
    for a family, ('uplink', NAME) for an uplink."""
    code, js, err = bench.check(*flags)
    if js is None:
        return False, f"check exit {code}: {err.strip()[:120]}"
    if scope is None:
        got = js.get("state")
    elif isinstance(scope, tuple):
        got = (js.get("uplinks") or {}).get(scope[1], {}).get("state")
    else:
        got = (js.get("families") or {}).get(scope, {}).get("state")
    return (
        got == daemon_state,
        f"check {got} vs daemon {daemon_state} ({'agree' if got == daemon_state else 'DISAGREE'})",
    )


class Result:
    """A row's outcome: problems (empty = PASS) and measured details."""

    def __init__(self):
        self.problems, self.details = [], []

    def note(self, text):
        self.details.append(text)

    def want(self, ok, problem):
        if not ok:
            self.problems.append(problem)
        return ok
