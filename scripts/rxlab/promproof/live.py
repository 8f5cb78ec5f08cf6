"""The live run, against the real Prometheus that scrapes the two exporters with the shipped
rules: every dashboard, variable, annotation and rule query evaluated through the HTTP API
(`live`, once per phase), what the exporters serve against the catalog (`served`), and one
panel's query for the shell's value checks (`panel`).

Metrics that may legitimately have no series in the proof run are listed in ABSENT_IN_RUN with
the reason; every other dashboard query and recording rule must return series in some phase,
and no query may error. Which names a query selects comes from the name check (dashboards.py,
through Prometheus' own parser), not from parsing PromQL here."""

import json
import os

from ..prom import Prometheus
from .queries import (
    DASHBOARDS,
    Catalog,
    all_panels,
    expressions,
    fail,
    finish,
    grafana_regex,
    load_dashboard,
    load_rules,
    ok,
    recorded_names,
    substitute,
    template_values,
)

# Metrics that exist but have no series in this run, and why.
ABSENT_IN_RUN = {
    "reachability_tls_certificate_expiry_timestamp_seconds": "no HTTPS target on loopback in the proof",
    "reachability_probe_portal_signals_total": "no captive portal in the proof",
    "ALERTS": "alerts only exist while pending or firing",
}
SLOW_GROUP = "recording rule of a 1m group: in a ~1 min run it may not have evaluated, or evaluated before its inputs had samples"
# Series Prometheus makes itself with the job's labels: those it adds to every scrape (its
# documentation, "Jobs and instances") and the alerts' state; not the exporter's.
PROMETHEUS_OWN = {
    "up",
    "scrape_duration_seconds",
    "scrape_samples_scraped",
    "scrape_samples_post_metric_relabeling",
    "scrape_series_added",
    "ALERTS",
    "ALERTS_FOR_STATE",
}
TARGET_LABELS = {"__name__", "job", "instance"}


def may_be_empty(names, unevaluated):
    for n in sorted(names):
        if n in ABSENT_IN_RUN:
            return ABSENT_IN_RUN[n]
        if n in unevaluated:
            return SLOW_GROUP
    return None


def cmd_live(args):
    """One phase of the live run. Errors fail at once; whether a query returned series is merged
    into --state across phases, and --enforce (the last phase) fails on queries that never did
    and are not allowed to be empty."""
    prom = Prometheus(args.prometheus)
    instances = args.instances.split(",")
    with open(args.names) as f:
        selected = json.load(f)
    rules_api = prom.data("/api/v1/rules")["groups"]
    unevaluated = {
        r["name"] for g in rules_api for r in g["rules"] if r["type"] == "recording" and r.get("health") != "ok"
    }
    # Recording rules of slow (>= 1m) groups evaluate once or twice in this short run, possibly
    # before their inputs have samples: empty results there are timing, not breakage (errors
    # still fail). Faster groups must return series.
    unevaluated |= {
        r["record"]
        for g in load_rules()["groups"]
        if g.get("interval", "").endswith(("m", "h"))
        for r in g["rules"]
        if "record" in r
    }
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
            res = prom.evaluate(q, instant)
            if res.get("status") != "success" or res.get("warnings"):
                errors += 1
                fail(f"{key}: {res.get('error') or res.get('warnings')}\n       {q}")
            elif res["data"]["result"]:
                entry["data"] = True

    values = template_values()
    print(
        f"phase {args.phase}: template variables $job=reachability, $instance= each of {instances} on the host view "
        f"and .* on the fleet view, $target=.*, $__rate_interval={values['__rate_interval']}, $__range={values['__range']}"
    )
    for key, kind, queries, instant in expressions([grafana_regex(i) for i in instances]):
        if key not in selected:
            fail(f"{key}: not in the name check's output ({args.names})")
            continue
        if kind == "alert expression":
            reason = "alert condition not true (not firing)"
        else:
            reason = may_be_empty(selected[key], unevaluated)
            if kind == "dashboard annotation" and not reason:
                reason = "annotations mark events; none need have happened"
        evaluate(key, kind, queries, instant, reason)
    bad = [
        (g["name"], r["name"], r.get("lastError")) for g in rules_api for r in g["rules"] if r.get("health") == "err"
    ]
    for g, n, e in bad:
        fail(f"rule {g}/{n} health err: {e}")
    evaluated = sum(1 for g in rules_api for r in g["rules"] if r.get("health") == "ok")
    total = sum(len(g["rules"]) for g in rules_api)
    ok(
        f"Prometheus rule health: {evaluated}/{total} evaluated ok, {len(bad)} errors, "
        f"{total - evaluated - len(bad)} not evaluated yet; may be empty (slow group or not evaluated): {sorted(unevaluated) or 'none'}"
    )
    print(f"  query errors in this phase: {errors}")
    with open(args.state, "w") as f:
        json.dump(state, f, indent=1)
    if args.enforce:
        enforce(state)
    finish(f"live queries, phase {args.phase}")


