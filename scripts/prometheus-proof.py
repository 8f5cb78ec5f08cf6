#!/usr/bin/env python3
"""Checks behind scripts/prometheus-proof.sh (which runs the processes; this file only reads files
and asks Prometheus). Subcommands:

  static      dashboards, rules coverage, Kubernetes, compose, Containerfile and systemd files
  mutate      every alert's unit tests must fail when the alert is broken three ways
  variant     writes the short-`for` rules variant the live run uses
  live        evaluates every dashboard, variable, annotation and rule query against Prometheus
  panel       prints one panel's query with the variables filled in
  wait        polls a PromQL expression until it returns a series (or times out)

Metrics that may legitimately have no series in the proof run are listed in MAY_BE_EMPTY with the
reason; every other dashboard query and recording rule must return series, and no query may error.
"""
import argparse
import concurrent.futures
import copy
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RULES = os.path.join(ROOT, "deploy/prometheus/reachability.rules.yml")
RULE_TESTS = os.path.join(ROOT, "deploy/prometheus/reachability.rules.test.yml")
DASHBOARDS = os.path.join(ROOT, "dashboards")

# Metrics the dashboards and rules use before the code that exports them has landed on main
# (history, configuration reload); they exist in the exporter once those branches merge.
LANDING = {
    "reachability_history_write_errors_total": "history writer (landing)",
    "reachability_history_dropped_records_total": "history writer (landing)",
    "reachability_history_bytes": "history writer (landing)",
    "reachability_availability_ratio": "history-based availability (landing)",
    "reachability_history_coverage_ratio": "history-based availability (landing)",
    "reachability_exporter_config_last_reload_successful": "configuration file reload (landing)",
}
# Metrics that exist but have no series in this run, and why.
ABSENT_IN_RUN = {
    "reachability_tls_certificate_expiry_timestamp_seconds": "no HTTPS target on loopback in the proof",
    "reachability_probe_portal_signals_total": "no captive portal in the proof",
    "ALERTS": "alerts only exist while pending or firing",
}
ICMP_METRICS = {
    "reachability_icmp_loss_ratio": "ICMP prober not in this build",
    "reachability_icmp_reply_ttl": "ICMP prober not in this build",
    "reachability_icmp_echo_requests_total": "ICMP prober not in this build",
    "reachability_icmp_echo_replies_total": "ICMP prober not in this build",
}
# Prometheus' own series the dashboards and rules use.
PROMETHEUS_SERIES = {"up", "scrape_duration_seconds", "ALERTS"}
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


# ---- PromQL helpers ---------------------------------------------------------------------------

PROMQL_WORDS = {
    "sum", "min", "max", "avg", "count", "by", "without", "on", "ignoring", "group_left", "group_right",
    "and", "or", "unless", "bool", "offset", "topk", "bottomk", "sort", "time", "vector", "scalar",
    "rate", "increase", "irate", "delta", "changes", "resets", "absent", "histogram_quantile",
    "avg_over_time", "sum_over_time", "count_over_time", "max_over_time", "min_over_time",
    "label_replace", "round", "le", "quantile", "stddev", "group", "inf", "nan",
}


def metric_names(expr):
    """Series names an expression selects (heuristic, but strict enough for our own queries)."""
    no_strings = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    no_labels = re.sub(r"\{[^}]*\}", "{}", no_strings)
    no_by = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", r"\1()", no_labels)
    names = set()
    for m in re.finditer(r"(?<![\w.])[a-zA-Z_:][a-zA-Z0-9_:]*", no_by):
        word = m.group(0)
        rest = no_by[m.end():].lstrip()
        if word.lower() in PROMQL_WORDS or rest.startswith("("):
            continue
        if re.fullmatch(r"\d+[smhdwy]", word) or (m.start() > 0 and no_by[m.start() - 1] in "[$"):
            continue
        names.add(word)
    return names


def base_metric(name):
    for suffix in ("_bucket", "_sum", "_count"):
        if name.endswith(suffix):
            return name[: -len(suffix)], True
    return name, False


def exported_metrics():
    """Metric names the Swift sources register (histograms by base name)."""
    names = set()
    for dirpath, _, files in os.walk(os.path.join(ROOT, "Sources")):
        for f in files:
            if f.endswith(".swift"):
                with open(os.path.join(dirpath, f)) as fh:
                    names.update(re.findall(r'"((?:reachability|process)_[a-z0-9_]+)"', fh.read()))
    return names


def load_rules():
    with open(RULES) as f:
        return yaml.safe_load(f)


def recorded_names(rules):
    return {r["record"] for g in rules["groups"] for r in g["rules"] if "record" in r}


