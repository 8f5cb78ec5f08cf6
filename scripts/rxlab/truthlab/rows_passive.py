"""Rows 1-3: passive evidence must never keep a false `full` (issue #42).

1. conntrack_full: a download flows while the router drops every NEW connection; the overall
   verdict must leave `full` within 30 s although the download keeps receiving.
2. own_and_onlink: the only receiving connections go to the host's own public address and to an
   on-link IPv6 neighbour; the upstream is cut: `limited` about as fast as without passive
   evidence, never `full` through the outage.
3. stall_round: the router drops a running download: a probe round starts within about 2 s."""

import time

from .. import netns
from ..faultlab.addresses import V4_NET
from ..util import run
from .common import LITERAL, Result, check_agrees, states, timing, until, watch
from .net import ONLINK6, OWN4, STREAM_PORT

CT_BOUND = 30.0  # seconds from the change to leaving full (the bound)
# Seconds from the drop to the stall round, "about 2 s": two retransmission timeouts of the
# client's next request (200 + 400 ms) and at most one --passive.interval (2 s) until a read sees them.
STALL_BOUND = 3.0
NEW_DROP = {"forward_ct": ("forward", ["ct state new drop"])}


def receiving(scope="overall"):
    return lambda m: (m.value("reachability_passive_connections", scope=scope, state="receiving") or 0) > 0


def meter(bench, port=STREAM_PORT):
    """Named counters of the download's bytes toward the client, on the router."""
    text = (
        "table inet rxmeter {\n  counter stream {}\n  chain forward_meter {\n"
        "    type filter hook forward priority -300;\n"
        f"    tcp sport {port} counter name stream\n  }}\n}}\n"
    )
    netns.nft(bench.rtr, text)


def stream_bytes(bench):
    return bench.counters("rxmeter").get("stream", (0, 0))[1]


def forget_icmp(bench):
    """Echo flows would stay `established` in conntrack (one identifier per socket): forget them,
    as a full table would not have kept them."""
    for proto in ("icmp", "icmpv6"):
        run("ip", "netns", "exec", bench.rtr, "conntrack", "-D", "-p", proto, check=False)


def conntrack_full(bench):
    r = Result()
    flags = [*LITERAL, *timing(), "--passive.mode=prefer"]
    bench.start_exporter(*flags)
    meter(bench)
    client = bench.serve(bench.cli, "client", V4_NET, str(STREAM_PORT), expect="connected")
    r.want(until(bench, receiving(), 10) is not None, "the download was never seen receiving")
    healthy = watch(bench, 8)
    r.want(states(healthy) == "full", f"healthy: {states(healthy)} (want full throughout)")
    b0, t0 = stream_bytes(bench), time.time()
    bench.fault("rxct", NEW_DROP)
    forget_icmp(bench)
    took = until(bench, lambda m: m.verdict("overall")[0] != "full", CT_BOUND + 2, 0.2)
    state = bench.verdict()
    received = (stream_bytes(bench) - b0) / 1e6
    still = until(bench, receiving(), 1) is not None
    shown = f"{state[0]}({state[1]})" if state[1] else state[0]
    r.note(f"healthy full {len(healthy) == 1}; NEW dropped: {shown} after "
           + (f"{took:.1f}s" if took is not None else f">{CT_BOUND + 2:.0f}s")
           + f", download {received:.1f} MB during, receiving {still}")  # fmt: skip
    r.want(took is not None and took <= CT_BOUND, f"overall stayed full {time.time() - t0:.0f}s with NEW dropped")
    r.want(took is None or state[0] == "limited", f"left full for {state[0]}, want limited")
    r.want(received > 0.5, f"the download stalled ({received:.2f} MB): the row did not play")
    agrees, text = check_agrees(bench, [*LITERAL, *timing()], state[0])
    r.note(text)
    bench.undo("rxct")
    bench.stop(client)
    return r


