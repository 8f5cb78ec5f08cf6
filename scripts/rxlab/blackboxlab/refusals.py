"""The blackbox side-by-side lab's refusals: what /probe answers when the request is wrong (no
target, an unknown module, a timeout header that is not a number, a hostname that conflicts
with the module's Host header), and the layout of `debug=true`, each asked of both exporters and
compared: the status and body exactly, the Content-Type, the debug sections."""

import re
import urllib.parse
from dataclasses import dataclass, field

from .compare import compare, families
from .exporters import get
from .net import A4

WEB = f"http://{A4['WEB']}/"
TIMEOUT = {"X-Prometheus-Scrape-Timeout-Seconds": "3"}

# debug=true, byte for byte (spec §2.5): the logs, each line ending in \n, then the metrics,
# then the module.
DEBUG = re.compile(
    r"\ALogs for the probe:\n(?P<logs>(?:[^\n]*\n)*?)\n\n\nMetrics that would have been returned:\n"
    r"(?P<metrics>.*?)\n\n\nModule configuration:\n(?P<module>.*)\Z",
    re.S,
)


@dataclass
class Row:
    what: str
    query: str
    headers: dict = field(default_factory=dict)
    bb: object = None
    ours: object = None
    problems: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    @property
    def passed(self):
        return not self.problems


def q(**params):
    return "/probe?" + urllib.parse.urlencode(params) if params else "/probe"


def rows():
    return [
        Row("missing target", q(module="http_2xx")),
        Row("missing target, no module (http_2xx by default)", q()),
        Row("empty target", q(module="http_2xx", target="")),
        Row("unknown module", q(module="x", target=WEB)),
        Row("unknown module before a missing target", q(module="x")),
        Row('unknown module with a quote: a"b', q(module='a"b', target=WEB)),
        Row("unknown module with a control character", q(module="a\x01b", target=WEB)),
        Row("bad timeout header", q(module="http_2xx", target=WEB), {"X-Prometheus-Scrape-Timeout-Seconds": "abc"}),
        Row(
            "hostname conflicting with the module's Host",
            q(module="lab_http_host_header", target=WEB, hostname="other.lab.test"),
            TIMEOUT,
        ),
        Row(
            "hostname equal to the module's Host",
            q(module="lab_http_host_header", target=WEB, hostname="vhost.example.com"),
            TIMEOUT,
        ),
        Row("empty module (http_2xx)", q(module="", target=WEB), TIMEOUT),
        Row(
            "hostname as the Host header",
            q(module="http_2xx", target=WEB, hostname="vhost.example.com"),
            TIMEOUT,
        ),
        Row(
            "hostname as the TLS server name",
            q(module="http_custom_ca_example", target="https://wrong.lab.test/", hostname="other.lab.test"),
            TIMEOUT,
        ),
        Row("debug=TRUE is not debug", q(module="http_2xx", target=WEB, debug="TRUE"), TIMEOUT),
        Row("debug=true, success", q(module="http_2xx", target=WEB, debug="true"), TIMEOUT),
        Row("debug=true, failure", q(module="http_2xx", target=f"http://{A4['WEB']}:81/", debug="true"), TIMEOUT),
    ]


def run_rows(call, ports):
    out = rows()
    for r in out:
        r.bb = call(get, ports[0], r.query, r.headers, 15)
        r.ours = call(get, ports[1], r.query, r.headers, 15)
        judge(r)
    return out


def summary(resp):
    """`STATUS body` of an answer, the body cut for a table."""
    body = resp.body.strip().replace("\n", "⏎")
    if resp.status == 200 and "probe_success" in resp.body and not resp.body.startswith("Logs"):
        s = families(resp.body).get("probe_success", {})
        body = f"metrics, probe_success {next(iter(s.values()), None)}"
    elif resp.body.startswith("Logs for the probe:"):
        body = "debug text"
    return f"{resp.status} {body[:90]}"


def judge(r):
    bb, ours = r.bb, r.ours
    if bb.status != ours.status:
        r.problems.append(f"status: blackbox {bb.status}, ours {ours.status}")
    debug = bb.body.startswith("Logs for the probe:")
    if bb.status != 200 and bb.body != ours.body:
        r.problems.append(f"body: blackbox {bb.body!r}, ours {ours.body!r}")
    bb_type, our_type = bb.headers.get("content-type"), ours.headers.get("content-type")
    if bb_type != our_type:
        r.problems.append(f"Content-Type: blackbox {bb_type!r}, ours {our_type!r}")
    if bb.status != 200:
        for h in ("x-content-type-options",):
            if bb.headers.get(h) != ours.headers.get(h):
                r.problems.append(f"{h}: blackbox {bb.headers.get(h)!r}, ours {ours.headers.get(h)!r}")
    if bb.status == 200 and not debug:
        if ours.body.startswith("Logs for the probe:"):
            r.problems.append("ours answered the debug text")
        c = compare(bb.body, ours.body, "http")
        if c.our_success != c.bb_success:
            r.problems.append(f"probe_success: blackbox {c.bb_success}, ours {c.our_success}")
        r.problems += [d.detail for d in c.unexpected()]
    if debug:
        judge_debug(r)


def judge_debug(r):
    parts = {}
    for who, resp in (("blackbox", r.bb), ("ours", r.ours)):
        m = DEBUG.match(resp.body)
        if not m:
            r.problems.append(f"{who}: debug text not in blackbox's layout: {resp.body[:200]!r}")
            continue
        parts[who] = m
        if not families(m.group("metrics")).get("probe_success"):
            r.problems.append(f"{who}: no probe_success in the debug text's metrics")
    if len(parts) != 2:
        return
    a, b = families(parts["blackbox"].group("metrics")), families(parts["ours"].group("metrics"))
    if a.get("probe_success") != b.get("probe_success"):
        r.problems.append(
            f"probe_success in the debug text: blackbox {a.get('probe_success')}, ours {b.get('probe_success')}"
        )
    for line in parts["ours"].group("logs").splitlines():
        if "Beginning probe" in line:
            break
    else:
        r.problems.append("ours: no 'Beginning probe' line in the logs section")
    r.notes.append("sections and order as blackbox's; log lines' format *; module section *")
    r.notes.append(
        f"log lines: blackbox {len(parts['blackbox'].group('logs').splitlines())}, "
        f"ours {len(parts['ours'].group('logs').splitlines())}"
    )