# ---- dashboards -------------------------------------------------------------------------------

def dashboard_files():
    return sorted(os.path.join(DASHBOARDS, f) for f in os.listdir(DASHBOARDS) if f.endswith(".json"))


def all_panels(d):
    for p in d.get("panels", []):
        yield p
        for c in p.get("panels", []):
            yield c


def dashboard_queries(d):
    """(where, expr, instant, kind) for every query: panels, variables, annotations."""
    out = []
    for p in all_panels(d):
        for t in p.get("targets", []):
            out.append((f'panel "{p["title"]}" {t.get("refId")}', t.get("expr", ""), bool(t.get("instant")), "panel"))
    for v in d.get("templating", {}).get("list", []):
        if v.get("type") == "query":
            q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
            out.append((f'variable ${v["name"]}', q, True, "variable"))
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
    m = re.fullmatch(r"\s*label_values\((.*),\s*(\w+)\)\s*", q, re.S)
    if not m:
        return None
    return f"count by ({m.group(2)}) ({m.group(1)})"


def check_dashboards(exported, recorded):
    required_vars = {"reachability-host": {"datasource", "instance", "target"}, "reachability-fleet": {"datasource", "instance"}}
    with open(os.path.join(DASHBOARDS, "README.md")) as f:
        readme = f.read()
    uids = set()
    for path in dashboard_files():
        name = os.path.basename(path)
        with open(path) as f:
            d = json.load(f)
        uid = d.get("uid")
        if uid in uids:
            fail(f"{name}: duplicate uid {uid}")
        uids.add(uid)
        if "__inputs" in d or "${DS_" in json.dumps(d):
            fail(f"{name}: uses __inputs/${{DS_...}}, which provisioning cannot fill; use the datasource variable")
        variables = {v["name"]: v for v in d["templating"]["list"]}
        missing = required_vars.get(uid, {"datasource"}) - set(variables)
        if missing:
            fail(f"{name}: missing variables {sorted(missing)}")
        ds = variables.get("datasource")
        if not ds or ds.get("type") != "datasource" or ds.get("query") != "prometheus":
            fail(f"{name}: $datasource must be a datasource variable of type prometheus")
        ids, rects = set(), []
        for p in all_panels(d):
            if p["id"] in ids:
                fail(f"{name}: duplicate panel id {p['id']}")
            ids.add(p["id"])
            g = p["gridPos"]
            if g["x"] < 0 or g["x"] + g["w"] > 24 or g["h"] <= 0:
                fail(f'{name}: panel "{p["title"]}" outside the 24-column grid')
            for (o, og) in rects:
                if g["x"] < og["x"] + og["w"] and og["x"] < g["x"] + g["w"] and g["y"] < og["y"] + og["h"] and og["y"] < g["y"] + g["h"]:
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
            if f'**{p["title"]}**' not in readme:
                fail(f'{name}: panel "{p["title"]}" is not described in dashboards/README.md')
        for where, expr, _, _ in dashboard_queries(d):
            for var in re.findall(r"\$\{?(\w+)", expr):
                if var not in variables and var not in BUILTIN_VARS and not var.isdigit():
                    fail(f"{name}: {where} uses undefined variable ${var}")
            for m in metric_names(label_values_to_promql(expr) or expr):
                check_metric_name(f"{name}: {where}", m, exported, recorded)
        ok(f"{name}: {sum(1 for p in all_panels(d) if p['type'] != 'row')} panels, "
           f"{len(dashboard_queries(d))} queries, variables {sorted(variables)}")


def check_metric_name(where, name, exported, recorded):
    base, _ = base_metric(name)
    if name in recorded or name in PROMETHEUS_SERIES or name in LANDING or base in exported or name in exported:
        return
    fail(f"{where}: unknown metric {name} (not exported by Sources/, not recorded, not landing)")


# ---- rules ------------------------------------------------------------------------------------

def check_rules(exported):
    rules = load_rules()
    recorded = recorded_names(rules)
    with open(RULE_TESTS) as f:
        tests = yaml.safe_load(f)
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
        for key in ("severity",):
            if key not in a.get("labels", {}):
                fail(f"rules: {n} has no {key} label")
        for key in ("summary", "description"):
            if key not in a.get("annotations", {}):
                fail(f"rules: {n} has no {key} annotation")
    for g in rules["groups"]:
        for r in g["rules"]:
            for m in metric_names(r["expr"]):
                check_metric_name(f'rules: {r.get("alert") or r.get("record")}', m, exported, recorded)
    ok(f"rules: {len(alerts)} alerts, each with a firing and a silent unit test; {len(recorded)} recording rules; every metric name known")
    return rules


