// reachability_exporter's monitoring mixin (the monitoring-mixins layout): _config,
// prometheusRules (recording), prometheusAlerts, grafanaDashboards. Plain jsonnet, no libraries.
//
//   local reachability = (import 'mixin.libsonnet') + { _config+:: { selector: 'job="edge"' } };
//   reachability.prometheusAlerts   // {groups: [...]}, the alerts file's content
//   reachability.prometheusRules    // the recording rules file's: the alerts read its series
//
// The shipped files (deploy/prometheus/reachability_alerts.yml and reachability_rules.yml,
// dashboards/*.json and, through deploy/kubernetes/generate.py, the PrometheusRule) are this
// mixin's default rendering: scripts/mixin.sh renders and checks them.
(import 'config.libsonnet')
+ (import 'rules/rules.libsonnet')
+ (import 'rules/consensus.libsonnet')
+ (import 'alerts/alerts.libsonnet')
+ (import 'alerts/consensus.libsonnet')
+ (import 'dashboards/dashboards.libsonnet')
