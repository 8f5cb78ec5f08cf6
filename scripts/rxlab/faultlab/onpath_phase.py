"""The onpath phase (issue #29): a box on the path answers in place of the internet. Four
classes of imitation, each played with real software on the router of onpathnet.py,
each watched healthy and with the router's uplink cut, each through the product's default
probe shape (faults.default_shape_flags(): captive HTTP and HTTPS by name through the system
resolver, ICMP to the lab's IPv4 and IPv6 addresses, DNS by name) and through explicit probes
for the class:

1. forged echo: with the uplink cut, the router answers every echo request itself (nft DNAT to
   its own address, both families); its replies arrive with TTL / hop limit 64 where the real
   target, one router away, is seen at 63. Explicit: ICMP to both lab addresses.
2. TCP middlebox: with the uplink cut, the router redirects every TCP connection (any address,
   any port) to a listener that accepts and never sends. Explicit: `--probe.tcp` to a banner
   server upstream (port 22, it sends `SSH-2.0-lab`), both families; and, as a configuration
   file, the same with `tcp: {expect: '^SSH-2\\.0-'}` (the row fails while the binary refuses
   that key).
3. transparent caching proxy: squid intercepting TCP 80 on the router (always, healthy too)
   with a memory cache; the upstream page is a 200 with `Cache-Control: public, max-age=600`;
   the explicit probe is that page with `--probe.http.expect-body` and no HTTPS probe (the set
   whose verdict a cache answer would make `full`). The cache is warm (the probes' own requests,
   checked in squid's log) when the uplink is cut.
4. DNS64 + NAT64 on an IPv6-only client: unbound's dns64 with the network-specific prefix
   fd64:ff9b:1::/96 forwarding to an A-only upstream, tayga translating; the default shape
   (names through that unbound: every address is a synthesized one) and, as a configuration
   file, a DNS probe asking AAAA through the system resolver plus a captive check of a name
   that has only an IPv4 address upstream (its traffic crosses tayga).

Each row: the expected verdict, the daemon's verdict and reason (reachability_connectivity_info)
and `reachability_exporter check --output=json` with the same flags (its exit status must match
its state, and its state the daemon's), the detection time after the cut (the daemon's own
transition timestamp) and the recovery time. Expectations: healthy is `full`; with the uplink
cut never `full` (no scrape may show it once the fault was detected), `limited` or `portal`
with a reason that names the imitation for the explicit probes (`forged_reply`, `intercepted`
or `banner_mismatch`, `cached` or the failure a no-cache request gets: `http_status`,
`timeout`), and for the default shape that reason or the plain failure of the other probes
(`timeout`, `unreachable`); NAT64 is `full` healthy (not `portal (private_address)`) and
`limited` cut off. A witness from the client (a raw echo's TTL, a banner read, curl with and
without `Cache-Control: no-cache`, kdig AAAA) must show each imitation as designed, or the
rows fail for the lab's sake.
"""

import time

from ..util import log
from . import onpath_config as cfg
from .addresses import PORT
from .faults import default_shape_flags, timing_flags
from .onpath_run import OnpathClass, ProbeSet, run_class
from .onpathnet import OnpathNet

SSH_V4, SSH_V6 = f"{cfg.BANNER_V4}:{cfg.BANNER_PORT}", f"[{cfg.BANNER_V6}]:{cfg.BANNER_PORT}"
PAGE = f"http://{cfg.PAGE_V4}/page"


def phase_onpath(r, lab, args):
    """client / client6 -- router (dnsmasq, unbound dns64, tayga, squid, nft) -- inet (issue #29)."""
    onet = OnpathNet(lab)
    try:
        onet.build()
        lab.enter(onet.client)
        onet.start_daemons()
        log(
            f"  client {cfg.CLIENT_V4} {cfg.CLIENT_V6} (resolver dnsmasq {cfg.LAN_V4}); client6 {cfg.CLIENT6_V6} only "
            f"(resolver unbound dns64 {cfg.LAN6_V6}, NAT64 {cfg.NAT64_PREFIX}/96 by tayga)"
        )
        timing = timing_flags()
        classes = [
            forged_echo(onet, timing),
            tcp_middlebox(onet, timing),
            caching_proxy(onet, timing),
            dns64_nat64(onet),
        ]
        for i, c in enumerate(classes):
            started = time.time()
            run_class(r, lab, onet, c, PORT + 40 + 10 * i)
            log(f"  {c.name}: {time.time() - started:.0f}s")
    finally:
        lab.enter(lab.client)
        onet.close()


def forged_echo(onet, timing):
    """Class 1: the router forges echo replies; the witness reads their TTL / hop limit."""

    def witness(phase):
        want = "64" if phase == "down" else "63"
        v4, v6 = onet.witness("echo", cfg.WEB_V4), onet.witness("echo", cfg.WEB_V6)
        ok = v4.endswith(f" {want}") and v6.endswith(f" {want}")
        counters = f"; router forge rules {onet.counters(cfg.FORGE_TABLE)}" if phase == "down" else ""
        return ok, f"echo {cfg.WEB_V4}: {v4}, {cfg.WEB_V6}: {v6} (want {want}){counters}"

    return OnpathClass(
        "echo",
        "forged echo",
        onet.client,
        [
            ProbeSet("default", default_shape_flags(), down_reasons=("forged_reply", "timeout", "unreachable")),
            ProbeSet(
                "explicit",
                [f"--probe.icmp={cfg.WEB_V4}", f"--probe.icmp={cfg.WEB_V6}"] + timing,
                down_reasons=("forged_reply",),
            ),
        ],
        fault=onet.forge_echo,
        witness=witness,
    )