# ---- Kubernetes -------------------------------------------------------------------------------

SERVICEMONITOR_SCHEMA = {
    "type": "object", "additionalProperties": False,
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "monitoring.coreos.com/v1"}, "kind": {"const": "ServiceMonitor"},
        "metadata": {"type": "object", "required": ["name", "namespace"]},
        "spec": {"type": "object", "additionalProperties": False, "required": ["selector", "endpoints"], "properties": {
            "jobLabel": {"type": "string"},
            "selector": {"type": "object", "properties": {"matchLabels": {"type": "object"}}, "additionalProperties": False},
            "namespaceSelector": {"type": "object", "additionalProperties": False, "properties": {
                "matchNames": {"type": "array", "items": {"type": "string"}}, "any": {"type": "boolean"}}},
            "endpoints": {"type": "array", "minItems": 1, "items": {"type": "object", "additionalProperties": False, "properties": {
                "port": {"type": "string"}, "path": {"type": "string"}, "scheme": {"enum": ["http", "https"]},
                "interval": {"type": "string", "pattern": "^[0-9]+(ms|s|m|h)$"},
                "scrapeTimeout": {"type": "string", "pattern": "^[0-9]+(ms|s|m|h)$"},
                "honorLabels": {"type": "boolean"},
                "relabelings": {"$ref": "#/$defs/relabelings"}, "metricRelabelings": {"$ref": "#/$defs/relabelings"}}}}}}},
    "$defs": {"relabelings": {"type": "array", "items": {"type": "object", "additionalProperties": False, "properties": {
        "action": {"enum": ["replace", "keep", "drop", "labelmap", "labeldrop", "labelkeep", "hashmod", "lowercase", "uppercase"]},
        "sourceLabels": {"type": "array", "items": {"type": "string", "pattern": "^[a-zA-Z_][a-zA-Z0-9_]*$"}},
        "separator": {"type": "string"}, "targetLabel": {"type": "string"}, "regex": {"type": "string"},
        "modulus": {"type": "integer"}, "replacement": {"type": "string"}}}}},
}
PROMETHEUSRULE_SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "monitoring.coreos.com/v1"}, "kind": {"const": "PrometheusRule"},
        "metadata": {"type": "object", "required": ["name", "namespace"]},
        "spec": {"type": "object", "additionalProperties": False, "required": ["groups"], "properties": {
            "groups": {"type": "array", "items": {"type": "object", "additionalProperties": False, "required": ["name", "rules"], "properties": {
                "name": {"type": "string"}, "interval": {"type": "string"}, "limit": {"type": "integer"},
                "rules": {"type": "array", "items": {"type": "object", "additionalProperties": False, "required": ["expr"], "properties": {
                    "record": {"type": "string"}, "alert": {"type": "string"}, "expr": {"type": "string"},
                    "for": {"type": "string"}, "labels": {"type": "object"}, "annotations": {"type": "object"}}}}}}}}}},
}


