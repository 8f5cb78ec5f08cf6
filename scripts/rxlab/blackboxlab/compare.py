"""Two /probe answers side by side: the metric names only one of them has, and the values that
must agree. EXPECTED is the one list of the differences the lab accepts, each with why; every
other difference fails its case. A difference that looks like a wrong value or a wrong success in
reachability_exporter does not belong in EXPECTED: it is reported."""

from dataclasses import dataclass, field

from ..exposition import Exposition

# Metrics whose values are times: only their presence (and their label sets) is compared.
TIMING = {
    "probe_duration_seconds",
    "probe_dns_lookup_time_seconds",
    "probe_http_duration_seconds",
    "probe_icmp_duration_seconds",
    "probe_dns_duration_seconds",
    "probe_grpc_duration_seconds",
}


@dataclass
class Expected:
    kind: str  # "only_blackbox", "only_ours", "value" (a value metric that differs)
    metric: str
    why: str
    # When the difference is the expected one: a predicate of the Context. None: always.
    when: object = None
    seen: int = 0


@dataclass
class Context:
    """What an Expected's predicate may look at: the module (its prober and text) and both
    answers as families ({name: {labels: value}})."""

    prober: str
    block: str
    bb: dict
    ours: dict
    bb_reason: str  # why blackbox failed the probe (its debug log), "" when it did not

    def success(self, which):
        return next(iter(getattr(self, which).get("probe_success", {}).values()), None)


def _h2(x):
    return list(x.bb["probe_http_version"].values()) == [2.0] and list(x.ours["probe_http_version"].values()) == [1.1]


def _intermediate_first(x):
    a, b = x.bb["probe_ssl_earliest_cert_expiry"], x.ours["probe_ssl_earliest_cert_expiry"]
    return len(a) == len(b) == 1 and next(iter(a.values())) < next(iter(b.values()))


def _tcp_dial_failed(x):
    # blackbox's first error before or at the dial: the target's form, its name, the connection.
    return x.prober == "tcp" and x.bb_reason.startswith(
        ("Error splitting target address and port", "Resolution with IP protocol failed", "Error dialing TCP")
    )


EXPECTED = [
    Expected(
        "only_ours",
        "probe_timeout_seconds",
        "upstream's newer metric (spec §4.1, unreleased after 0.28.0); Debian's 0.23.0 predates it",
    ),
    Expected(
        "only_ours",
        "reachability_probe_result_info",
        "ours alone: the probe's status and reason in reachability_exporter's words",
    ),
    Expected(
        "only_ours",
        "probe_tls_cipher_info",
        "upstream has it for http (spec §4.4, H only); Debian's 0.23.0 predates it",
    ),
    Expected(
        "only_blackbox",
        "probe_ssl_last_chain_expiry_timestamp_seconds",
        "not emitted: the verified chain is not exposed by our TLS layer (BlackboxMetrics leaves out what it does not know)",
    ),
    Expected(
        "only_blackbox",
        "probe_ssl_last_chain_info",
        "not emitted: the leaf's fingerprint, subject, issuer and SANs are not exposed by our TLS layer",
    ),
    Expected(
        "only_blackbox",
        "probe_failed_due_to_regex",
        "tcp whose dial failed: Debian's 0.23.0 registers it before dialling, upstream only after a dial that "
        "succeeded (spec §4.5); ours follows upstream",
        when=_tcp_dial_failed,
    ),
    Expected(
        "only_blackbox",
        "probe_dns_serial",
        "not written on purpose (docs/probe-endpoint.md: the DNS prober does not keep the SOA's serial)",
    ),
    Expected(
        "only_blackbox",
        "probe_http_last_modified_timestamp_seconds",
        "not written on purpose (docs/probe-endpoint.md: Last-Modified is not kept)",
    ),
    Expected(
        "value",
        "probe_ssl_earliest_cert_expiry",
        "documented (docs/probe-endpoint.md): ours is the server certificate's notAfter, blackbox the earliest of "
        "every certificate sent (here an intermediate that expires first)",
        when=_intermediate_first,
    ),
    Expected(
        "value",
        "probe_http_version",
        "HTTP/2 not spoken: blackbox negotiates h2 by ALPN, ours HTTP/1.1 (enable_http2: true is refused at load)",
        when=_h2,
    ),
]


