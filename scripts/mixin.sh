#!/usr/bin/env bash
# The monitoring mixin (mixin/) and the files generated from it.
#
#   scripts/mixin.sh render OUTDIR [--job=NAME] [--extra-matchers=MATCHERS] [--selector=MATCHERS]
#                                  [--runbook-url-base=URL]
#       Renders into OUTDIR, laid out as the repository: deploy/prometheus/reachability_alerts.yml
#       and reachability_rules.yml (alerts and recording rules apart, as node-mixin renders
#       node_alerts.yaml and node_rules.yaml), deploy/kubernetes/prometheusrule.yaml (both, through
#       deploy/kubernetes/generate.py), dashboards/reachability-{host,fleet}.json.
#       `scripts/mixin.sh render .` regenerates the shipped files; --job=edge renders for another
#       scrape job, --extra-matchers='site!=""' adds matchers to every rule, alert and dashboard
#       query, --selector replaces what the rules and alerts select.
#   scripts/mixin.sh check
#       1. The shipped files are the default rendering (a diff if not).
#       2. `promtool check rules` and the rule unit tests (deploy/prometheus/reachability.rules.test.yml).
#       3. The guideline checker (scripts/mixinlint.py: mixtool lint's rules, mixin/.lint's
#          exclusions) passes, and fails on two variants rendered to break it: an alert whose
#          summary is a template, a panel that ignores $job.
#       4. Job edge with site!="": `promtool check rules` and the checker pass, no
#          job="reachability" is left, the dashboards open on edge, and a unit test of its own
#          (the fleet consensus counting the selected sites only, too) passes.
#       5. The mixin vendored into a scratch project as jsonnet-bundler lays it out, rendered
#          there with `jsonnet -J vendor` and the job overridden (see check_vendored).
#       6. `amtool check-config` on the fleet's and compose's Alertmanager configurations, whose
#          inhibitions must name only alerts that exist (the rendered alerts and
#          deploy/fleet/fleet.rules.yml).
set -euo pipefail
cd "$(dirname "$(realpath "$0")")/.."

alerts=deploy/prometheus/reachability_alerts.yml
rules=deploy/prometheus/reachability_rules.yml
generated=("$alerts" "$rules" deploy/kubernetes/prometheusrule.yaml
           dashboards/reachability-host.json dashboards/reachability-fleet.json)
alertmanagers=(deploy/fleet/alertmanager.yml deploy/compose/alertmanager.yml)
usage="usage: scripts/mixin.sh render OUTDIR [--job=NAME] [--extra-matchers=MATCHERS] [--selector=MATCHERS] [--runbook-url-base=URL] | check"

need_apt=()
command -v jsonnet >/dev/null || need_apt+=(jsonnet)
command -v promtool >/dev/null || need_apt+=(prometheus)
command -v amtool >/dev/null || need_apt+=(prometheus-alertmanager)
python3 -c 'import yaml' 2>/dev/null || need_apt+=(python3-yaml)
if ((${#need_apt[@]})); then
  echo "installing: ${need_apt[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

render() {  # render OUTDIR [jsonnet --tla-str arguments...]
  local out=$1; shift
  mkdir -p "$out/deploy/prometheus" "$out/deploy/kubernetes" "$out/dashboards"
  jsonnet -S -m "$out" --tla-str what=rules "$@" mixin/render.jsonnet >/dev/null
  jsonnet -m "$out" --tla-str what=dashboards "$@" mixin/render.jsonnet >/dev/null
  # The PrometheusRule holds both files' groups; generate.py's own function makes it.
  python3 -B - "$out" "$rules" "$alerts" <<'EOF'
import os, sys
sys.path.insert(0, "deploy/kubernetes")
import generate
out, rules, alerts = sys.argv[1:]
texts = [open(os.path.join(out, f)).read() for f in (rules, alerts)]
with open(os.path.join(out, "deploy/kubernetes/prometheusrule.yaml"), "w") as f:
    f.write(generate.prometheusrule(*texts))
EOF
}

cmd_render() {
  [ $# -ge 1 ] || { echo "$usage" >&2; exit 64; }
  local out=$1; shift
  local args=()
  for a in "$@"; do
    case "$a" in
      --job=*) args+=(--tla-str "job=${a#--job=}") ;;
      --extra-matchers=*) args+=(--tla-str "extraMatchers=${a#--extra-matchers=}") ;;
      --selector=*) args+=(--tla-str "selector=${a#--selector=}") ;;
      --runbook-url-base=*) args+=(--tla-str "runbookURLBase=${a#--runbook-url-base=}") ;;
      *) echo "scripts/mixin.sh render: unknown argument $a" >&2; exit 64 ;;
    esac
  done
  render "$out" "${args[@]}"
  for f in "${generated[@]}"; do echo "$out/$f"; done
}

