// Just enough of Grafana's dashboard model for these two dashboards (schema 39, Grafana 10+):
// rows, panels with Prometheus queries, and the template variables. No grafonnet: the mixin
// builds offline with plain jsonnet.
local ds = { type: 'prometheus', uid: '${datasource}' };

{
  // The matchers and filters every query is built from, for a _config.
  vars(c):: {
    // The dashboard's choice of exporters: job, site and instance variables.
    local sel = 'job=~"$job", %s=~"$site", instance=~"$instance"' % c.siteLabel,
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

  datasourceVariable:: {
    name: 'datasource',
    label: 'Data source',
    type: 'datasource',
    query: 'prometheus',
    current: {},
    hide: 0,
    refresh: 1,
    regex: '',
    options: [],
    includeAll: false,
    multi: false,
  },

  // A label_values variable; multi-valued ones offer All, which matches everything (also
  // series without the label).
  queryVariable(name, label, query, multi=false):: {
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
    current: {},
    hide: 0,
    regex: '',
    options: [],
    skipUrlSync: false,
  } + (if multi then { allValue: '.*' } else {}),

  // $datasource, $job, $site, $instance, then one $probe_<label> per _config.probeLabels.
  // The selector limits what $job, $site and $instance offer.
  variables(c, multiInstance):: [
    $.datasourceVariable,
    $.queryVariable('job', 'Job', 'label_values(reachability_exporter_build_info{%s}, job)' % c.selector),
    $.queryVariable('site', 'Site', 'label_values(reachability_exporter_build_info{%s, job=~"$job"}, %s)' % [c.selector, c.siteLabel], multi=true),
    $.queryVariable('instance', 'Instance', 'label_values(reachability_exporter_build_info{%s, job=~"$job", %s=~"$site"}, instance)' % [c.selector, c.siteLabel], multi=multiInstance),
  ] + [
    $.queryVariable('probe_' + l, 'Probe ' + l, 'label_values(reachability_probe_labels_info{%s}, %s)' % [$.vars(c).sel, l], multi=true)
    for l in c.probeLabels
  ],
}