def check_kubernetes(rules):
    import jsonschema
    k8s = os.path.join(ROOT, "deploy/kubernetes")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, os.path.join(k8s, "generate.py"), tmp], check=True)
        for f in ("configmap.yaml", "prometheusrule.yaml"):
            with open(os.path.join(tmp, f)) as a, open(os.path.join(k8s, f)) as b:
                if a.read() != b.read():
                    fail(f"kubernetes: {f} is not what generate.py makes from its source; run deploy/kubernetes/generate.py")
    docs = {}
    for f in sorted(os.listdir(k8s)):
        if f.endswith(".yaml") and f != "kustomization.yaml":
            with open(os.path.join(k8s, f)) as fh:
                d = yaml.safe_load(fh)
            docs[d["kind"]] = d
    pr = docs["PrometheusRule"]
    if pr["spec"] != rules:
        fail("kubernetes: PrometheusRule spec differs from deploy/prometheus/reachability.rules.yml")
    else:
        ok("kubernetes: PrometheusRule spec == reachability.rules.yml (parsed), text identical to generate.py's")
    with open(os.path.join(ROOT, "deploy/reachability_exporter.yml")) as fh:
        if yaml.safe_load(docs["ConfigMap"]["data"]["config.yml"]) != yaml.safe_load(fh):
            fail("kubernetes: ConfigMap config.yml differs from deploy/reachability_exporter.yml")
    for kind, schema in (("ServiceMonitor", SERVICEMONITOR_SCHEMA), ("PrometheusRule", PROMETHEUSRULE_SCHEMA)):
        try:
            jsonschema.validate(docs[kind], schema)
            ok(f"kubernetes: {kind} matches the subset of its CRD schema we use (additional properties refused)")
        except jsonschema.ValidationError as e:
            fail(f"kubernetes: {kind}: {e.message} at {list(e.absolute_path)}")
    ds, svc, sm = docs["DaemonSet"], docs["Service"], docs["ServiceMonitor"]
    pod = ds["spec"]["template"]["spec"]
    c = pod["containers"][0]
    sc = c.get("securityContext", {})
    expect = [
        (pod.get("hostNetwork") is True, "DaemonSet uses hostNetwork"),
        (sc.get("capabilities", {}).get("add") == ["NET_RAW"], "DaemonSet adds NET_RAW only"),
        (sc.get("capabilities", {}).get("drop") == ["ALL"], "DaemonSet drops ALL capabilities"),
        (sc.get("allowPrivilegeEscalation") is False, "DaemonSet forbids privilege escalation"),
        (sc.get("readOnlyRootFilesystem") is True, "DaemonSet has a read-only root file system"),
        (ds["spec"]["selector"]["matchLabels"].items() <= ds["spec"]["template"]["metadata"]["labels"].items(), "DaemonSet selector matches its pods"),
        (svc["spec"]["selector"].items() <= ds["spec"]["template"]["metadata"]["labels"].items(), "Service selects the DaemonSet's pods"),
        (sm["spec"]["selector"]["matchLabels"].items() <= svc["metadata"]["labels"].items(), "ServiceMonitor selects the Service"),
        (all(e["port"] in {p["name"] for p in svc["spec"]["ports"]} for e in sm["spec"]["endpoints"]), "ServiceMonitor port names exist on the Service"),
        (any(r.get("targetLabel") == "job" and r.get("replacement") == "reachability" for e in sm["spec"]["endpoints"] for r in e.get("relabelings", [])),
         'ServiceMonitor sets job="reachability", as the rules expect'),
        ({p["containerPort"] for p in c["ports"]} == {10361}, "container port is the exporter's 10361"),
        (any(m["name"] == "config" for m in c["volumeMounts"]) and any(v.get("configMap", {}).get("name") == docs["ConfigMap"]["metadata"]["name"] for v in pod["volumes"]),
         "DaemonSet mounts the ConfigMap"),
        (len({d["metadata"].get("namespace", d["metadata"]["name"]) for d in docs.values()}) == 1, "every object in one namespace"),
    ]
    for good, what in expect:
        (ok if good else fail)(f"kubernetes: {what}")
    with open(os.path.join(k8s, "kustomization.yaml")) as fh:
        kz = yaml.safe_load(fh)
    listed = set(kz["resources"])
    present = {f for f in os.listdir(k8s) if f.endswith(".yaml") and f != "kustomization.yaml"}
    (ok if listed == present else fail)(f"kubernetes: kustomization lists every manifest ({sorted(listed ^ present) or 'all'})")
    return c["args"]


# ---- compose ----------------------------------------------------------------------------------

def check_compose():
    cdir = os.path.join(ROOT, "deploy/compose")
    with open(os.path.join(cdir, "compose.yaml")) as f:
        c = yaml.safe_load(f)
    services = c.get("services", {})
    for s in ("exporter", "prometheus", "alertmanager", "grafana"):
        if s not in services:
            fail(f"compose: service {s} missing")
    named = set(c.get("volumes", {}))
    mounts = {}
    for name, s in services.items():
        if not ("image" in s or "build" in s):
            fail(f"compose: {name} has neither image nor build")
        for v in s.get("volumes", []):
            src, dst = v.split(":")[:2]
            mounts.setdefault(name, {})[dst] = src
            if src.startswith(".") or src.startswith("/"):
                if not os.path.exists(os.path.normpath(os.path.join(cdir, src))):
                    fail(f"compose: {name} mounts {src}, which does not exist")
            elif src not in named:
                fail(f"compose: {name} uses volume {src}, not declared under volumes:")
        for dep in s.get("depends_on", []):
            if dep not in services:
                fail(f"compose: {name} depends on unknown service {dep}")
        for p in s.get("ports", []):
            if not str(p).startswith("127.0.0.1:"):
                fail(f"compose: {name} publishes {p} beyond loopback")
    b = services["exporter"].get("build", {})
    if not os.path.exists(os.path.join(cdir, b.get("context", "."), b.get("dockerfile", "Dockerfile"))):
        fail("compose: exporter build points at a missing Containerfile")
    exp = services["exporter"]
    (ok if exp.get("cap_add") == ["NET_RAW"] and exp.get("cap_drop") == ["ALL"] else fail)("compose: exporter holds NET_RAW only")
    prom = mounts.get("prometheus", {})
    if prom.get("/etc/prometheus/reachability.rules.yml") != "../prometheus/reachability.rules.yml":
        fail("compose: Prometheus does not mount the shipped rules file")
    graf = mounts.get("grafana", {})
    with open(os.path.join(cdir, "grafana/provisioning/dashboards/reachability.yml")) as f:
        prov = yaml.safe_load(f)
    path = prov["providers"][0]["options"]["path"]
    if graf.get(path) != "../../dashboards":
        fail(f"compose: Grafana's dashboard provider reads {path}, which is not the mounted dashboards/")
    with open(os.path.join(cdir, "grafana/provisioning/datasources/prometheus.yml")) as f:
        dsp = yaml.safe_load(f)
    if not any(d.get("type") == "prometheus" and d.get("isDefault") and "prometheus:9090" in d.get("url", "") for d in dsp["datasources"]):
        fail("compose: no default Prometheus datasource pointing at the prometheus service")
    home = services["grafana"].get("environment", {}).get("GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH", "")
    if home and not os.path.exists(os.path.join(DASHBOARDS, os.path.basename(home))):
        fail(f"compose: Grafana home dashboard {home} does not exist")
    ok(f"compose: {len(services)} services, mounts resolve, rules and dashboards provisioned, ports on 127.0.0.1 only")
    return exp.get("command", [])


