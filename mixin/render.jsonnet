// The files the mixin ships, for `jsonnet -m OUTDIR` (scripts/mixin.sh render); paths are
// relative to the repository root. what='rules' (with -S: the rule file as text) or
// 'dashboards' (without -S: jsonnet's own, fast JSON output). The other top-level arguments
// override _config when not empty.
local yaml = import 'lib/yaml.libsonnet';

function(what, selector='', runbookURLBase='')
  local given = { selector: selector, runbookURLBase: runbookURLBase };
  local m = (import 'mixin.libsonnet') + { _config+:: { [k]: given[k] for k in std.objectFields(given) if given[k] != '' } };
  local header = |||
    # Recording and alerting rules for reachability_exporter. GENERATED from mixin/ by
    # scripts/mixin.sh: edit the mixin (mixin/config.libsonnet for thresholds and the selector),
    # then run `scripts/mixin.sh render .`. What each alert means and what to do: docs/runbook.md.
    # Unit tests: reachability.rules.test.yml (`promtool test rules reachability.rules.test.yml`).
  |||;
  if what == 'rules' then {
    'deploy/prometheus/reachability.rules.yml':
      local text = yaml.manifest({ groups: m.prometheusRules.groups + m.prometheusAlerts.groups });
      // Without its final newline: jsonnet -S -m ends every file with one of its own.
      header + std.substr(text, 0, std.length(text) - 1),
  } else if what == 'dashboards' then {
    ['dashboards/' + name]: m.grafanaDashboards[name]
    for name in std.objectFields(m.grafanaDashboards)
  } else error 'what: rules or dashboards, not ' + what
