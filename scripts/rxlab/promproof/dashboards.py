"""The dashboards and the rules as files: structure, unit-test coverage of every alert, and the
metric names they select checked against the exporter's catalog.

The names come from Prometheus itself (see remote_read.py): every query, with Grafana's template
values filled in, is evaluated by a Prometheus that hands each selector to our remote-read
endpoint. A name must be a series of the catalog (`reachability_exporter metrics`), a recording
rule or one of Prometheus' own series; a selector that names no metric cannot be vouched for and
fails too."""

import json
import os
import re

from ..prom import Prometheus
from . import remote_read
from .queries import (
    BUILTIN_VARS,
    DASHBOARDS,
    PROMETHEUS_SERIES,
    RULE_TESTS,
    Catalog,
    all_panels,
    dashboard_files,
    dashboard_queries,
    expressions,
    fail,
    finish,
    load_dashboard,
    load_rules,
    load_yaml,
    ok,
    recorded_names,
)

REQUIRED_VARS = {
    "reachability-host": {"datasource", "instance", "target"},
    "reachability-fleet": {"datasource", "instance"},
}


def check_dashboards():
    with open(os.path.join(DASHBOARDS, "README.md")) as f:
        readme = f.read()
    uids = set()
    for path in dashboard_files():
        name = os.path.basename(path)
        d = load_dashboard(path)
        uid = d.get("uid")
        if uid in uids:
            fail(f"{name}: duplicate uid {uid}")
        uids.add(uid)
        variables = {v["name"]: v for v in d["templating"]["list"]}
        # grafana.com's import fills ${DS_PROMETHEUS} (the __inputs entry) in; provisioning does
        # not. Only $datasource's default may name it: a provisioned dashboard then falls back to
        # the default Prometheus, where a panel naming it would have no data source at all.
        ds_default = (variables.get("datasource") or {}).get("current")
        if [i.get("name") for i in d.get("__inputs", [])] != ["DS_PROMETHEUS"]:
            fail(f"{name}: __inputs must be the one data source input DS_PROMETHEUS (grafana.com's import)")
        rest = {k: v for k, v in d.items() if k != "__inputs"}
        if json.dumps(rest).count("${DS_") != json.dumps(ds_default).count("${DS_"):
            fail(f"{name}: ${{DS_...}} outside $datasource's default, which provisioning cannot fill")
        missing = REQUIRED_VARS.get(uid, {"datasource"}) - set(variables)
        if missing:
            fail(f"{name}: missing variables {sorted(missing)}")
        ds = variables.get("datasource")
        if not ds or ds.get("type") != "datasource" or ds.get("query") != "prometheus":
            fail(f"{name}: $datasource must be a datasource variable of type prometheus")
        check_panels(name, d, readme)
        for where, expr, _, _ in dashboard_queries(d):
            for var in re.findall(r"\$\{?(\w+)", expr):
                if var not in variables and var not in BUILTIN_VARS and not var.isdigit():
                    fail(f"{name}: {where} uses undefined variable ${var}")
        ok(
            f"{name}: {sum(1 for p in all_panels(d) if p['type'] != 'row')} panels, "
            f"{len(dashboard_queries(d))} queries, variables {sorted(variables)}"
        )


