// Just enough of Grafana's dashboard model for these two dashboards (schema 39, Grafana 10+):
// rows, panels with Prometheus queries, and the template variables. No grafonnet: the mixin
// builds offline with plain jsonnet.
local ds = { type: 'prometheus', uid: '${datasource}' };

{
  // ', ' and _config.extraMatchers, or nothing.
  extra(c):: if c.extraMatchers == '' then '' else ', ' + c.extraMatchers,

  // The matchers and filters every query is built from, for a _config.
  vars(c):: {
    // The dashboard's choice of exporters: job, site and instance variables, and the
    // _config's extra matchers.
    local sel = 'job=~"$job", %s=~"$site", instance=~"$instance"' % c.siteLabel + $.extra(c),
    sel: sel,
    site: c.siteLabel,
    // The overall scope's label value (lib/verdict_labels.json, generated from the exporter's types).
    overall: (import 'verdict_labels.json').scope.overall,
    local on = 'on (job, %s, instance, target)' % c.siteLabel,
    local chosen = std.join('', [', %s=~"$probe_%s"' % [l, l] for l in c.probeLabels]),
    // Appended to a per-probe vector: keeps the probes whose constant labels match the
    // $probe_<label> variables (reachability_probe_labels_info), and every probe of an
    // exporter that has no probe labels at all (the info metric is absent there).
    probes:
      if c.probeLabels == [] then ''
      else ' and %s (reachability_probe_labels_info{%s%s} or %s (reachability_probe_info{%s} unless %s reachability_probe_labels_info{%s}))'
           % [on, sel, chosen, on, sel, on, sel],
    // Availability over a window as the recording rules count it: samples online divided by
    // the scrapes attempted, so a site Prometheus cannot scrape is not counted as online.
    availability(w)::
      '(sum_over_time(reachability_internet_reachable{%(sel)s}[%(w)s]) or count_over_time(up{%(sel)s}[%(w)s]) * 0) / count_over_time(up{%(sel)s}[%(w)s])'
      % { sel: sel, w: w },
    coverage(w)::
      '(count_over_time(reachability_internet_reachable{%(sel)s}[%(w)s]) or count_over_time(up{%(sel)s}[%(w)s]) * 0) / count_over_time(up{%(sel)s}[%(w)s])'
      % { sel: sel, w: w },
  },

  // What grafana.com's import (and Dashboards -> Import) reads: the data source input the
  // $datasource variable defaults to, and the Grafana version, data source and panel types the
  // dashboard needs (from its panels, so a new panel type cannot be forgotten).
  importable(d):: d {
    local names = {
      bargauge: 'Bar gauge',
      gauge: 'Gauge',
      heatmap: 'Heatmap',
      stat: 'Stat',
      'state-timeline': 'State timeline',
      table: 'Table',
      text: 'Text',
      timeseries: 'Time series',
    },
    local types = std.set([
      p.type
      for p in std.flattenArrays([[q] + std.get(q, 'panels', []) for q in d.panels])
      if p.type != 'row'
    ]),
    __inputs: [{
      name: 'DS_PROMETHEUS',
      label: 'Prometheus',
      description: 'The Prometheus that scrapes reachability_exporter (and evaluates its rules).',
      type: 'datasource',
      pluginId: 'prometheus',
      pluginName: 'Prometheus',
    }],
    __requires: [
      { type: 'grafana', id: 'grafana', name: 'Grafana', version: '10.0.0' },
      { type: 'datasource', id: 'prometheus', name: 'Prometheus', version: '1.0.0' },
    ] + [{ type: 'panel', id: t, name: names[t], version: '' } for t in types],
  },

  row(id, title, y):: { type: 'row', title: title, collapsed: false, id: id, gridPos: { h: 1, w: 24, x: 0, y: y }, panels: [] },

  // Queries get refIds A, B, C... in order (table transformations refer to them).
  panel(type, id, title, gridPos, description, targets):: {
    id: id,
    type: type,
    title: title,
    description: description,
    datasource: ds,
    gridPos: { h: gridPos.h, w: gridPos.w, x: gridPos.x, y: gridPos.y },
    targets: std.mapWithIndex(function(i, t) t { refId: std.char(65 + i) }, targets),
  },

  local target(expr, legend, instant, format) = {
    datasource: ds,
    editorMode: 'code',
    expr: expr,
    legendFormat: legend,
    range: !instant,
    instant: instant,
    format: format,
  },
  instant(expr, legend='__auto', format='time_series'):: target(expr, legend, true, format),
  range(expr, legend='__auto', format='time_series'):: target(expr, legend, false, format),
  table(expr, legend='__auto'):: target(expr, legend, true, 'table'),

  // Any Prometheus data source. Imported from grafana.com (or Dashboards -> Import), the
  // data source chosen for the DS_PROMETHEUS input replaces ${DS_PROMETHEUS} and is the one
  // selected; provisioned as they are, no data source has that uid and Grafana selects its
  // default Prometheus.
  datasourceVariable:: {
    name: 'datasource',
    label: 'Data source',
    type: 'datasource',
    query: 'prometheus',
    current: { selected: false, text: '${DS_PROMETHEUS}', value: '${DS_PROMETHEUS}' },
    hide: 0,
    refresh: 1,
    regex: '',
    options: [],
    includeAll: false,
    multi: false,
  },

  // A label_values variable; multi-valued ones offer All, which matches `allValue` (by
  // default everything, also series without the label).
  queryVariable(name, label, query, multi=false, allValue='.*', current={}):: {
    name: name,
    label: label,
    type: 'query',
    datasource: ds,
    query: { query: query, refId: 'PrometheusVariableQueryEditor-VariableQuery', qryType: 1 },
    definition: query,
    refresh: 2,
    sort: 1,
    multi: multi,
    includeAll: multi,
    current: current,
    hide: 0,
    regex: '',
    options: [],
    skipUrlSync: false,
  } + (if multi then { allValue: allValue } else {}),

  // $datasource, $job, $site, $instance, then one $probe_<label> per _config.probeLabels.
  // $job offers every job that has the exporter's build info (whatever the scrape job is
  // called) and opens on _config.job; the extra matchers limit every choice.
  variables(c, multiInstance)::
    local build = 'reachability_exporter_build_info';
    [
      $.datasourceVariable,
      $.queryVariable(
        'job',
        'Job',
        'label_values(%s, job)' % (if c.extraMatchers == '' then build else '%s{%s}' % [build, c.extraMatchers]),
        current={ selected: true, text: c.job, value: c.job },
      ),
      $.queryVariable('site', 'Site', 'label_values(%s{job=~"$job"%s}, %s)' % [build, $.extra(c), c.siteLabel], multi=true),
      // Every series has an instance: All is '.+'.
      $.queryVariable('instance', 'Instance', 'label_values(%s{job=~"$job", %s=~"$site"%s}, instance)' % [build, c.siteLabel, $.extra(c)], multi=multiInstance, allValue='.+'),
    ] + [
      $.queryVariable('probe_' + l, 'Probe ' + l, 'label_values(reachability_probe_labels_info{%s}, %s)' % [$.vars(c).sel, l], multi=true)
      for l in c.probeLabels
    ],
}
