// The Grafana dashboards, by file name (dashboards/README.md describes every panel).
{
  grafanaDashboards+:: {
    'reachability-host.json': (import 'host.libsonnet')($._config),
    'reachability-fleet.json': (import 'fleet.libsonnet')($._config),
  },
}
