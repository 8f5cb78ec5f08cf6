// reachability_exporter's monitoring mixin (the monitoring-mixins layout): _config,
// prometheusRules (recording), prometheusAlerts, grafanaDashboards. Plain jsonnet, no libraries.
//
//   local reachability = (import 'mixin.libsonnet') + { _config+:: { job: 'edge' } };
//   reachability.prometheusAlerts   // {groups: [...]}, the alerts file's content
//   reachability.prometheusRules    // the recording rules file's: the alerts read its series
//
// Vendored (jsonnet-bundler puts it in vendor/mixin), it is (import 'mixin/mixin.libsonnet')
// with -J vendor: its own imports are relative. The shipped files
// (deploy/prometheus/reachability_alerts.yml and reachability_rules.yml, dashboards/*.json and,
// through deploy/kubernetes/generate.py, the PrometheusRule) are its default rendering:
// scripts/mixin.sh renders and checks them.
(import 'config.libsonnet')
+ (import 'rules/rules.libsonnet')
+ (import 'rules/consensus.libsonnet')
+ (import 'alerts/alerts.libsonnet')
+ (import 'alerts/consensus.libsonnet')
+ (import 'dashboards/dashboards.libsonnet')