# ---- Containerfile and systemd ----------------------------------------------------------------

def check_containerfile():
    path = os.path.join(ROOT, "deploy/container/Containerfile")
    with open(path) as f:
        text = f.read()
    lines = re.sub(r"\\\n", " ", text).splitlines()
    instr = [(l.split(None, 1)[0].upper(), l.split(None, 1)[1] if len(l.split(None, 1)) > 1 else "")
             for l in (x.strip() for x in lines) if l and not l.startswith("#")]
    known = {"ARG", "FROM", "RUN", "WORKDIR", "COPY", "USER", "EXPOSE", "ENTRYPOINT", "CMD", "ENV", "LABEL", "VOLUME"}
    for k, _ in instr:
        if k not in known:
            fail(f"Containerfile: unknown instruction {k}")
    froms = [a for k, a in instr if k == "FROM"]
    stages = {m.group(1) for a in froms for m in [re.search(r"\bAS\s+(\S+)", a, re.I)] if m}
    copies = [a for k, a in instr if k == "COPY" and "--from=" in a]
    checks = [
        (len(froms) >= 2, "multi-stage (build and runtime stages)"),
        (all(re.search(r"--from=(\S+)", a).group(1) in stages for a in copies) and copies, "COPY --from names a defined stage"),
        (any("--static-swift-stdlib" in a and "-c release" in a for k, a in instr if k == "RUN"), "release build with --static-swift-stdlib"),
        (re.search(r"apt-get install[^&]*\blibssl3\b[^&]*\bca-certificates\b", text.split(froms[-1])[-1]) is not None, "runtime stage installs libssl3 and ca-certificates"),
        ([a for k, a in instr if k == "USER"][-1:] != ["root"] and [a for k, a in instr if k == "USER"][-1:] != ["0"], "runtime user is not root"),
        (all(json.loads(a) for k, a in instr if k in ("ENTRYPOINT", "CMD")), "ENTRYPOINT and CMD in exec (JSON) form"),
    ]
    for good, what in checks:
        (ok if good else fail)(f"Containerfile: {what}")
    # The build context Containerfile.dockerignore lets through must hold a loadable package.
    with open(os.path.join(ROOT, "deploy/container/Containerfile.dockerignore")) as f:
        keep = [l[1:].rstrip("/") for l in f.read().split() if l.startswith("!")]
    with open(os.path.join(ROOT, "Package.swift")) as f:
        manifest = f.read()
    paths = set(re.findall(r'path:\s*"([^"]+)"', manifest))
    targets = re.findall(r'\.(target|executableTarget|testTarget|systemLibrary)\(name:\s*"([^"]+)"([^)]*)', manifest)
    for kind, name, rest in targets:
        m = re.search(r'path:\s*"([^"]+)"', rest)
        p = m.group(1) if m else ("Tests/" if kind == "testTarget" else "Sources/") + name
        if not any(p == k or p.startswith(k + "/") for k in keep):
            fail(f"Containerfile.dockerignore: keeps {keep}, but target {name} lives in {p}")
    ok(f"Containerfile.dockerignore: context {keep} holds all {len(targets)} targets of Package.swift")
    cmd = [a for k, a in instr if k == "CMD"]
    return json.loads(cmd[-1]) if cmd else []