# Differences of the HTTP answers themselves that are accepted (refusals.py), with why.
ENDPOINT_EXPECTED = {
    "debug logs": "the log lines' format: Debian's 0.23.0 writes go-kit logfmt (ts=, caller=, level=info); "
    "ours writes upstream's newer promslog form (time=, level=DEBUG, source=); spec §2.5",
    "debug module": "the module section: blackbox marshals the parsed module with every prober's defaults; "
    "ours shows the module as written in the file (its own choice, ProbeEndpoint)",
}


@dataclass
class Difference:
    kind: str  # only_blackbox, only_ours, value
    metric: str
    detail: str
    expected: Expected = None

    def text(self):
        """The table cell: the metric alone for a name only one side has."""
        shown = self.metric if self.kind.startswith("only_") else self.detail
        return shown + (" *" if self.expected else "")


@dataclass
class Comparison:
    bb_success: float = None
    our_success: float = None
    differences: list = field(default_factory=list)
    problems: list = field(default_factory=list)  # besides the differences: wrong statuses, a lab error

    def unexpected(self):
        return [d for d in self.differences if not d.expected]

    def of(self, kind):
        return [d for d in self.differences if d.kind == kind]

    @property
    def passed(self):
        return not self.problems and not self.unexpected()


def families(text):
    """{name: {labels (sorted tuple): value}} of a text exposition."""
    out = {}
    for name, labels, value in Exposition(text).samples:
        out.setdefault(name, {})[tuple(sorted(labels.items()))] = value
    return out


def fmt_series(series):
    parts = []
    for labels, value in sorted(series.items()):
        v = f"{value:.10g}"
        parts.append(("{" + ",".join(f'{k}="{x}"' for k, x in labels) + "} " if labels else "") + v)
    return "; ".join(parts) or "none"


def match_expected(kind, metric, context):
    for e in EXPECTED:
        if e.kind == kind and e.metric == metric and (e.when is None or e.when(context)):
            e.seen += 1
            return e
    return None


# What the cases compared: {metric: [cases where both had it and agreed, values seen]}.
AGREED = {}


def compare(bb_text, our_text, prober="", block="", bb_reason=""):
    bb, ours = families(bb_text), families(our_text)
    x = Context(prober, block, bb, ours, bb_reason)
    c = Comparison()
    c.bb_success = next(iter(bb.get("probe_success", {}).values()), None)
    c.our_success = next(iter(ours.get("probe_success", {}).values()), None)
    for name in sorted(set(bb) - set(ours)):
        e = match_expected("only_blackbox", name, x)
        c.differences.append(Difference("only_blackbox", name, f"only in blackbox: {name}", e))
    for name in sorted(set(ours) - set(bb)):
        e = match_expected("only_ours", name, x)
        c.differences.append(Difference("only_ours", name, f"only in ours: {name}", e))
    for name in sorted(set(bb) & set(ours)):
        a, b = bb[name], ours[name]
        if name in TIMING:
            if set(a) != set(b):
                la = sorted(",".join(f"{k}={v}" for k, v in labels) for labels in a)
                lb = sorted(",".join(f"{k}={v}" for k, v in labels) for labels in b)
                e = match_expected("labels", name, x)
                c.differences.append(Difference("labels", name, f"{name} series: blackbox {la}, ours {lb}", e))
            continue
        if a != b:
            if name == "probe_success":
                continue  # the case's own check says it (phases.judge)
            e = match_expected("value", name, x)
            c.differences.append(
                Difference("value", name, f"{name}: blackbox {fmt_series(a)}, ours {fmt_series(b)}", e)
            )
        else:
            agreed = AGREED.setdefault(name, [0, set()])
            agreed[0] += 1
            agreed[1].add(fmt_series(a))
    return c
