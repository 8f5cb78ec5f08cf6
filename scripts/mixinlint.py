#!/usr/bin/env python3
"""The monitoring mixin's guideline checker: what `mixtool lint` checks (its own alert rules and
grafana/dashboard-linter's dashboard rules), run on the rendered files, for a machine where
mixtool (Go) cannot be installed; plus what the monitoring-mixins guidelines ask beyond it.

  scripts/mixinlint.py --alerts FILE --rules FILE [--lint FILE] [--runbook FILE] [--job JOB]
                       [--no-promtool] DASHBOARD.json...

Prints one line per problem, `[rule] where: what`, as mixtool does, and exits 1 when there is
any. --lint reads exclusions in mixtool's format (mixin/.lint: `exclusions: {rule: {reason,
entries: [{alert | dashboard, panel}]}}`), so mixtool and this checker skip the same things.
--runbook: every runbook_url's #anchor must be a heading of that file. --job: the dashboards'
$job must open on it. PromQL is parsed by promtool (`promtool check rules` on each dashboard
query as a recording rule) unless --no-promtool.

Rules (mixtool's names; the last ones of each kind are ours):
  alerts      alert-group-rule-count, alert-group-name-length, alert-name-camelcase,
              alert-name-length, alert-severity-rule, alert-description-missing-rule,
              alert-description-templating, alert-summary-missing-rule, alert-summary-templating,
              alert-summary-style; alert-runbook-url-rule, rule-file-kind-rule, record-name-rule
  dashboards  dashboard-title-uid, template-datasource-rule, template-job-rule,
              template-instance-rule, template-label-promql-rule,
              template-on-time-change-reload-rule, panel-datasource-rule,
              panel-title-description-rule, panel-units-rule, panel-no-targets-rule,
              target-promql-rule, target-rate-interval-rule, target-job-rule,
              target-instance-rule, target-counter-agg-rule, uneditable-dashboard;
              dashboard-import-rule, dashboard-job-variable-rule
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import yaml

# ---- findings and exclusions ------------------------------------------------------------------


class Findings:
    """Problems, each with the rule that found it and what mixtool's exclusions match on (the
    alert's name; the dashboard's and the panel's titles)."""

    def __init__(self, exclusions):
        self.exclusions = exclusions or {}
        self.problems, self.excluded = [], 0

    def add(self, rule, where, what, alert=None, dashboard=None, panel=None):
        if self.is_excluded(rule, alert=alert, dashboard=dashboard, panel=panel):
            self.excluded += 1
            return
        self.problems.append(f"[{rule}] {where}: {what}")

    def is_excluded(self, rule, **context):
        """mixtool's semantics: a rule listed without entries is off everywhere; with entries,
        where one matches (each field it sets equal to the context's)."""
        if rule not in self.exclusions:
            return False
        entries = (self.exclusions[rule] or {}).get("entries") or []
        return not entries or any(
            all(context.get(k) == v for k, v in e.items() if k in ("alert", "dashboard", "panel")) for e in entries
        )


# ---- PromQL selectors -------------------------------------------------------------------------

TOKEN = re.compile(
    r"""\s+|\#[^\n]*
    |(?P<str>"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|`[^`]*`)
    |(?P<var>\$\{[^}]+\}|\$\w+)
    |(?P<num>\.?[0-9][0-9a-zA-Z._]*)
    |(?P<ident>[a-zA-Z_:][a-zA-Z0-9_:]*)
    |(?P<op>=~|!~|!=|==|>=|<=|[-+*/%^<>=(){}\[\],@])""",
    re.X,
)
# Followed by a parenthesised label list, not a selector.
LABEL_LISTS = {"by", "without", "on", "ignoring", "group_left", "group_right"}
KEYWORDS = LABEL_LISTS | {"and", "or", "unless", "bool", "offset", "atan2", "inf", "nan", "start", "end"}


def tokens(expr):
    out, pos = [], 0
    while pos < len(expr):
        m = TOKEN.match(expr, pos)
        if not m:
            raise ValueError(f"cannot read {expr[pos : pos + 20]!r}")
        pos = m.end()
        if m.lastgroup:
            out.append((m.lastgroup, m.group(m.lastgroup)))
    return out


def closing(toks, i, open_, close):
    """The index of the token closing the bracket at toks[i]."""
    depth = 0
    for j in range(i, len(toks)):
        depth += toks[j][1] == open_
        depth -= toks[j][1] == close
        if depth == 0:
            return j
    raise ValueError(f"unbalanced {open_}")


