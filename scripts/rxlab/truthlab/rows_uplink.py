"""Rows 4-5: an uplink's own pace must not invent a verdict (issue #42).

4. budget_restart: an uplink with a tiny budget is spent; after a clean restart its verdict is
   the last decided one (history) or `unknown`, never `limited (no_probes)`; the budgets file
   after the clean stop holds what nftables counted within a few %.
5. long_interval_backup: a backup probed every 20 s (rounds every 1 s, fail_after 3) loses one of
   its rounds: it stays `full`; really down, it flips after 3 of its own rounds."""

import os
import time

from .. import netns
from ..faultlab.addresses import V4_NET
from .common import Result, check_agrees, states, until, watch
from .net import SEC4, SEC6

BUDGET_TOLERANCE = 0.05
BACKUP_INTERVAL = 10.0

PROBES = (
    "probes:\n"
    f'  - {{name: web4, type: http, target: "http://{V4_NET}/generate_204"}}\n'
    f"  - {{name: echo4, type: icmp, target: {V4_NET}}}\n"
)


def link_meter(bench):
    """Counters of every IP packet of the client's second link's addresses, both ways, at the
    router (neighbour discovery left out: the exporter does not send it)."""
    nd = "icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert, nd-router-solicit, nd-router-advert } return"
    netns.nft(
        bench.rtr,
        "table inet rxlink {\n  counter link_in {}\n  counter link_out {}\n"
        "  chain pre_link {\n    type filter hook prerouting priority -300;\n"
        f'    iifname "rsec" {nd}\n'
        f'    iifname "rsec" ip saddr {SEC4[1]} counter name link_in\n'
        f'    iifname "rsec" ip6 saddr {SEC6[1]} counter name link_in\n  }}\n'
        "  chain post_link {\n    type filter hook postrouting priority 300;\n"
        f'    oifname "rsec" {nd}\n'
        f'    oifname "rsec" ip daddr {SEC4[1]} counter name link_out\n'
        f'    oifname "rsec" ip6 daddr {SEC6[1]} counter name link_out\n  }}\n}}\n',
    )


def link_bytes(bench):
    c = bench.counters("rxlink")
    return sum(c.get(n, (0, 0))[1] for n in ("link_in", "link_out"))


def read_budgets(path):
    """{uplink: used bytes} of the exporter's budgets file."""
    out = {}
    try:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 4:
                    out[parts[0]] = int(parts[2])
    except (OSError, ValueError):
        pass
    return out


def budget_restart(bench, budget=1500):
    r = Result()
    history = os.path.join(bench.work, "history")
    os.makedirs(history, exist_ok=True)
    config = bench.config(
        "global: {interval: 1s, timeout: 500ms, fail_after: 3, recover_after: 2}\n"
        "uplinks: [up]\n"
        f"uplink_settings:\n  up: {{budget: {budget}, budget_period: 1h}}\n" + PROBES
    )
    flags = [f"--config.file={config}", f"--history.dir={history}"]
    link_meter(bench)
    before = link_bytes(bench)
    up_full = lambda m: m.verdict("up")[0] == "full"  # noqa: E731
    bench.start_exporter(*flags, ready=lambda m: up_full(m) and m.verdict("overall")[0] == "full")

    def exhausted(m):
        return any(lab.get("cause") == "exhausted" for lab, _ in m.series(
            "reachability_uplink_probe_interval_seconds", interface="up"))  # fmt: skip

    spent = until(bench, exhausted, 20, 0.2)
    last = bench.verdict("up")
    time.sleep(1.5)  # a fault check or round in flight ends
    code = bench.stop_exporter()
    counted = link_bytes(bench) - before
    saved = read_budgets(os.path.join(history, "budgets")).get("up")
    r.want(spent is not None, "the budget was never spent (no cause=exhausted within 20 s)")
    r.want(code == 0, f"the clean stop exited {code}")
    off = (saved - counted) / counted if saved is not None and counted else None
    r.want(off is not None and abs(off) <= BUDGET_TOLERANCE,
           f"budgets file {saved} B vs nftables {counted} B (want within {BUDGET_TOLERANCE:.0%})")  # fmt: skip
    bench.start_exporter(*flags, ready=lambda m: m.verdict("overall")[0] is not None)
    seen = watch(bench, 6, scope="up")
    bad = [v for v in seen if v == ("limited", "no_probes") or v[0] not in ("full", "unknown")]
    still_spent = exhausted(bench.scrape())
    r.note(f"spent after {spent:.1f}s" if spent is not None else "not spent")
    r.note(f"up {last[0]} before the stop; budgets file {saved} B vs nftables {counted} B"
           + (f" ({off:+.1%})" if off is not None else ""))  # fmt: skip
    r.note("check: not run (one round knows no budget or history)")
    r.note(f"after restart: {'→'.join(f'{s}({w})' if w else s for s, w in seen)}, still spent {still_spent}")
    r.want(not bad, f"after the restart up was {bad[0][0]}({bad[0][1]})" if bad else "")
    bench.stop_exporter()
    return r