def check_systemd():
    path = os.path.join(ROOT, "deploy/systemd/reachability_exporter.service")
    settings = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if "=" in line and not line.startswith(("#", ";", "[")):
                k, v = line.split("=", 1)
                settings.setdefault(k, []).append(v)
    want = {"DynamicUser": "yes", "AmbientCapabilities": "CAP_NET_RAW", "CapabilityBoundingSet": "CAP_NET_RAW",
            "NoNewPrivileges": "yes", "ProtectSystem": "strict", "StateDirectory": "reachability_exporter",
            "ProtectHome": "yes", "PrivateTmp": "yes"}
    for k, v in want.items():
        (ok if settings.get(k) == [v] else fail)(f"systemd: {k}={v}")
    if "PrivateUsers" in settings or "PrivateNetwork" in settings:
        fail("systemd: PrivateUsers/PrivateNetwork would hide the host network from the probes")
    with open(os.path.join(ROOT, "deploy/systemd/reachability_exporter.default")) as f:
        m = re.search(r'^ARGS="([^"]*)"', f.read(), re.M)
    return m.group(1).split() if m else []


def check_flags(binary, arg_sets):
    """Every flag the deploy files pass exists in the binary's --help (or is landing)."""
    help_text = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=10).stdout
    known = set(re.findall(r"--(?:\[no-\])?([a-z][a-z0-9.-]+)", help_text))
    landing = {"config.file": "configuration file (landing)", "history.dir": "history writer (landing)"}
    for where, args in arg_sets:
        for a in args:
            if not a.startswith("--"):
                continue
            name = a[2:].split("=", 1)[0]
            if name in known:
                continue
            if name in landing:
                print(f"  note {where}: --{name} is not in this build's --help yet: {landing[name]}")
            else:
                fail(f"{where}: flag --{name} does not exist (reachability_exporter --help)")
    ok(f"flags: every flag in {', '.join(w for w, _ in arg_sets)} is known to the binary (or landing)")


def cmd_static(args):
    exported = exported_metrics()
    print("dashboards and rules:")
    rules = check_rules(exported)
    check_dashboards(exported, recorded_names(rules))
    print("kubernetes:")
    k8s_args = check_kubernetes(rules)
    print("compose:")
    compose_args = check_compose()
    print("container and systemd:")
    cmd_args = check_containerfile()
    unit_args = check_systemd()
    check_flags(args.binary, [("DaemonSet", k8s_args), ("compose", compose_args), ("Containerfile CMD", cmd_args),
                              ("systemd default ARGS", unit_args)])
    finish("static checks")


# ---- mutation: the unit tests must catch broken alerts ----------------------------------------

def cmd_mutate(args):
    rules = load_rules()
    with open(RULE_TESTS) as f:
        tests = yaml.safe_load(f)
    alerts = [(gi, ri, r) for gi, g in enumerate(rules["groups"]) for ri, r in enumerate(g["rules"]) if "alert" in r]
    jobs = []
    for gi, ri, r in alerts:
        n = r["alert"]
        mutations = [("never fires", {"expr": "vector(1) == 0"}),
                     ("fires with no labels as well", {"expr": f"({r['expr'].strip()}) or vector(1)"})]
        if r.get("for", "0m") not in ("0m", "0s"):
            mutations.append(("for: 0m", {"for": "0m"}))
        for what, change in mutations:
            m = copy.deepcopy(rules)
            m["groups"][gi]["rules"][ri].update(change)
            t = copy.deepcopy(tests)
            t["tests"] = []
            for group in tests["tests"]:
                art = [a for a in group.get("alert_rule_test", []) if a["alertname"] == n]
                if art:
                    g2 = copy.deepcopy(group)
                    g2["alert_rule_test"] = art
                    g2.pop("promql_expr_test", None)
                    t["tests"].append(g2)
            jobs.append((n, what, m, t))

    def run(job):
        n, what, m, t = job
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "reachability.rules.yml"), "w") as f:
                yaml.safe_dump(m, f, sort_keys=False)
            with open(os.path.join(tmp, "test.yml"), "w") as f:
                yaml.safe_dump(t, f, sort_keys=False)
            p = subprocess.run(["promtool", "test", "rules", "test.yml"], cwd=tmp, capture_output=True, text=True, timeout=120)
            return n, what, p.returncode

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
        results = list(ex.map(run, jobs))
    for n, what, rc in results:
        if rc == 0:
            fail(f"mutation: {n} with '{what}' still passes its unit tests")
    ok(f"mutation: {len(results)} broken variants of {len(alerts)} alerts, each caught by the unit tests")
    finish("mutation checks")