# The guideline checker: lint JOB ALERTS RULES DASHBOARD...
lint() {
  local job=$1 a=$2 r=$3; shift 3
  python3 -B scripts/mixinlint.py --lint mixin/.lint --runbook docs/runbook.md --job "$job" --alerts "$a" --rules "$r" "$@"
}

# expect_lint_failure WHAT RULE OUTDIR: the checker must fail on OUTDIR's files, naming RULE.
expect_lint_failure() {
  local what=$1 rule=$2 out=$3 log
  if log=$(lint reachability "$out/$alerts" "$out/$rules" "$out"/dashboards/*.json); then
    echo "  FAIL the checker passed $what"; return 1
  elif grep -q "^\[$rule\]" <<<"$log"; then
    echo "  ok   the checker fails $what: $(grep -m1 "^\[$rule\]" <<<"$log" | cut -c1-150)"
  else
    echo "  FAIL the checker failed $what, but not with [$rule]:"; echo "$log"; return 1
  fi
}

check_guidelines() {  # OUTDIR: the default rendering
  local out=$1 bad=$tmp/bad failed=0
  lint reachability "$out/$alerts" "$out/$rules" "$out"/dashboards/*.json || failed=1
  # Variants rendered from the mixin to break one guideline each; the checker must catch both.
  mkdir -p "$bad/deploy/prometheus" "$bad/dashboards"
  cp "$out/$rules" "$bad/$rules"
  cp "$out"/dashboards/*.json "$bad/dashboards/"
  jsonnet -S -J mixin -e "
    local m = (import 'mixin.libsonnet') + { prometheusAlerts+:: { groups: [
      g { rules: [r + (if r.alert == 'ReachabilityExporterDown'
                       then { annotations+: { summary: '{{ \$labels.instance }} is down.' } } else {})
                  for r in g.rules] }
      for g in super.groups
    ] } };
    (import 'lib/yaml.libsonnet').manifest(m.prometheusAlerts)" > "$bad/$alerts" || return 1
  expect_lint_failure "a templated summary" alert-summary-templating "$bad" || failed=1
  cp "$out/$alerts" "$bad/$alerts"
  python3 - "$bad/dashboards/reachability-host.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
t = next(t for p in d["panels"] for t in p.get("targets", []))
t["expr"] = t["expr"].replace('job=~"$job"', 'job="reachability"')
json.dump(d, open(sys.argv[1], "w"))
EOF
  expect_lint_failure "a panel that selects job=\"reachability\"" target-job-rule "$bad" || failed=1
  return "$failed"
}

check_custom() {  # OUTDIR: rendered for job edge with site!=""
  local out=$1 failed=0
  promtool check rules "$out/$alerts" "$out/$rules" || failed=1
  lint edge "$out/$alerts" "$out/$rules" "$out"/dashboards/*.json || failed=1
  if python3 - "$out" "${generated[@]}" <<'EOF'
import json, os, sys
out, files = sys.argv[1], sys.argv[2:]
bad = 0
def strings(v):
    if isinstance(v, dict):
        for x in v.values(): yield from strings(x)
    elif isinstance(v, list):
        for x in v: yield from strings(x)
    elif isinstance(v, str):
        yield v
for f in files:
    text = open(os.path.join(out, f)).read()
    found = [s for s in strings(json.loads(text))] if f.endswith(".json") else text.splitlines()
    for s in found:
        if 'job="reachability"' in s:
            print(f"  FAIL {f}: still selects the default job: {s[:140]}")
            bad = 1
    if f.endswith(".json"):
        v = {x["name"]: x for x in json.loads(text)["templating"]["list"]}
        for name in ("job", "site", "instance"):
            q = v[name]["query"]["query"]
            if 'site!=""' not in q:
                print(f"  FAIL {f}: ${name} does not select site!=\"\": {q}")
                bad = 1
        if v["job"]["current"].get("value") != "edge":
            print(f"  FAIL {f}: $job opens on {v['job']['current']}, not edge")
            bad = 1
sys.exit(bad)
EOF
  then
    echo "  ok   no job=\"reachability\" left; the dashboards open on edge and their variables select site!=\"\""
  else
    failed=1
  fi
  # The selector applies in full: an exporter without a site label is not one of these.
  cat > "$out/deploy/prometheus/custom.test.yml" <<'EOF'
rule_files: [reachability_rules.yml, reachability_alerts.yml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - {series: 'up{job="edge",site="north",instance="a"}', values: '1 0x10'}
      - {series: 'up{job="edge",instance="no-site"}', values: '0x10'}
      - {series: 'up{job="reachability",site="north",instance="b"}', values: '0x10'}
    alert_rule_test:
      - eval_time: 5m
        alertname: ReachabilityExporterDown
        exp_alerts:
          - exp_labels: {severity: critical, job: edge, site: north, instance: a}
            exp_annotations:
              summary: "Prometheus cannot scrape a reachability_exporter."
              description: "Prometheus has not been able to scrape a for 2 minutes; this site's internet reachability is unknown."
              runbook_url: "https://github.com/reachability-exporter/reachability_exporter/blob/main/docs/runbook.md#reachabilityexporterdown"
  - interval: 1m
    input_series:
      - {series: 'up{job="edge",instance="no-site"}', values: '1x15'}
    alert_rule_test:
      - eval_time: 11m
        alertname: ReachabilityExporterAbsent
        exp_alerts:
          - exp_labels: {severity: critical, job: edge}
            exp_annotations:
              summary: "No reachability_exporter is scraped."
              description: "Prometheus has had no up{job=\"edge\", site!=\"\"} series for 10 minutes: service discovery or the scrape configuration lost every exporter of job edge."
              runbook_url: "https://github.com/reachability-exporter/reachability_exporter/blob/main/docs/runbook.md#reachabilityexporterabsent"
  # Fleet consensus counts the selected sites only (synthetic series, documentation addresses): e1..e4 fail 192.0.2.99, e5 reaches it (4 of 5).
  # Counted, the site without a site label and the job="reachability" one (both reaching it)
  # would make 4 of 7 and no alert.
  - interval: 1m
    input_series:
      - {series: 'reachability_probe_success{job="edge",site="e1",instance="e1",probe="icmp",target="192.0.2.11"}', values: '1x10'}
      - {series: 'reachability_probe_success{job="edge",site="e2",instance="e2",probe="icmp",target="192.0.2.11"}', values: '1x10'}
      - {series: 'reachability_probe_success{job="edge",site="e3",instance="e3",probe="icmp",target="192.0.2.11"}', values: '1x10'}
      - {series: 'reachability_probe_success{job="edge",site="e4",instance="e4",probe="icmp",target="192.0.2.11"}', values: '1x10'}
      - {series: 'reachability_probe_success{job="edge",site="e5",instance="e5",probe="icmp",target="192.0.2.11"}', values: '1x10'}
      - {series: 'reachability_probe_success{job="edge",site="e1",instance="e1",probe="icmp",target="192.0.2.99"}', values: '0x10'}
      - {series: 'reachability_probe_success{job="edge",site="e2",instance="e2",probe="icmp",target="192.0.2.99"}', values: '0x10'}
      - {series: 'reachability_probe_success{job="edge",site="e3",instance="e3",probe="icmp",target="192.0.2.99"}', values: '0x10'}
      - {series: 'reachability_probe_success{job="edge",site="e4",instance="e4",probe="icmp",target="192.0.2.99"}', values: '0x10'}
      - {series: 'reachability_probe_success{job="edge",site="e5",instance="e5",probe="icmp",target="192.0.2.99"}', values: '1x10'}
      - {series: 'reachability_probe_success{job="edge",instance="no-site",probe="icmp",target="192.0.2.11"}', values: '1x10'}
      - {series: 'reachability_probe_success{job="edge",instance="no-site",probe="icmp",target="192.0.2.99"}', values: '1x10'}
      - {series: 'reachability_probe_success{job="reachability",site="e6",instance="e6",probe="icmp",target="192.0.2.11"}', values: '1x10'}
      - {series: 'reachability_probe_success{job="reachability",site="e6",instance="e6",probe="icmp",target="192.0.2.99"}', values: '1x10'}
    alert_rule_test:
      - eval_time: 6m
        alertname: ReachabilityTargetDown
        exp_alerts:
          - exp_labels: {severity: warning, job: edge, probe: icmp, target: 192.0.2.99}
            exp_annotations:
              summary: "A probe target is down from at least 80% of the sites."
              description: "4 of 5 sites that reach other targets have failed icmp probes to 192.0.2.99 for 5 minutes (threshold: 80% of at least 3 sites): the target, or the path every site shares to it, is down, not the sites."
              runbook_url: "https://github.com/reachability-exporter/reachability_exporter/blob/main/docs/runbook.md#reachabilitytargetdown"
EOF
  (cd "$out/deploy/prometheus" && promtool test rules custom.test.yml) || failed=1
  return "$failed"
}

# A scratch project that uses the mixin as jsonnet-bundler would lay it out: jsonnetfile.json
# naming it by local path (jb vendors a local source as vendor/<the directory's base name>, here
# vendor/mixin; jb itself is not packaged here), vendor/mixin a copy of mixin/ alone (what a git
# source with subdir mixin gives: no import may reach outside it), main.jsonnet the project's
# mixin with the job overridden, and alerts, rules and dashboards rendered as node-mixin's
# Makefile does, with `jsonnet -J vendor`, from another directory than the repository.
check_vendored() {
  local project=$tmp/project failed=0
  mkdir -p "$project/vendor" "$project/dashboards_out"
  cp -r mixin "$project/vendor/mixin"
  local source; source=$(realpath --relative-to="$project" mixin)
  printf '{\n  "version": 1,\n  "dependencies": [\n    {"source": {"local": {"directory": "%s"}}, "version": ""}\n  ],\n  "legacyImports": true\n}\n' \
    "$source" > "$project/jsonnetfile.json"
  cp "$project/jsonnetfile.json" "$project/jsonnetfile.lock.json"  # what jb install writes for a local source
  cat > "$project/main.jsonnet" <<'EOF'
// The project's reachability mixin: the vendored one with the scrape job this project uses.
(import 'mixin/mixin.libsonnet') + { _config+:: { job: 'edge' } }
EOF
  echo "std.manifestYamlDoc((import 'main.jsonnet').prometheusAlerts)" > "$project/alerts.jsonnet"
  echo "std.manifestYamlDoc((import 'main.jsonnet').prometheusRules)" > "$project/rules.jsonnet"
  echo "(import 'main.jsonnet').grafanaDashboards" > "$project/dashboards.jsonnet"
  (
    cd "$project"
    jsonnet -J vendor -S alerts.jsonnet > reachability_alerts.yml
    jsonnet -J vendor -S rules.jsonnet > reachability_rules.yml
    jsonnet -J vendor -m dashboards_out dashboards.jsonnet >/dev/null
  ) || return 1
  echo "  project: jsonnetfile.json (local source $source), vendor/mixin/ ($(find "$project/vendor/mixin" -type f | wc -l) files), main.jsonnet (job edge)"
  promtool check rules "$project/reachability_alerts.yml" "$project/reachability_rules.yml" || failed=1
  lint edge "$project/reachability_alerts.yml" "$project/reachability_rules.yml" "$project"/dashboards_out/*.json || failed=1
  if grep -rn -e 'job="reachability"' -e 'job=\\"reachability\\"' "$project"/*.yml "$project"/dashboards_out; then
    echo "  FAIL the vendored rendering still selects job=\"reachability\" (above)"; failed=1
  else
    echo "  ok   no job=\"reachability\" in the vendored rendering; every panel selects job=~\"\$job\", \$job opens on edge (the checker)"
  fi
  return "$failed"
}

check_alertmanagers() {  # ALERTS: the rendered alerts
  amtool check-config "${alertmanagers[@]}" | grep -E '^Checking|SUCCESS|FAIL'
  if python3 - "$1" deploy/fleet/fleet.rules.yml "${alertmanagers[@]}" <<'EOF'
import re, sys
import yaml
rule_files, configs = sys.argv[1:3], sys.argv[3:]
alerts = {r["alert"] for f in rule_files for g in yaml.safe_load(open(f))["groups"] for r in g["rules"] if "alert" in r}
def alternatives(value):  # "Reachability(A|B.*)" -> ["ReachabilityA", "ReachabilityB.*"]; "A|B" -> ["A", "B"]
    m = re.fullmatch(r"(\w*)\((.*)\)", value)
    return [m.group(1) + a for a in m.group(2).split("|")] if m else value.split("|")
bad = 0
for path in configs:
    for i, rule in enumerate(yaml.safe_load(open(path)).get("inhibit_rules", [])):
        for side in ("source_matchers", "target_matchers"):
            for matcher in rule.get(side, []):
                m = re.fullmatch(r'\s*alertname\s*(=~|=)\s*"?([^"]*)"?\s*', matcher)
                if not m:
                    continue
                for alt in alternatives(m.group(2)) if m.group(1) == "=~" else [m.group(2)]:
                    if not any(re.fullmatch(alt, a) for a in alerts):
                        print(f"  FAIL {path}: inhibit rule {i + 1} {side}: {alt} matches no alert of the rules")
                        bad = 1
sys.exit(bad)
EOF
  then
    echo "  ok   every alert name in the inhibitions is an alert of the shipped or fleet rules"
  else
    return 1
  fi
}

cmd_check() {
  tmp=$(mktemp -d /tmp/rx-mixin.XXXXXX)
  trap 'rm -rf "$tmp"' EXIT
  local failed=0

  echo "== the shipped files are the mixin's default rendering"
  render "$tmp/default"
  for f in "${generated[@]}"; do
    if diff -u --label "$f (shipped)" --label "$f (rendered)" "$f" "$tmp/default/$f"; then
      echo "  ok   $f"
    else
      echo "  FAIL $f differs from the mixin's rendering: run scripts/mixin.sh render ."
      failed=1
    fi
  done

  echo "== promtool check rules and the unit tests, default rendering"
  promtool check rules "$tmp/default/$alerts" "$tmp/default/$rules"
  cp deploy/prometheus/reachability.rules.test.yml "$tmp/default/deploy/prometheus/"
  (cd "$tmp/default/deploy/prometheus" && promtool test rules reachability.rules.test.yml)

  echo "== the guidelines (scripts/mixinlint.py, mixtool lint's rules), default rendering and two broken variants"
  check_guidelines "$tmp/default" || failed=1

  echo "== job edge, extra matchers site!=\"\""
  render "$tmp/custom" --tla-str job=edge --tla-str 'extraMatchers=site!=""'
  check_custom "$tmp/custom" || failed=1

  echo "== vendored: a scratch project renders the mixin from vendor/ with jsonnet -J vendor, job edge"
  check_vendored || failed=1

  echo "== the Alertmanager configurations: amtool check-config; every alert name they match exists"
  check_alertmanagers "$tmp/default/$alerts" || failed=1

  if [ "$failed" != 0 ]; then echo "mixin check: FAILED"; exit 1; fi
  echo "mixin check: passed"
}

case "${1:-}" in
  render) shift; cmd_render "$@" ;;
  check) shift; cmd_check "$@" ;;
  *) echo "$usage" >&2; exit 64 ;;
esac