def backup_rounds(m):
    return m.total("reachability_probes_total", target="echo4@backup")


def next_round(bench, after, timeout):
    """Seconds until echo4@backup has run more than `after` rounds (None within `timeout`)."""
    return until(bench, lambda m: backup_rounds(m) > after, timeout, 0.1)


def long_interval_backup(bench):
    r = Result()
    config = bench.config(
        "global: {interval: 1s, timeout: 500ms, fail_after: 3, recover_after: 2}\n"
        "uplinks: [lan0, backup]\n"
        f"uplink_settings:\n  backup: {{interval: {BACKUP_INTERVAL:.0f}s}}\n" + PROBES
    )
    flags = [f"--config.file={config}"]
    ready = lambda m: m.verdict("backup")[0] == "full" and m.verdict("overall")[0] == "full"  # noqa: E731
    drop = {"forward_backup": ("forward", ['iifname "rsec" drop'])}

    def wait_own_round(timeout=BACKUP_INTERVAL + 6):
        n = backup_rounds(bench.scrape())
        if next_round(bench, n, timeout) is None:
            raise RuntimeError(f"no round of the backup within {timeout:.0f}s")
        return backup_rounds(bench.scrape())

    bench.start_exporter(*flags, ready=ready)
    # Healthy: a whole own interval stays full.
    n = wait_own_round()
    t_round = time.time()
    healthy = watch(bench, BACKUP_INTERVAL - 3, scope="backup")
    r.want(states(healthy) == "full", f"healthy: backup {states(healthy)}")
    # One lost round: the drop covers exactly the next own round.
    time.sleep(max(0.0, t_round + BACKUP_INTERVAL - 1.5 - time.time()))
    fails0 = bench.scrape().total("reachability_probe_failures_total", target="echo4@backup")
    bench.fault("rxbackup", drop)
    t_drop = time.time()
    lost = next_round(bench, n, 8)
    time.sleep(0.7)  # the round's probes time out (500 ms)
    bench.undo("rxbackup")
    dropped_for = time.time() - t_drop
    m = bench.scrape()
    lost_rounds = backup_rounds(m) - n
    failed = m.total("reachability_probe_failures_total", target="echo4@backup") - fails0
    after = watch(bench, BACKUP_INTERVAL + 2, scope="backup")  # until its next own round (a good one)
    r.note(f"one lost round (drop {dropped_for:.1f}s, {lost_rounds:.0f} own round, {failed:.0f} echo failure): "
           f"backup {states(after)}")  # fmt: skip
    r.want(lost is not None and failed >= 1, "the drop missed the backup's round (the row did not play)")
    r.want(states(after) == "full", f"one lost round of its own flipped the backup: {states(after)}")
    if bench.verdict("backup")[0] != "full":
        bench.start_exporter(*flags, ready=ready)
    # Really down: the drop starts just before an own round; flips after 3 failed own rounds.
    n = wait_own_round()
    time.sleep(max(0.0, BACKUP_INTERVAL - 2.0))
    bench.fault("rxbackup", drop)
    took = until(bench, lambda m: m.verdict("backup")[0] != "full", 3 * BACKUP_INTERVAL + 15, 0.2)
    m = bench.scrape()
    own = backup_rounds(m) - n
    state = m.verdict("backup")
    r.note(f"really down: backup {state[0]}({state[1]}) after "
           + (f"{took:.1f}s, {own:.0f} own rounds since the cut" if took is not None else f">{3 * BACKUP_INTERVAL + 15:.0f}s"))  # fmt: skip
    r.want(took is not None and state[0] == "limited", "the backup never flipped to limited")
    r.want(took is None or own >= 3, f"flipped after {own:.0f} own rounds (want 3)")
    if took is not None:
        agrees, text = check_agrees(bench, flags, state[0], scope=("uplink", "backup"))
        r.note(text)
    bench.undo("rxbackup")
    overall = m.verdict("overall")[0]
    r.want(overall == "full", f"overall {overall} while only the backup was down")
    return r