def cmd_variant(args):
    rules = load_rules()
    rule = next(r for g in rules["groups"] for r in g["rules"] if r.get("alert") == args.alert)
    rule = copy.deepcopy(rule)
    rule["for"] = args.for_
    rule.setdefault("labels", {})["proof"] = "short_for"
    with open(args.out, "w") as f:
        yaml.safe_dump({"groups": [{"name": "proof.short_for", "rules": [rule]}]}, f, sort_keys=False)


# ---- live: ask Prometheus ---------------------------------------------------------------------

class Prom:
    def __init__(self, url):
        self.url = url.rstrip("/")

    def get(self, path, **params):
        q = urllib.parse.urlencode(params)
        try:
            with urllib.request.urlopen(f"{self.url}{path}?{q}", timeout=10) as r:
                return json.load(r)
        except urllib.error.HTTPError as e:
            return json.load(e)

    def query(self, expr, instant=True):
        now = time.time()
        if instant:
            return self.get("/api/v1/query", query=expr, time=f"{now:.3f}")
        return self.get("/api/v1/query_range", query=expr, start=f"{now - 30:.3f}", end=f"{now:.3f}", step="1")


def may_be_empty(expr, icmp, unevaluated):
    names = {base_metric(n)[0] for n in metric_names(expr)} | metric_names(expr)
    reasons = dict(LANDING)
    reasons.update(ABSENT_IN_RUN)
    if not icmp:
        reasons.update(ICMP_METRICS)
    for n in sorted(names):
        if n in reasons:
            return reasons[n]
        if n in unevaluated:
            return "recording rule of a 1m group: in a ~1 min run it may not have evaluated, or evaluated before its inputs had samples"
    return None


def cmd_live(args):
    """One phase of the live run. Errors fail at once; whether a query returned series is merged
    into --state across phases, and --enforce (the last phase) fails on queries that never did
    and are not allowed to be empty."""
    prom = Prom(args.prometheus)
    instances = args.instances.split(",")
    values = dict(BUILTIN_VARS)
    values.update({"job": "reachability", "target": ".*"})
    rules_api = prom.get("/api/v1/rules")["data"]["groups"]
    unevaluated = {r["name"] for g in rules_api for r in g["rules"] if r["type"] == "recording" and r.get("health") != "ok"}
    # Recording rules of slow (>= 1m) groups evaluate once or twice in this short run, possibly
    # before their inputs have samples: empty results there are timing, not breakage (errors
    # still fail). Faster groups must return series.
    unevaluated |= {r["record"] for g in load_rules()["groups"] if g.get("interval", "").endswith("m") or g.get("interval", "").endswith("h")
                    for r in g["rules"] if "record" in r}
    state = {}
    if os.path.exists(args.state):
        with open(args.state) as f:
            state = json.load(f)
    errors = 0

    def evaluate(key, kind, queries, instant, reason):
        """queries: the expression once per instance the panel is looked at for."""
        nonlocal errors
        entry = state.setdefault(key, {"kind": kind, "data": False, "reason": reason, "expr": queries[0]})
        entry["reason"] = reason
        for q in queries:
            res = prom.query(q, instant)
            if res.get("status") != "success" or res.get("warnings"):
                errors += 1
                fail(f"{key}: {res.get('error') or res.get('warnings')}\n       {q}")
            elif res["data"]["result"]:
                entry["data"] = True

    print(f"phase {args.phase}: template variables $job=reachability, $instance= each of {instances} on the host view "
          f"and .* on the fleet view, $target=.*, $__rate_interval={values['__rate_interval']}, $__range={values['__range']}")
    for path in dashboard_files():
        with open(path) as f:
            d = json.load(f)
        host = d["uid"] == "reachability-host"
        # As Grafana writes a regex-escaped value into a PromQL string: backslashes doubled.
        per_instance = [re.escape(i).replace("\\", "\\\\") for i in instances] if host else [".*"]
        for where, expr, instant, kind in dashboard_queries(d):
            qs = []
            for inst in per_instance:
                q = substitute(expr, dict(values, instance=inst))
                qs.append(label_values_to_promql(q) or q if kind == "variable" else q)
            reason = may_be_empty(qs[0], args.icmp, unevaluated)
            if kind == "annotation" and not reason:
                reason = "annotations mark events; none need have happened"
            evaluate(f"{os.path.basename(path)}: {where}", "dashboard " + kind, qs, instant, reason)
    for g in load_rules()["groups"]:
        for r in g["rules"]:
            if "alert" in r:
                evaluate(f'alert {r["alert"]}', "alert expression", [r["expr"]], True, "alert condition not true (not firing)")
            else:
                evaluate(f'record {r["record"]}', "recording rule", [r["expr"]], True, may_be_empty(r["expr"], args.icmp, unevaluated))
    bad = [(g["name"], r["name"], r.get("lastError")) for g in rules_api for r in g["rules"] if r.get("health") == "err"]
    for g, n, e in bad:
        fail(f"rule {g}/{n} health err: {e}")
    evaluated = sum(1 for g in rules_api for r in g["rules"] if r.get("health") == "ok")
    total = sum(len(g["rules"]) for g in rules_api)
    ok(f"Prometheus rule health: {evaluated}/{total} evaluated ok, {len(bad)} errors, "
       f"{total - evaluated - len(bad)} not evaluated yet {sorted(unevaluated) or ''}")
    print(f"  query errors in this phase: {errors}")
    with open(args.state, "w") as f:
        json.dump(state, f, indent=1)
    if args.enforce:
        print("over all phases:")
        stats, allowed = {}, {}
        for key, e in sorted(state.items()):
            s = stats.setdefault(e["kind"], [0, 0, 0])
            s[0] += 1
            if e["data"]:
                s[1] += 1
            elif e["reason"]:
                s[2] += 1
                allowed.setdefault(e["reason"], []).append(key)
            else:
                fail(f"{key}: never returned series\n       {e['expr']}")
        for kind, (n, data, empty) in sorted(stats.items()):
            ok(f"{kind}: {n} evaluated without error, {data} returned series, {empty} empty (allowed)")
        fired = [k for k, e in state.items() if e["kind"] == "alert expression" and e["data"]]
        print(f"  alert conditions that held during the run: {', '.join(sorted(fired)) or 'none'}")
        for reason, keys in sorted(allowed.items()):
            print(f"  empty, allowed ({reason}): {len(keys)}")
            for k in keys:
                if "alert " not in k:
                    print(f"      {k}")
    finish(f"live queries, phase {args.phase}")


