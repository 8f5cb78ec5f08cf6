"""What the proof's checks share: paths, the pass/fail tally, the rules and dashboards as files
(every query with Grafana's template values filled in) and the exporter's metric catalog.
Prometheus' HTTP API is rxlab.prom's."""

import json
import os
import re
import subprocess
import sys

import yaml

from ..util import ROOT

# The shipped rule files, recording rules first (the alerts read them).
RULE_FILES = [os.path.join(ROOT, "deploy/prometheus", f) for f in ("reachability_rules.yml", "reachability_alerts.yml")]
RULE_TESTS = os.path.join(ROOT, "deploy/prometheus/reachability.rules.test.yml")
DASHBOARDS = os.path.join(ROOT, "dashboards")

# Series Prometheus makes itself that the dashboards and rules may select.
PROMETHEUS_SERIES = {"up", "scrape_duration_seconds", "ALERTS"}
# Grafana's built-in variables, with the values the proof gives them.
BUILTIN_VARS = {"__rate_interval": "10s", "__interval": "5s", "__range": "60s"}

failures = []


def fail(msg):
    failures.append(msg)
    print(f"  FAIL {msg}")


def ok(msg):
    print(f"  ok   {msg}")


def finish(what):
    if failures:
        print(f"{what}: {len(failures)} failure(s)")
        sys.exit(1)
    print(f"{what}: all checks passed")


# ---- rules ------------------------------------------------------------------------------------


def load_yaml(path):
    with open(path) as f:
        return yaml.safe_load(f)


def load_rules():
    """Both shipped rule files as one: {"groups": the recording groups, then the alerting ones}."""
    return {"groups": [g for path in RULE_FILES for g in load_yaml(path)["groups"]]}


def recorded_names(rules):
    return {r["record"] for g in rules["groups"] for r in g["rules"] if "record" in r}


# ---- dashboards -------------------------------------------------------------------------------


def dashboard_files():
    return sorted(os.path.join(DASHBOARDS, f) for f in os.listdir(DASHBOARDS) if f.endswith(".json"))


def load_dashboard(path):
    with open(path) as f:
        return json.load(f)


def all_panels(d):
    for p in d.get("panels", []):
        yield p
        yield from p.get("panels", [])


def dashboard_queries(d):
    """(where, expr, instant, kind) for every query: panels, variables, annotations."""
    out = []
    for p in all_panels(d):
        for t in p.get("targets", []):
            out.append((f'panel "{p["title"]}" {t.get("refId")}', t.get("expr", ""), bool(t.get("instant")), "panel"))
    for v in d.get("templating", {}).get("list", []):
        if v.get("type") == "query":
            q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
            out.append((f"variable ${v['name']}", q, True, "variable"))
    for a in d.get("annotations", {}).get("list", []):
        if a.get("expr"):
            out.append((f'annotation "{a["name"]}"', a["expr"], False, "annotation"))
    return out


def substitute(expr, values):
    """Grafana-style: $name and ${name}; names without a value ($1 in label_replace) stay."""

    def repl(m):
        name = m.group(1) or m.group(2)
        return values.get(name, m.group(0))

    return re.sub(r"\$\{(\w+)\}|\$(\w+)", repl, expr)


def label_values_to_promql(q):
    """Grafana's label_values(selector, label) variable query as the PromQL it amounts to."""
    m = re.fullmatch(r"\s*label_values\((.*),\s*(\w+)\)\s*", q, re.S)
    if not m:
        return None
    return f"count by ({m.group(2)}) ({m.group(1)})"


def template_values(instance=".*"):
    """The proof's values of the dashboards' variables: every variable that offers All at its
    All value ($site, $probe_<label>: allValue), then $job, $target and $instance."""
    return {**BUILTIN_VARS, **all_values(), "job": "reachability", "target": ".*", "instance": instance}


def all_values():
    return {
        v["name"]: v["allValue"]
        for path in dashboard_files()
        for v in load_dashboard(path)["templating"]["list"]
        if "allValue" in v
    }


def grafana_regex(value):
    """A variable's value as Grafana writes it into a PromQL string: regex-escaped, backslashes doubled."""
    return re.escape(value).replace("\\", "\\\\")


def expressions(host_instances=(".*",)):
    """Every query the proof evaluates: (key, kind, [PromQL], instant). Dashboard panels,
    variables and annotations with the template values filled in (the host view once per value
    in `host_instances`, the fleet view with .*), then every alerting and recording rule."""
    for path in dashboard_files():
        d = load_dashboard(path)
        per_instance = host_instances if d["uid"] == "reachability-host" else [".*"]
        for where, expr, instant, kind in dashboard_queries(d):
            qs = []
            for inst in per_instance:
                q = substitute(expr, template_values(inst))
                qs.append(label_values_to_promql(q) or q if kind == "variable" else q)
            yield f"{os.path.basename(path)}: {where}", "dashboard " + kind, qs, instant
    for g in load_rules()["groups"]:
        for r in g["rules"]:
            if "alert" in r:
                yield f"alert {r['alert']}", "alert expression", [r["expr"]], True
            else:
                yield f"record {r['record']}", "recording rule", [r["expr"]], True


# ---- the metric catalog -----------------------------------------------------------------------


class Catalog:
    """Every metric the exporter can serve, as the binary lists it (`reachability_exporter
    metrics --output=json`: name, type, labels, help)."""

    def __init__(self, binary):
        p = subprocess.run([binary, "metrics", "--output=json"], capture_output=True, text=True, timeout=20)
        if p.returncode != 0:
            raise SystemExit(f"{binary} metrics --output=json exited {p.returncode}: {p.stderr.strip()}")
        self.metrics = {m["name"]: m for m in json.loads(p.stdout)}

    def series(self):
        """Series name -> its metric: a histogram's _bucket, _sum and _count; any other metric's
        name as listed (counters with their _total)."""
        out = {}
        for name, m in self.metrics.items():
            for suffix in ("_bucket", "_sum", "_count") if m["type"] == "histogram" else ("",):
                out[name + suffix] = m
        return out

    def family(self, name, kind):
        """The catalog entry of a metric family named as Prometheus' metadata names it
        (OpenMetrics drops a counter's _total), or None."""
        return self.metrics.get(name) or (self.metrics.get(name + "_total") if kind == "counter" else None)
