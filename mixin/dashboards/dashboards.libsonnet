// The Grafana dashboards, by file name (dashboards/README.md describes every panel), each
// importable from grafana.com as it is (__inputs, __requires) and provisioned as it is.
local g = import '../lib/grafana.libsonnet';

{
  grafanaDashboards+:: {
    'reachability-host.json': g.importable((import 'host.libsonnet')($._config)),
    'reachability-fleet.json': g.importable((import 'fleet.libsonnet')($._config)),
  },
}