def selectors(expr):
    """The vector selectors of a PromQL expression (Grafana variables left as they are): dicts
    of name, matchers [(label, op, value)], range (the text in [...] after it, or None) and call
    (the function it is the direct argument of, or None)."""
    toks, out, i = tokens(expr), [], 0
    while i < len(toks):
        kind, text = toks[i]
        nxt = toks[i + 1][1] if i + 1 < len(toks) else None
        if text == "[":  # a subquery's range
            i = closing(toks, i, "[", "]") + 1
        elif kind == "ident" and text in LABEL_LISTS and nxt == "(":
            i = closing(toks, i + 1, "(", ")") + 1
        elif kind == "ident" and (nxt in ("(", "by", "without") or text in KEYWORDS):  # a call, `sum by`
            i += 1
        elif kind == "ident" or text == "{":
            start = i
            name = text if kind == "ident" else None
            matchers = []
            if kind == "ident":
                i += 1
            if i < len(toks) and toks[i][1] == "{":
                end = closing(toks, i, "{", "}")
                body = toks[i + 1 : end]
                for j in range(0, len(body), 4):  # label op "value" [,]
                    label, op, value = body[j : j + 3]
                    matchers.append((label[1], op[1], value[1][1:-1]))
                i = end + 1
            rng = None
            if i < len(toks) and toks[i][1] == "[":
                end = closing(toks, i, "[", "]")
                rng = "".join(t for _, t in toks[i + 1 : end])
                i = end + 1
            call = (
                toks[start - 2][1]
                if start >= 2 and toks[start - 1][1] == "(" and toks[start - 2][0] == "ident"
                else None
            )
            out.append({"name": name, "matchers": matchers, "range": rng, "call": call})
        else:
            i += 1
    return out


# Grafana's built-in variables, as values PromQL parses.
BUILTINS = {
    "__rate_interval": "5m",
    "__interval": "1m",
    "__range": "6h",
    "__range_s": "21600",
    "__range_ms": "21600000",
}


def expand(expr):
    """Grafana variables replaced by values PromQL parses: durations for the built-in ones, a
    word for the rest (they stand inside label values); $1 (label_replace) stays."""

    def value(m):
        name = m.group(1) or m.group(2)
        return m.group(0) if name.isdigit() else BUILTINS.get(name, "x")

    return re.sub(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)", value, expr)


def variable_promql(query):
    """A query variable's PromQL (label_values(selector, label) counted by the label,
    query_result(q) as q); None for the forms without one. Raises ValueError for a function
    Grafana's Prometheus data source does not have."""
    m = re.fullmatch(r"\s*([a-z_]+)\((.*)\)\s*", query, re.S)
    if not m or m.group(1) not in ("label_names", "label_values", "metrics", "query_result"):
        raise ValueError("not label_names(), label_values(), metrics() or query_result()")
    fn, arg = m.groups()
    if fn == "query_result":
        return arg
    lv = re.fullmatch(r"(.*),\s*(\w+)\s*", arg, re.S) if fn == "label_values" else None
    return f"count by ({lv.group(2)}) ({lv.group(1)})" if lv else None


def unparsable(queries):
    """The PromQL queries promtool cannot parse: {index: error}. Each is a recording rule of
    its own group, so that promtool's error names it."""
    groups = [{"name": f"q{i}", "rules": [{"record": "dashboard:query", "expr": q}]} for i, q in enumerate(queries)]
    with tempfile.NamedTemporaryFile("w", suffix=".yml") as f:
        yaml.safe_dump({"groups": groups}, f)
        f.flush()
        p = subprocess.run(["promtool", "check", "rules", f.name], capture_output=True, text=True, timeout=60)
    if p.returncode == 0:
        return {}
    bad = {}
    for line in (p.stdout + p.stderr).splitlines():
        m = re.search(r'group "q(\d+)".*?: (.*)', line)
        if m:
            bad[int(m.group(1))] = m.group(2)
    return bad or {-1: (p.stdout + p.stderr).strip()}


# ---- rule files -------------------------------------------------------------------------------

CAMEL_CASE = re.compile(r"^([A-Z]+[a-z0-9]+)+$")
TEMPLATE = re.compile(r"\{\{.+}\}")
SENTENCE = re.compile(r"^[A-Z].+\.$")
RECORD_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*(:[a-zA-Z0-9_]+){2,}$")  # level:metric:operations


