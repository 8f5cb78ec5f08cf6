"""The faults as nft rulesets and the exporter's probe flags the scenarios use."""

from .addresses import LAB_NAME, V4_DNS, V4_NET, V6_DNS, V6_NET


def ruleset(rule):
    """An nft ruleset with one input-hook rule (upstream side: what the client sends in)."""
    return f"table inet rxlab {{\n  chain input {{\n    type filter hook input priority 0;\n    {rule}\n  }}\n}}\n"


DROP_ALL = ruleset('iifname "u1" drop')
DROP_V6 = ruleset('meta nfproto ipv6 iifname "u1" drop')
DROP_PING = ruleset("icmp type echo-request drop\n    icmpv6 type echo-request drop")


def loss(percent):
    # Neighbour discovery is spared: a lost solicitation stalls IPv6 for a whole retransmit
    # second, which would turn 5% packet loss into bursts.
    return ruleset(
        "icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert } accept\n    "
        f'iifname "u1" numgen random mod 100 < {percent} drop'
    )


def probe_flags(interval="1s", timeout="500ms"):
    return [
        f"--probe.http=http://{V4_NET}/generate_204",
        f"--probe.http=https://{V4_NET}/generate_204",
        f"--probe.http=http://[{V6_NET}]/generate_204",
        f"--probe.dns={LAB_NAME}@{V4_DNS}",
        f"--probe.dns={LAB_NAME}@{V6_DNS}",
        f"--probe.icmp={V4_NET}",
        f"--probe.icmp={V6_NET}",
    ] + timing_flags(interval, timeout)


def timing_flags(interval="1s", timeout="500ms"):
    return [
        f"--probe.interval={interval}",
        f"--probe.timeout={timeout}",
        "--probe.fail-after=2",
        "--probe.recover-after=2",
    ]


def default_shape_flags():
    """The product's default probe set (docs/flags.md, "Default probes") pointed at lab addresses:
    names through the system resolver, which in the router phase is the router's dnsmasq."""
    return [
        f"--probe.http=http://{LAB_NAME}/generate_204",
        f"--probe.http=https://{LAB_NAME}/generate_204",
        f"--probe.icmp={V4_NET}",
        f"--probe.icmp={V6_NET}",
        f"--probe.dns={LAB_NAME}",
    ] + timing_flags()