def own_and_onlink(bench):
    r = Result()
    c, rt = bench.cli, bench.rtr
    run("ip", "-n", c, "addr", "add", f"{OWN4}/32", "dev", "lo")
    run("ip", "-n", rt, "addr", "add", f"{ONLINK6}/64", "dev", "rlan", "nodad")
    bench.serve(c, "stream", "9001", OWN4)
    bench.serve(rt, "stream", "9002", ONLINK6)
    flags = [*LITERAL, *timing()]
    cut = {"forward_cut": ("forward", ["drop"])}

    def outage(passive, bound=30.0):
        bench.start_exporter(*flags, *passive)
        clients = [
            bench.serve(c, "client", OWN4, "9001", expect="connected"),
            bench.serve(c, "client", ONLINK6, "9002", expect="connected"),
        ]
        if passive:
            time.sleep(4.5)  # two passive reads at the default 2 s
        healthy = watch(bench, 4)
        bench.fault("rxcut", cut)
        took = until(bench, lambda m: m.verdict("overall")[0] != "full", bound, 0.1)
        after = watch(bench, 6) if took is not None else []
        bench.undo("rxcut")
        for p in clients:
            bench.stop(p)
        return healthy, took, after

    _, ref, _ = outage([])
    bound = (ref or 10.0) + 10.0
    healthy, took, after = outage(["--passive.mode=prefer"], bound)
    m = bench.scrape()
    counted = m.total("reachability_passive_connections", scope="overall", state="receiving")
    r.note(
        f"cut: limited after {took:.1f}s with prefer"
        if took is not None
        else f"cut: still full after {bound:.0f}s with prefer"
    )
    r.note(f"{ref:.1f}s without passive" if ref is not None else "never left full without passive")
    r.note(f"healthy {states(healthy)}; after {states(after) or '-'}; own/on-link counted receiving: {counted:.0f}")
    r.want(states(healthy) == "full", f"healthy: {states(healthy)}")
    r.want(ref is not None, "without passive evidence the cut was never seen (the row did not play)")
    r.want(took is not None and ref is not None and took <= ref + 4, "prefer was more than 4 s slower than without")
    r.want(took is None or "full" not in [s for s, _ in after], f"full again during the outage: {states(after)}")
    return r


def stall_round(bench):
    r = Result()
    bench.start_exporter(*LITERAL, *timing(interval="10s"), "--passive.mode=prefer")
    client = bench.serve(bench.cli, "client", V4_NET, str(STREAM_PORT), expect="connected")
    r.want(until(bench, receiving(), 10) is not None, "the download was never seen receiving")
    time.sleep(1)
    m0 = bench.scrape()
    rechecks0, rounds0 = m0.total("reachability_passive_stall_rechecks_total"), m0.total("reachability_rounds_total")
    healthy = watch(bench, 6)
    m1 = bench.scrape()
    idle_rechecks = m1.total("reachability_passive_stall_rechecks_total") - rechecks0
    r.want(
        states(healthy) == "full" and idle_rechecks == 0, f"healthy: {states(healthy)}, {idle_rechecks:.0f} re-checks"
    )
    rechecks0, rounds0 = m1.total("reachability_passive_stall_rechecks_total"), m1.total("reachability_rounds_total")
    mark = len(bench.log_text())
    bench.fault(
        "rxstall", {"forward_stall": ("forward", [f"tcp sport {STREAM_PORT} drop", f"tcp dport {STREAM_PORT} drop"])}
    )
    recheck = until(bench, lambda m: m.total("reachability_passive_stall_rechecks_total") > rechecks0, 20, 0.05)
    rounds = bench.scrape().total("reachability_rounds_total") - rounds0
    logged = "connections stall: probing now" in bench.log_text()[mark:]
    state = bench.verdict()
    r.note(f"healthy {states(healthy)} with 0 re-checks: {idle_rechecks == 0}")
    r.note((f"stall round {recheck:.2f}s after the drop" if recheck is not None else "no stall round within 20s")
           + f" ({rounds:.0f} rounds, logged {logged}); verdict {state[0]}")  # fmt: skip
    r.want(recheck is not None and recheck <= STALL_BOUND, f"stall round not within {STALL_BOUND}s")
    r.want(logged or recheck is None, "no 'connections stall: probing now' in the log")
    agrees, text = check_agrees(bench, [*LITERAL, *timing()], state[0])
    r.note(text)
    bench.undo("rxstall")
    bench.stop(client)
    return r