def runbook_anchors(path):
    """GitHub's anchors of a Markdown file's headings."""
    with open(path) as f:
        headings = re.findall(r"^#+\s+(.*?)\s*$", f.read(), re.M)
    return {re.sub(r"[^\w\- ]", "", h).strip().lower().replace(" ", "-") for h in headings}


def check_alerts(findings, path, anchors):
    groups = yaml.safe_load(open(path))["groups"]
    count = 0
    for g in groups:
        name = g["name"]
        if len(g["rules"]) > 20:
            findings.add("alert-group-rule-count", path, f"group {name} has {len(g['rules'])} rules, more than 20")
        if len(name) > 40:
            findings.add("alert-group-name-length", path, f"group {name}: name longer than 40 characters")
        for r in g["rules"]:
            if "alert" not in r:
                findings.add("rule-file-kind-rule", path, f"recording rule {r.get('record')} in the alerts file")
                continue
            count += 1
            check_alert(findings, path, r, anchors)
    return count


def check_alert(findings, path, r, anchors):
    n = r["alert"]
    where = f"{os.path.basename(path)}: {n}"

    def add(rule, what):
        findings.add(rule, where, what, alert=n)

    if not CAMEL_CASE.match(n):
        add("alert-name-camelcase", "name is not in camel case")
    if len(n) > 40:
        add("alert-name-length", "name longer than 40 characters")
    severity = (r.get("labels") or {}).get("severity")
    if severity not in ("critical", "warning", "info"):
        add("alert-severity-rule", f"severity must be critical, warning or info, is {severity!r}")
    annotations = r.get("annotations") or {}
    description, summary = annotations.get("description"), annotations.get("summary")
    if description is None:
        add("alert-description-missing-rule", "no description annotation")
    elif not TEMPLATE.search(description):
        add("alert-description-templating", f"description uses no template: {description!r}")
    if summary is None:
        add("alert-summary-missing-rule", "no summary annotation")
    else:
        if TEMPLATE.search(summary):
            add("alert-summary-templating", f"summary must be fixed text, not a template: {summary!r}")
        if not SENTENCE.match(summary):
            add("alert-summary-style", f"summary must start with a capital letter and end with a period: {summary!r}")
    url = annotations.get("runbook_url")
    if not url:
        add("alert-runbook-url-rule", "no runbook_url annotation")
    elif anchors is not None and url.partition("#")[2] not in anchors:
        add("alert-runbook-url-rule", f"runbook_url {url}: no such heading in the runbook")


def check_recording(findings, path):
    count = 0
    for g in yaml.safe_load(open(path))["groups"]:
        for r in g["rules"]:
            if "record" not in r:
                findings.add("rule-file-kind-rule", path, f"alert {r.get('alert')} in the recording rules file")
                continue
            count += 1
            if not RECORD_NAME.match(r["record"]):
                findings.add("record-name-rule", path, f"{r['record']}: not level:metric:operations")
    return count


# ---- dashboards -------------------------------------------------------------------------------

# Grafana unit ids (its value formats) these checks accept; a panel with another one fails.
UNITS = set(
    """none short percent percentunit humidity dB hex hex0x sci locale string bool bool_yes_no bool_on_off
    ns µs ms s m h d dtdurationms dtdurations dthms dtdhms timeticks clockms clocks dateTimeAsIso
    dateTimeAsIsoNoDateIfToday dateTimeAsUS dateTimeAsLocal dateTimeAsSystem dateTimeFromNow hertz
    bits bytes kbytes mbytes gbytes tbytes pbytes decbits decbytes deckbytes decmbytes decgbytes dectbytes
    decpbytes pps bps Bps binbps binBps Kbits KBs Mbits MBs Gbits GBs KiBs MiBs GiBs
    ops reqps rps wps iops cps opm rpm wpm cpm mps mpm""".split()
)
# Panel types the unit and query rules apply to, as dashboard-linter has them.
UNIT_PANELS = {"stat", "singlestat", "graph", "table-old", "timeseries", "gauge"}
DATASOURCE = {"$datasource", "${datasource}"}


def panels(d):
    for p in d.get("panels", []):
        yield p
        yield from p.get("panels", [])


