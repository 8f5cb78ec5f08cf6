// The files the mixin ships, for `jsonnet -m OUTDIR` (scripts/mixin.sh render); paths are
// relative to the repository root. what='rules' (with -S: the alerting and the recording rule
// files as text, apart, as node-mixin renders node_alerts.yaml and node_rules.yaml) or
// 'dashboards' (without -S: jsonnet's own, fast JSON output). The other top-level arguments
// override _config when not empty.
local yaml = import 'lib/yaml.libsonnet';

function(what, job='', extraMatchers='', selector='', runbookURLBase='')
  local given = { job: job, extraMatchers: extraMatchers, selector: selector, runbookURLBase: runbookURLBase };
  local m = (import 'mixin.libsonnet') + { _config+:: { [k]: given[k] for k in std.objectFields(given) if given[k] != '' } };
  local header(first) = first + |||
    # GENERATED from mixin/ by scripts/mixin.sh: edit the mixin (mixin/config.libsonnet for the job
    # and the thresholds), then run `scripts/mixin.sh render .`. What each alert means and what to
    # do: docs/runbook.md. Unit tests of both files: reachability.rules.test.yml
    # (`promtool test rules reachability.rules.test.yml`).
  |||;
  // Without its final newline: jsonnet -S -m ends every file with one of its own.
  local file(head, groups) =
    local text = yaml.manifest({ groups: groups });
    head + std.substr(text, 0, std.length(text) - 1);
  if what == 'rules' then {
    'deploy/prometheus/reachability_alerts.yml': file(header(|||
      # Alerting rules for reachability_exporter. Load reachability_rules.yml too: the alerts read
      # its recorded series.
    |||), m.prometheusAlerts.groups),
    'deploy/prometheus/reachability_rules.yml': file(header(|||
      # Recording rules for reachability_exporter: availability, SLO burn rates, latency, loss and
      # the fleet consensus, for the alerts (reachability_alerts.yml) and the dashboards.
    |||), m.prometheusRules.groups),
  } else if what == 'dashboards' then {
    ['dashboards/' + name]: m.grafanaDashboards[name]
    for name in std.objectFields(m.grafanaDashboards)
  } else error 'what: rules or dashboards, not ' + what
