"""Rows 6-7.

6. not_run: the client loses its default routes for about 10 rounds: no probe failure is
   counted and the status page's Loss column shows no loss for the rounds not run.
7. one_family_portal: the router redirects IPv4 HTTP to a portal (302), IPv6 untouched: the
   ipv4 verdict is `portal`, with the default probe shape's one captive check per family
   (`--probe.http.each-family`) and with explicit probes pinned to each family."""

import re
import time

from .. import netns
from ..faultlab.addresses import LAB_NAME, V4_NET, V6_NET
from ..faultlab.faults import default_shape_flags
from ..util import run
from .common import LITERAL, Result, check_agrees, states, timing, until, watch
from .net import LAN4


def loss_column(html):
    """{probe: (failed, runs)} from the status page's probe table, read by its header (`Loss`:
    "N% (failed/runs)"); None for a probe whose cell shows no count."""
    heads = [re.sub(r"<[^>]+>", "", h).strip() for h in re.findall(r"<th[^>]*>(.*?)</th>", html, re.S)]
    if "Loss" not in heads or "Target" not in heads:
        return {}
    loss, target = heads.index("Loss"), heads.index("Target")
    out = {}
    for row in re.findall(r'<tr class="probe".*?</tr>', html, re.S):
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
        if len(cells) <= max(loss, target):
            continue
        counts = re.search(r"\((\d+)/(\d+)\)", cells[loss])
        name = re.sub(r"<[^>]+>", "", cells[target]).strip()
        out[name] = (int(counts.group(1)), int(counts.group(2))) if counts else None
    return out


def failures(m):
    return m.total("reachability_probe_failures_total")


def not_run(bench, seconds=10.0):
    r = Result()
    flags = [*LITERAL, *timing(interval="1s", timeout="500ms")]
    bench.start_exporter(*flags)
    time.sleep(3)
    before = loss_column(bench.get("/"))
    c = bench.cli
    run("ip", "-n", c, "route", "del", "default")
    run("ip", "-n", c, "-6", "route", "del", "default")
    t0 = time.time()
    time.sleep(1.0)  # a round in flight when the routes went may fail: that one ran
    m0, base = bench.scrape(), loss_column(bench.get("/"))
    f0, rounds0 = failures(m0), m0.total("reachability_rounds_total")
    seen = watch(bench, seconds - 1.0)
    m1 = bench.scrape()
    grew, rounds = failures(m1) - f0, m1.total("reachability_rounds_total") - rounds0
    during = loss_column(bench.get("/"))
    agrees, text = check_agrees(bench, flags, m1.verdict("overall")[0])
    run("ip", "-n", c, "route", "add", "default", "via", LAN4, "dev", "lan0", "metric", "100")
    run("ip", "-n", c, "-6", "route", "add", "default", "via", "2001:db8:42::1", "dev", "lan0", "metric", "100")
    back = until(bench, lambda m: m.verdict("overall")[0] == "full", 15)
    after = loss_column(bench.get("/"))
    # Loss the page shows for rounds not run: more failures at the outage's end than 1 s into it
    # (after the routes are back, a round that runs and fails is real loss: reported, not judged).
    lossy = {p: (base.get(p), during.get(p)) for p in during if during[p] and during[p][0] > (base.get(p) or (0, 0))[0]}
    r.note(f"{time.time() - t0:.0f}s without routes: overall {states(seen)}, {rounds:.0f} rounds, "
           f"failures +{grew:.0f}; Loss before/during/after {summary(before)} / {summary(during)} / {summary(after)}")  # fmt: skip
    r.note(text + (f"; back to full after {back:.1f}s" if back is not None else "; not full again within 15s"))
    r.want(bool(before) and bool(during), "the status page's Loss column could not be read")
    r.want(grew == 0, f"reachability_probe_failures_total grew by {grew:.0f} for rounds not run")
    r.want(not lossy, f"the Loss column shows loss for rounds not run: {lossy}")
    r.want(seen and seen[-1][0] == "none", f"overall {states(seen)}, want none")
    return r


def summary(col):
    failed = sum(v[0] for v in col.values() if v)
    runs = sum(v[1] for v in col.values() if v)
    return f"{failed}/{runs}"


def portal(bench, on):
    """The router DNATs the LAN's IPv4 TCP 80 to its portal (on) or not (off)."""
    netns.nft_delete(bench.rtr, "ip", "rxportal")
    if on:
        netns.nft(
            bench.rtr,
            "table ip rxportal {\n  chain pre_portal {\n    type nat hook prerouting priority dstnat;\n"
            f'    iifname "rlan" tcp dport 80 dnat to {LAN4}:8080\n  }}\n}}\n',
        )
    netns.flush_conntrack(bench.rtr)


def each_family_shape():
    out = []
    for f in default_shape_flags():
        if f == f"--probe.http=http://{LAB_NAME}/generate_204":
            f = f"--probe.http.each-family=http://{LAB_NAME}/generate_204"
        out.append(f)
    return out


PINNED = (
    "global: {interval: 1s, timeout: 500ms, fail_after: 2, recover_after: 2}\n"
    "probes:\n"
    f'  - {{name: captive4, type: http, target: "http://{LAB_NAME}/generate_204", family: ipv4}}\n'
    f'  - {{name: captive6, type: http, target: "http://{LAB_NAME}/generate_204", family: ipv6}}\n'
    f'  - {{name: secure, type: https, target: "https://{LAB_NAME}/generate_204"}}\n'
    f"  - {{name: echo4, type: icmp, target: {V4_NET}}}\n"
    f'  - {{name: echo6, type: icmp, target: "{V6_NET}"}}\n'
    f"  - {{name: resolver, type: dns, target: {LAB_NAME}}}\n"
)


def one_family_portal(bench):
    r = Result()
    bench.serve(bench.rtr, "portal", "8080")
    shapes = [("each-family", each_family_shape()), ("pinned", [f"--config.file={bench.config(PINNED)}"])]
    for label, flags in shapes:
        portal(bench, False)
        try:
            bench.start_exporter(*flags, ready=lambda m: m.verdict("ipv4")[0] == "full")
        except RuntimeError as e:
            r.note(f"{label}: {e}".splitlines()[0][:160])
            r.want(False, f"{label}: the exporter did not run healthy")
            continue
        healthy = watch(bench, 3, scope="ipv4")
        portal(bench, True)
        took = until(bench, lambda m: m.verdict("ipv4")[0] == "portal", 15)
        m = bench.scrape()
        v4, v6, overall = m.verdict("ipv4"), m.verdict("ipv6"), m.verdict("overall")
        agrees, text = check_agrees(bench, flags, v4[0], scope="ipv4")
        r.note(f"{label}: healthy ipv4 {states(healthy)}; portal: ipv4 {v4[0]}({v4[1]})"
               + (f" after {took:.1f}s" if took is not None else " (never portal in 15s)")
               + f", ipv6 {v6[0]}, overall {overall[0]}; {text}")  # fmt: skip
        r.want(states(healthy) == "full", f"{label}: healthy ipv4 {states(healthy)}")
        r.want(took is not None, f"{label}: ipv4 {v4[0]}({v4[1]}), want portal")
        bench.stop_exporter()
    portal(bench, False)
    return r