def unit_of(p):
    """A panel's unit (an override's first), and whether it maps values to text instead."""
    fc = p.get("fieldConfig") or {}
    props = [pr for o in fc.get("overrides", []) for pr in o.get("properties", [])]
    unit = next((pr["value"] for pr in props if pr["id"] == "unit"), None) or (fc.get("defaults") or {}).get("unit")
    mapped = bool((fc.get("defaults") or {}).get("mappings")) or any(
        pr["id"] == "mappings" and pr.get("value") for pr in props
    )
    if p.get("type") == "stat" and ((p.get("options") or {}).get("reduceOptions") or {}).get("fields"):
        mapped = True  # shows a field's text, not a number
    return unit, mapped


def check_dashboard(findings, path, job, queries):
    d = json.load(open(path))
    title, name = d.get("title", ""), os.path.basename(path)

    def add(rule, what, panel=None):
        findings.add(rule, f"{name}" + (f' panel "{panel}"' if panel else ""), what, dashboard=title, panel=panel)

    if not title or not d.get("uid"):
        add("dashboard-title-uid", "a dashboard needs a title and a uid (links)")
    if d.get("editable"):
        add("uneditable-dashboard", "editable: generated dashboards are edited in the mixin")
    variables = {v["name"]: v for v in d.get("templating", {}).get("list", [])}
    check_variables(variables, add, queries)
    check_import(d, add)
    check_job_variable(variables, job, add)
    for p in panels(d):
        if p.get("type") == "row":
            continue
        t = p.get("title", "")
        if not t or not p.get("description"):
            add("panel-title-description-rule", "needs a title and a description", t)
        if (p.get("datasource") or {}).get("uid") not in DATASOURCE:
            add("panel-datasource-rule", f"uses {p.get('datasource')}, not $datasource", t)
        if p.get("type") in UNIT_PANELS:
            unit, mapped = unit_of(p)
            if not mapped and unit not in UNITS:
                add("panel-units-rule", f"no valid unit ({unit!r}) and no value mappings", t)
        if not p.get("targets"):
            add("panel-no-targets-rule", "has no query", t)
        for target in p.get("targets", []):
            queries.append((lambda rule, what, t=t: add(rule, what, t), target.get("expr", "")))
            check_target(target.get("expr", ""), lambda rule, what, t=t: add(rule, what, t))
    for a in d.get("annotations", {}).get("list", []):
        if a.get("expr"):
            queries.append((lambda rule, what, n=a["name"]: add(rule, f"annotation {n}: {what}"), a["expr"]))


def check_variables(variables, add, queries):
    ds = [v for v in variables.values() if v.get("type") == "datasource"]
    if not ds:
        add("template-datasource-rule", "no data source variable")
    for v in ds:
        if v["name"] != "datasource" or v.get("label") != "Data source":
            add(
                "template-datasource-rule",
                f"data source variable ${v['name']} ({v.get('label')}): name it datasource, label it Data source",
            )
    for name in ("job", "instance"):
        v = variables.get(name)
        rule = f"template-{name}-rule"
        if v is None:
            add(rule, f"no ${name} variable")
            continue
        if (v.get("datasource") or {}).get("uid") not in DATASOURCE or v.get("type") != "query":
            add(rule, f"${name} must be a query of $datasource")
        if v.get("label") != name.title():
            add(rule, f"${name} should be labelled {name.title()}, is {v.get('label')!r}")
        if not v.get("multi") or v.get("allValue") != ".+":
            add(rule, f"${name} should be multi-valued with All as '.+'")
    for v in variables.values():
        if v.get("type") != "query":
            continue
        q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
        if v.get("refresh") != 2:
            add("template-on-time-change-reload-rule", f"${v['name']} should refresh on time range change (2)")
        if (v.get("datasource") or {}).get("uid") not in DATASOURCE:
            add("template-datasource-rule", f"${v['name']} does not query $datasource")
        try:
            promql = variable_promql(q)
        except ValueError as e:
            add("template-label-promql-rule", f"${v['name']}: {e}: {q}")
            continue
        if promql:
            queries.append((lambda rule, what, n=v["name"]: add("template-label-promql-rule", f"${n}: {what}"), promql))


def check_target(expr, add):
    try:
        found = selectors(expr)
    except ValueError as e:
        add("target-promql-rule", f"{e}: {expr}")
        return
    for s in found:
        sel = s["name"] or "{...}"
        for label in ("job", "instance"):
            if not any(
                lb == label and op == "=~" and v in (f"${label}", f"${{{label}}}") for lb, op, v in s["matchers"]
            ):
                add(f"target-{label}-rule", f'{sel} has no {label}=~"${label}"')
        if s["range"] is not None and s["range"] != "$__rate_interval" and s["call"] in ("rate", "irate"):
            add("target-rate-interval-rule", f"{s['call']}({sel}[{s['range']}]) should use $__rate_interval")
        if (s["name"] or "").endswith("_total") and (
            s["range"] is None or s["call"] not in ("rate", "irate", "increase")
        ):
            add("target-counter-agg-rule", f"counter {sel} not in rate(), irate() or increase() over a range")