def cmd_panel(args):
    """Prints a panel's query with the variables filled in (for value checks in the shell script)."""
    with open(os.path.join(DASHBOARDS, args.dashboard)) as f:
        d = json.load(f)
    p = next(p for p in all_panels(d) if p["title"] == args.title)
    t = next(t for t in p["targets"] if t["refId"] == args.ref)
    inst = re.escape(args.instance).replace("\\", "\\\\") if args.instance else ".*"
    print(substitute(t["expr"], dict(BUILTIN_VARS, job="reachability", target=".*", instance=inst)))


def cmd_wait(args):
    prom = Prom(args.prometheus)
    deadline = time.time() + args.timeout
    start = time.time()
    while time.time() < deadline:
        res = prom.query(args.expr)
        if res.get("status") == "success" and res["data"]["result"]:
            labels = res["data"]["result"][0]["metric"]
            print(f"  ok   after {time.time() - start:.1f}s: {args.what}  {json.dumps(labels, sort_keys=True)}")
            return
        time.sleep(0.5)
    print(f"  FAIL {args.what}: nothing within {args.timeout}s for {args.expr}")
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("static"); s.add_argument("--binary", required=True); s.set_defaults(fn=cmd_static)
    s = sub.add_parser("mutate"); s.set_defaults(fn=cmd_mutate)
    s = sub.add_parser("variant"); s.add_argument("--alert", required=True); s.add_argument("--for", dest="for_", required=True)
    s.add_argument("--out", required=True); s.set_defaults(fn=cmd_variant)
    s = sub.add_parser("live"); s.add_argument("--prometheus", required=True); s.add_argument("--instances", required=True)
    s.add_argument("--icmp", type=int, default=0); s.add_argument("--state", required=True); s.add_argument("--phase", required=True)
    s.add_argument("--enforce", action="store_true"); s.set_defaults(fn=cmd_live)
    s = sub.add_parser("panel"); s.add_argument("--dashboard", required=True); s.add_argument("--title", required=True)
    s.add_argument("--ref", default="A"); s.add_argument("--instance", default=""); s.set_defaults(fn=cmd_panel)
    s = sub.add_parser("wait"); s.add_argument("--prometheus", required=True); s.add_argument("--expr", required=True)
    s.add_argument("--what", required=True); s.add_argument("--timeout", type=float, default=30); s.set_defaults(fn=cmd_wait)
    args = ap.parse_args()
    args.fn(args)


if __name__ == "__main__":
    main()
