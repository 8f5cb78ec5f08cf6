"""The alerts: broken variants the unit tests must catch, the short-`for` variant the live run
fires, and the live drive's two probes: `wait` (an expression returns a series before a
deadline: pending, firing, a panel's value) and `silent` (it returns none now)."""

import concurrent.futures
import copy
import json
import os
import subprocess
import sys
import tempfile
import time

import yaml

from ..prom import Prometheus
from .queries import RULE_TESTS, fail, finish, load_rules, load_yaml, ok


def cmd_mutate(args):
    """Each alert broken two or three ways (never fires; fires with no labels as well; `for: 0m`
    when it has a `for`), run against that alert's unit tests alone: promtool must fail each."""
    rules = load_rules()
    tests = load_yaml(RULE_TESTS)
    alerts = [(gi, ri, r) for gi, g in enumerate(rules["groups"]) for ri, r in enumerate(g["rules"]) if "alert" in r]
    jobs = []
    for gi, ri, r in alerts:
        n = r["alert"]
        mutations = [
            ("never fires", {"expr": "vector(1) == 0"}),
            ("fires with no labels as well", {"expr": f"({r['expr'].strip()}) or vector(1)"}),
        ]
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
            # Both shipped files' groups in one file, which the tests load instead of the two.
            with open(os.path.join(tmp, "rules.yml"), "w") as f:
                yaml.safe_dump(m, f, sort_keys=False)
            t["rule_files"] = ["rules.yml"]
            with open(os.path.join(tmp, "test.yml"), "w") as f:
                yaml.safe_dump(t, f, sort_keys=False)
            p = subprocess.run(
                ["promtool", "test", "rules", "test.yml"], cwd=tmp, capture_output=True, text=True, timeout=120
            )
            return n, what, p.returncode

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
        results = list(ex.map(run, jobs))
    for n, what, rc in results:
        if rc == 0:
            fail(f"mutation: {n} with '{what}' still passes its unit tests")
    ok(f"mutation: {len(results)} broken variants of {len(alerts)} alerts, each caught by the unit tests")
    finish("mutation checks")


def cmd_variant(args):
    """One shipped alert with a short `for` and proof="short_for", for the live run to drive
    to firing within seconds."""
    rules = load_rules()
    rule = next(r for g in rules["groups"] for r in g["rules"] if r.get("alert") == args.alert)
    rule = copy.deepcopy(rule)
    rule["for"] = args.for_
    rule.setdefault("labels", {})["proof"] = "short_for"
    with open(args.out, "w") as f:
        yaml.safe_dump({"groups": [{"name": "proof.short_for", "rules": [rule]}]}, f, sort_keys=False)


def cmd_wait(args):
    prom = Prometheus(args.prometheus)
    deadline = time.time() + args.timeout
    start = time.time()
    while time.time() < deadline:
        res = prom.evaluate(args.expr)
        if res.get("status") == "success" and res["data"]["result"]:
            labels = res["data"]["result"][0]["metric"]
            print(f"  ok   after {time.time() - start:.1f}s: {args.what}  {json.dumps(labels, sort_keys=True)}")
            return
        time.sleep(0.5)
    print(f"  FAIL {args.what}: nothing within {args.timeout}s for {args.expr}")
    sys.exit(1)


def cmd_silent(args):
    res = Prometheus(args.prometheus).evaluate(args.expr)
    if res.get("status") != "success":
        fail(f"{args.what}: {res.get('error')}\n       {args.expr}")
    elif res["data"]["result"]:
        fail(f"{args.what}: not silent: {[r['metric'] for r in res['data']['result']]}")
    else:
        ok(f"silent: {args.what}")
        return
    sys.exit(1)