def check_import(d, add):
    """grafana.com's import: a DS_PROMETHEUS input for the data source variable, and the
    Grafana version, the data source and every panel type the dashboard needs."""
    inputs = d.get("__inputs") or []
    if [(i.get("name"), i.get("type"), i.get("pluginId")) for i in inputs] != [
        ("DS_PROMETHEUS", "datasource", "prometheus")
    ]:
        add("dashboard-import-rule", "__inputs must be one Prometheus data source input, DS_PROMETHEUS")
    required = {(r.get("type"), r.get("id")) for r in d.get("__requires") or []}
    want = {("grafana", "grafana"), ("datasource", "prometheus")} | {
        ("panel", p["type"]) for p in panels(d) if p.get("type") != "row"
    }
    if want - required:
        add("dashboard-import-rule", f"__requires lacks {sorted(want - required)}")
    ds = next((v for v in d.get("templating", {}).get("list", []) if v.get("type") == "datasource"), {})
    if (ds.get("current") or {}).get("value") != "${DS_PROMETHEUS}":
        add("dashboard-import-rule", "the data source variable does not default to ${DS_PROMETHEUS}, the input")
    rest = {k: v for k, v in d.items() if k != "__inputs"}
    if json.dumps(rest).count("${DS_") != json.dumps(ds.get("current")).count("${DS_"):
        add(
            "dashboard-import-rule",
            "${DS_...} outside the data source variable's default (provisioning cannot fill it)",
        )


def check_job_variable(variables, job, add):
    """$job offers every job that has the exporter's build info, with no job matcher of its own
    (a dashboard that shows data whatever the scrape job is called), and opens on the mixin's."""
    v = variables.get("job")
    if v is None:
        return
    q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
    m = re.fullmatch(r"label_values\((reachability_exporter_build_info(?:\{(.*)\})?),\s*job\)", q)
    if not m or any(lb == "job" for lb, _, _ in selectors(m.group(1))[0]["matchers"]):
        add(
            "dashboard-job-variable-rule",
            f"$job must be label_values of reachability_exporter_build_info without a job matcher: {q}",
        )
    current = (v.get("current") or {}).get("value")
    if job is not None and current != job:
        add("dashboard-job-variable-rule", f"$job opens on {current!r}, not the mixin's job {job!r}")


# ---- main -------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--alerts", required=True)
    ap.add_argument("--rules", required=True)
    ap.add_argument("--lint", help="mixtool's exclusions file (mixin/.lint)")
    ap.add_argument("--runbook", help="the runbook every runbook_url links into (docs/runbook.md)")
    ap.add_argument("--job", help="the job the dashboards' $job must open on")
    ap.add_argument("--no-promtool", action="store_true")
    ap.add_argument("dashboards", nargs="*")
    args = ap.parse_args()

    exclusions = (yaml.safe_load(open(args.lint)) or {}).get("exclusions") if args.lint else None
    findings = Findings(exclusions)
    anchors = runbook_anchors(args.runbook) if args.runbook else None
    alerts = check_alerts(findings, args.alerts, anchors)
    records = check_recording(findings, args.rules)
    queries = []  # (add(rule, what), PromQL with Grafana variables)
    for path in args.dashboards:
        check_dashboard(findings, path, args.job, queries)
    if not args.no_promtool:
        bad = unparsable([expand(q) for _, q in queries])
        for i, error in bad.items():
            add, q = queries[i] if i >= 0 else (queries[0][0], "")
            add("target-promql-rule", f"promtool cannot parse {q!r}: {error}")

    for p in findings.problems:
        print(p)
    summary = (
        f"{alerts} alerts, {records} recording rules, {len(args.dashboards)} dashboards, "
        f"{len(queries)} dashboard queries{' parsed by promtool' if not args.no_promtool else ''}; "
        f"{findings.excluded} findings excluded by {args.lint or 'nothing'}"
    )
    if findings.problems:
        print(f"mixinlint: {len(findings.problems)} problem(s); {summary}")
        sys.exit(1)
    print(f"mixinlint: clean; {summary}")


if __name__ == "__main__":
    main()