def enforce(state):
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


def cmd_served(args):
    """What Prometheus scraped from the exporters against the catalog: every series name is one
    of the catalog's, with no label the catalog does not list; every family's type and help (the
    targets metadata API) are the catalog's."""
    catalog, prom = Catalog(args.binary), Prometheus(args.prometheus)
    series = catalog.series()
    match = {"match[]": '{job="reachability"}'}
    # The job's series but Prometheus' own and those of the recording rules (which keep the job label).
    names = set(prom.data("/api/v1/label/__name__/values", **match)) - PROMETHEUS_OWN - recorded_names(load_rules())
    for n in sorted(names - set(series)):
        fail(f"served: {n} is not in the catalog (reachability_exporter metrics)")
    mismatched, instances = {}, set()
    for s in prom.data("/api/v1/series", **match):
        n = s["__name__"]
        if n in names:
            instances.add(s.get("instance"))
        if n in names and n in series:
            le = {"le"} if series[n]["type"] == "histogram" and n.endswith("_bucket") else set()
            # A subset: Prometheus stores a label with an empty value (reason="") as no label.
            got, want = set(s) - TARGET_LABELS - le, set(series[n]["labels"])
            if n == "reachability_probe_labels_info":  # its other labels are the file's constant labels
                want = got
            if not got <= want:
                mismatched.setdefault(n, (sorted(got), sorted(want)))
    for n, (got, want) in sorted(mismatched.items()):
        fail(f"served: {n} has labels {got}, beyond the catalog's {want}")
    if instances != set(args.instances.split(",")):
        fail(f"served: series from {sorted(instances)}, expected {args.instances}")
    families = set()
    for e in prom.data("/api/v1/targets/metadata", match_target='{job="reachability"}'):
        families.add(e["metric"])
        m = catalog.family(e["metric"], e["type"])
        if m is None or m["type"] != e["type"] or m["help"] != e["help"]:
            fail(
                f"served: family {e['metric']} ({e['type']}: {e['help']!r}) is not the catalog's "
                f"({m and m['type']}: {m and m['help']!r})"
            )
    absent = sorted(
        m for m in catalog.metrics if not any(s in names for s, owner in series.items() if owner["name"] == m)
    )
    ok(
        f"served ({args.phase}): {len(names)} series names from {len(instances)} exporters, each in the catalog, no label "
        f"beyond its; {len(families)} families, type and help as the catalog's"
    )
    print(f"  note: catalog metrics with no series in this run ({len(absent)}): {', '.join(absent) or 'none'}")
    finish(f"served metrics, phase {args.phase}")


def cmd_panel(args):
    """Prints a panel's query with the variables filled in (for value checks in the shell script)."""
    d = load_dashboard(os.path.join(DASHBOARDS, args.dashboard))
    p = next(p for p in all_panels(d) if p["title"] == args.title)
    t = next(t for t in p["targets"] if t["refId"] == args.ref)
    print(substitute(t["expr"], template_values(grafana_regex(args.instance) if args.instance else ".*")))