def tcp_middlebox(onet, timing):
    """Class 2: the router completes every TCP handshake itself; the witness reads banners."""

    def witness(phase):
        ssh, canary = onet.witness("banner", cfg.BANNER_V4, "22"), onet.witness("banner", cfg.BANNER_V4, "1")
        ssh6 = onet.witness("banner", cfg.BANNER_V6, "22")
        if phase == "down":
            ok = ssh == ssh6 == canary == "connected, silent"
        else:
            ok = cfg.BANNER in ssh and cfg.BANNER in ssh6 and canary.startswith("no connection")
        counters = f"; router redirect {onet.counters(cfg.BOX_TABLE)}" if phase == "down" else ""
        return ok, f"tcp {SSH_V4}: {ssh}; {SSH_V6}: {ssh6}; {cfg.BANNER_V4}:1: {canary}{counters}"

    tcp_expect = {"expect": r"^SSH-2\.0-"}
    return OnpathClass(
        "tcp",
        "TCP middlebox",
        onet.client,
        [
            ProbeSet("default", default_shape_flags(), down_reasons=("intercepted", "timeout", "unreachable")),
            ProbeSet(
                "explicit",
                [f"--probe.tcp={SSH_V4}", f"--probe.tcp={SSH_V6}"] + timing,
                down_reasons=("intercepted",),
            ),
            ProbeSet(
                "tcp-expect",
                config=[
                    {"name": "ssh-v4", "type": "tcp", "target": SSH_V4, "tcp": tcp_expect},
                    {"name": "ssh-v6", "type": "tcp", "target": SSH_V6, "tcp": tcp_expect},
                ],
                down_reasons=("banner_mismatch", "intercepted"),
            ),
        ],
        fault=onet.middlebox,
        witness=witness,
    )


def caching_proxy(onet, timing):
    """Class 3: squid intercepts and caches plain HTTP; the witness asks with and without
    no-cache and counts squid's hits since its last look."""
    mark = {}

    def witness(phase):
        plain = onet.curl(PAGE)
        fresh = onet.curl(PAGE, headers=("Cache-Control: no-cache", "Pragma: no-cache"))
        carried = onet.squid_log(mark.get("at", 0))
        mark["at"] = onet.squid_log_mark()
        hits = carried.count("TCP_MEM_HIT/200")
        misses = carried.count("TCP_MISS/200") + carried.count("TCP_REFRESH")
        if phase == "down":
            ok = cfg.PAGE_BODY[:20] in plain and fresh.startswith("503") and hits > 0
        else:
            ok = cfg.PAGE_BODY[:20] in plain and cfg.PAGE_BODY[:20] in fresh and hits > 0
        return ok, (
            f"curl {PAGE}: {plain}; with Cache-Control: no-cache: {fresh}; squid since the last look: "
            f"{hits} TCP_MEM_HIT/200, {misses} misses/refreshes; redirect {onet.counters(cfg.CACHE_TABLE)}"
        )

    def squid_up():
        onet.start_squid()
        mark["at"] = onet.squid_log_mark()

    return OnpathClass(
        "cache",
        "caching proxy",
        onet.client,
        [
            ProbeSet(
                "default",
                default_shape_flags(),
                down_reasons=("cached", "http_status", "timeout", "unreachable"),
            ),
            ProbeSet(
                "explicit",
                [f"--probe.http={PAGE}", f"--probe.http.expect-body={cfg.PAGE_BODY}"] + timing,
                down_reasons=("cached", "http_status", "timeout"),
            ),
        ],
        setup=squid_up,
        teardown=onet.stop_squid,
        witness=witness,
    )


def dns64_nat64(onet):
    """Class 4: DNS64 + NAT64 on the IPv6-only client; the witness asks AAAA and fetches an
    IPv4-only name."""

    def witness(phase):
        aaaa = onet.dig(cfg.LAN6_V6, cfg.LAB_NAME, "AAAA")
        wka = onet.dig(cfg.LAN6_V6, "ipv4only.arpa", "AAAA")
        web = onet.curl(f"http://{cfg.V4ONLY_NAME}/generate_204", ns=onet.client6)
        synthesized = cfg.nat64(cfg.WEB_V4) in aaaa and cfg.nat64("192.0.0.170") in wka
        ok = synthesized and (web == "204" if phase == "healthy" else web.startswith("curl exit"))
        return (
            ok,
            f"client6: AAAA {cfg.LAB_NAME} {aaaa}; ipv4only.arpa {wka}; http://{cfg.V4ONLY_NAME}/generate_204 {web}",
        )

    return OnpathClass(
        "nat64",
        "DNS64+NAT64",
        onet.client6,
        [
            ProbeSet("default", default_shape_flags(), down_states=("limited",)),
            ProbeSet(
                "explicit",
                config=[
                    {"name": "aaaa", "type": "dns", "target": cfg.LAB_NAME, "dns": {"record_type": "AAAA"}},
                    {"name": "v4only-http", "type": "http", "target": f"http://{cfg.V4ONLY_NAME}/generate_204"},
                ],
                down_states=("limited",),
            ),
        ],
        witness=witness,
    )