def check_panels(name, d, readme):
    """Unique ids, on the 24-column grid without overlaps, the $datasource, a query each with
    distinct refIds, and a description in dashboards/README.md."""
    ids, rects = set(), []
    for p in all_panels(d):
        if p["id"] in ids:
            fail(f"{name}: duplicate panel id {p['id']}")
        ids.add(p["id"])
        g = p["gridPos"]
        if g["x"] < 0 or g["x"] + g["w"] > 24 or g["h"] <= 0:
            fail(f'{name}: panel "{p["title"]}" outside the 24-column grid')
        for o, og in rects:
            if (
                g["x"] < og["x"] + og["w"]
                and og["x"] < g["x"] + g["w"]
                and g["y"] < og["y"] + og["h"]
                and og["y"] < g["y"] + g["h"]
            ):
                fail(f'{name}: panel "{p["title"]}" overlaps "{o}"')
        rects.append((p["title"], g))
        if p["type"] == "row":
            continue
        if p.get("datasource") != {"type": "prometheus", "uid": "${datasource}"}:
            fail(f'{name}: panel "{p["title"]}" does not use the $datasource variable')
        if not p.get("targets"):
            fail(f'{name}: panel "{p["title"]}" has no query')
        refs = [t["refId"] for t in p["targets"]]
        if len(refs) != len(set(refs)):
            fail(f'{name}: panel "{p["title"]}" repeats a refId')
        if f"**{p['title']}**" not in readme:
            fail(f'{name}: panel "{p["title"]}" is not described in dashboards/README.md')


def check_rules():
    rules = load_rules()
    tests = load_yaml(RULE_TESTS)
    alerts = [r for g in rules["groups"] for r in g["rules"] if "alert" in r]
    fires, silent = set(), set()
    for t in tests["tests"]:
        for a in t.get("alert_rule_test", []):
            (fires if a.get("exp_alerts") else silent).add(a["alertname"])
    for a in alerts:
        n = a["alert"]
        if n not in fires:
            fail(f"rule tests: {n} has no case where it fires")
        if n not in silent:
            fail(f"rule tests: {n} has no case where it stays silent")
        if "severity" not in a.get("labels", {}):
            fail(f"rules: {n} has no severity label")
        for key in ("summary", "description"):
            if key not in a.get("annotations", {}):
                fail(f"rules: {n} has no {key} annotation")
    ok(
        f"rules: {len(alerts)} alerts, each with a firing and a silent unit test; {len(recorded_names(rules))} recording rules"
    )
    return rules


def cmd_names(args):
    """Every query through the parser Prometheus; the names it selects against the catalog.
    Writes {key: [names]} to --out for the live run's allowances."""
    catalog = Catalog(args.binary)
    series, recorded = catalog.series(), recorded_names(load_rules())
    prom, endpoint = Prometheus(args.prometheus), remote_read.Selectors(args.remote_read)
    endpoint.take()
    selected, counts, used = {}, {}, set()
    for key, kind, queries, instant in expressions():
        res = prom.evaluate(queries[0], instant)
        if res.get("status") != "success" or res.get("warnings"):
            fail(f"{key}: {res.get('error') or res.get('warnings')}\n       {queries[0]}")
            continue
        names, unnamed = remote_read.names(endpoint.take())
        for s in unnamed:
            fail(f"{key}: a selector without a metric name ({s}); the catalog cannot vouch for it")
        for n in sorted(names):
            if n not in series and n not in recorded and n not in PROMETHEUS_SERIES:
                fail(f"{key}: selects {n}: not in the exporter's catalog, not a recording rule, not Prometheus' own")
        if not names:
            fail(f"{key}: selects no series at all\n       {queries[0]}")
        used |= names
        selected[key] = sorted(names)
        counts[kind] = counts.get(kind, 0) + 1
    with open(args.out, "w") as f:
        json.dump(selected, f, indent=1)
    for kind, n in sorted(counts.items()):
        ok(f"{kind}: {n} parsed by Prometheus, every selected name known")
    ok(
        f"{len(used)} distinct names selected; the catalog has {len(catalog.metrics)} metrics ({len(series)} series names), "
        f"{len(recorded)} recording rules; Prometheus' own: {sorted(used & PROMETHEUS_SERIES)}"
    )
    unused = sorted(
        m for m in catalog.metrics if not any(s in used for s, owner in series.items() if owner["name"] == m)
    )
    print(f"  note: catalog metrics no dashboard or rule selects ({len(unused)}): {', '.join(unused) or 'none'}")
    finish("metric names")
