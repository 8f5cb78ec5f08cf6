// The host dashboard (dashboards/README.md describes every panel), rendered into
// dashboards/ by scripts/mixin.sh; panels and variables come from lib/grafana.libsonnet.
local g = import '../lib/grafana.libsonnet';

function(c) {
  local v = g.vars(c),
  uid: 'reachability-host',
  title: 'Reachability — host',
  description: 'One reachability_exporter: does this host reach the internet, through which uplink, and if not, why. See dashboards/README.md for the metric behind each panel.',
  tags: c.dashboardTags,
  editable: false,
  fiscalYearStartMonth: 0,
  graphTooltip: 1,
  liveNow: false,
  refresh: c.dashboardRefresh,
  schemaVersion: 39,
  version: 1,
  weekStart: '',
  timezone: c.dashboardTimezone,
  time: { from: 'now-6h', to: 'now' },
  timepicker: {},
  links: [
    {
      title: 'Fleet',
      type: 'link',
      url: '/d/reachability-fleet',
      icon: 'dashboard',
      targetBlank: false,
      tooltip: 'All sites',
      asDropdown: false,
      includeVars: false,
      keepTime: true,
      tags: [],
    },
  ],
  annotations: {
    list: [
      {
        builtIn: 1,
        datasource: { type: 'grafana', uid: '-- Grafana --' },
        enable: true,
        hide: true,
        iconColor: 'rgba(0, 211, 255, 1)',
        name: 'Annotations & Alerts',
        type: 'dashboard',
      },
      {
        datasource: { type: 'prometheus', uid: '${datasource}' },
        enable: true,
        hide: false,
        iconColor: 'orange',
        name: 'State changes',
        expr: 'changes(reachability_state_since_timestamp_seconds{%(sel)s, scope="%(overall)s"}[2m]) > 0' % v,
        step: '1m',
        titleFormat: 'overall state changed',
        textFormat: '{{instance}}',
        useValueForTime: false,
      },
    ],
  },
  templating: {
    list: g.variables(c, multiInstance=false) + [
      g.queryVariable('target', 'Target', 'label_values(reachability_probe_info{%(sel)s}, target)' % v, multi=true),
    ],
  },
  panels: [
    g.row(1, 'Now', y=0),
    g.panel('stat', 2, 'State now', { x: 0, y: 1, w: 4, h: 5 },
      'The verdict now: full, limited, portal, none or unknown. Metric: reachability_connectivity_state (all five states exported, 1 for the current one).',
      [
        g.instant(|||
          sum by (instance) (
            reachability_connectivity_state{%(sel)s, state="none"}
            or reachability_connectivity_state{%(sel)s, state="portal"} * 2
            or reachability_connectivity_state{%(sel)s, state="limited"} * 3
            or reachability_connectivity_state{%(sel)s, state="full"} * 4
          )
        ||| % v, '{{instance}}'),
      ]) + {
      fieldConfig: {
        defaults: {
          color: { mode: 'thresholds' },
          mappings: [
            {
              type: 'value',
              options: {
                '0': { text: 'unknown', color: 'text', index: 0 },
                '1': { text: 'none', color: 'red', index: 1 },
                '2': { text: 'portal', color: 'orange', index: 2 },
                '3': { text: 'limited', color: 'yellow', index: 3 },
                '4': { text: 'full', color: 'green', index: 4 },
              },
            },
          ],
          thresholds: { mode: 'absolute', steps: [{ color: 'green', value: null }] },
        },
        overrides: [],
      },
      options: {
        reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
        colorMode: 'background',
        graphMode: 'none',
        justifyMode: 'auto',
        orientation: 'auto',
        textMode: 'value',
        showPercentChange: false,
        wideLayout: true,
      },
    },
    g.panel('stat', 3, 'Internet reachable', { x: 4, y: 1, w: 4, h: 5 },
      'reachability_internet_reachable: 1 when the overall verdict is full.',
      [
        g.instant('reachability_internet_reachable{%(sel)s}' % v, '{{instance}}'),
      ]) + {
      fieldConfig: {
        defaults: {
          color: { mode: 'thresholds' },
          mappings: [
            {
              type: 'value',
              options: {
                '0': { text: 'OFFLINE', color: 'red', index: 0 },
                '1': { text: 'ONLINE', color: 'green', index: 1 },
              },
            },
          ],
          thresholds: { mode: 'absolute', steps: [{ color: 'green', value: null }] },
        },
        overrides: [],
      },
      options: {
        reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
        colorMode: 'background',
        graphMode: 'none',
        justifyMode: 'auto',
        orientation: 'auto',
        textMode: 'value',
        showPercentChange: false,
        wideLayout: true,
      },
    },
    g.panel('stat', 4, 'In this state for', { x: 8, y: 1, w: 4, h: 5 },
      'Time since the overall state began (reachability_state_since_timestamp_seconds).',
      [
        g.instant('time() - reachability_state_since_timestamp_seconds{%(sel)s, scope="%(overall)s"}' % v, '{{instance}}'),
      ]) + {
      fieldConfig: {
        defaults: {
          color: { mode: 'palette-classic' },
          mappings: [],
          thresholds: { mode: 'absolute', steps: [{ color: 'green', value: null }] },
          unit: 's',
        },
        overrides: [],
      },
      options: {
        reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
        colorMode: 'none',
        graphMode: 'none',
        justifyMode: 'auto',
        orientation: 'auto',
        textMode: 'value',
        showPercentChange: false,
        wideLayout: true,
      },
    },
    g.panel('stat', 5, 'Availability (24h)', { x: 12, y: 1, w: 4, h: 5 },
      'Share of the scrapes attempted in the last 24 hours that found the verdict full (a failed scrape counts as unknown, not online).',
      [
        g.instant(v.availability('1d'), '{{instance}}'),
      ]) + {
      fieldConfig: {
        defaults: {
          color: { mode: 'thresholds' },
          mappings: [],
          thresholds: {
            mode: 'absolute',
            steps: [
              { color: 'red', value: null },
              { color: 'yellow', value: 0.99 },
              { color: 'green', value: 0.999 },
            ],
          },
          unit: 'percentunit',
          decimals: 3,
        },
        overrides: [],
      },
      options: {
        reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
        colorMode: 'value',
        graphMode: 'none',
        justifyMode: 'auto',
        orientation: 'auto',
        textMode: 'value',
        showPercentChange: false,
        wideLayout: true,
      },
    },
    g.panel('table', 6, 'Verdict and reason by scope', { x: 16, y: 1, w: 8, h: 5 },
      'Per scope (overall, ipv4, ipv6, each uplink): the state, why (reachability_connectivity_info\'s reason label), since when, and where the path breaks (reachability_fault_info\'s location: link, gateway, upstream, dns, portal, target or none; empty on exporters without it).',
      [
        g.table('max by (scope, state, reason) (reachability_connectivity_info{%(sel)s})' % v),
        g.table('max by (scope) (time() - reachability_state_since_timestamp_seconds{%(sel)s})' % v),
        g.table('max by (scope, location) (reachability_fault_info{%(sel)s})' % v),
      ]) + {
      fieldConfig: {
        defaults: {
          color: { mode: 'palette-classic' },
          mappings: [],
          thresholds: { mode: 'absolute', steps: [{ color: 'green', value: null }] },
          custom: { align: 'auto', cellOptions: { type: 'auto' }, inspect: false },
        },
        overrides: [
          { matcher: { id: 'byName', options: 'for' }, properties: [{ id: 'unit', value: 's' }] },
          {
            matcher: { id: 'byName', options: 'state' },
            properties: [
              { id: 'custom.cellOptions', value: { type: 'color-text' } },
              {
                id: 'mappings',
                value: [
                  {
                    type: 'value',
                    options: {
                      full: { color: 'green', index: 0 },
                      limited: { color: 'yellow', index: 1 },
                      portal: { color: 'orange', index: 2 },
                      none: { color: 'red', index: 3 },
                      unknown: { color: 'text', index: 4 },
                    },
                  },
                ],
              },
            ],
          },
        ],
      },
      options: {
        showHeader: true,
        cellHeight: 'sm',
        footer: { show: false, reducer: ['sum'], fields: '' },
      },
      transformations: [
        { id: 'merge', options: {} },
        {
          id: 'organize',
          options: {
            excludeByName: { Time: true, 'Value #A': true, 'Value #C': true },
            renameByName: { 'Value #B': 'for', location: 'breaks at' },
            indexByName: { scope: 0, state: 1, reason: 2, location: 3, 'Value #B': 4 },
          },
        },
      ],
    },
    g.row(7, 'State timeline', y=6),
    g.panel('state-timeline', 8, 'Overall state', { x: 0, y: 7, w: 24, h: 4 },
      'The overall verdict over time (reachability_connectivity_state, encoded 0 unknown, 1 none, 2 portal, 3 limited, 4 full).',
      [
        g.range(|||
          sum by (instance) (
            reachability_connectivity_state{%(sel)s, state="none"}
            or reachability_connectivity_state{%(sel)s, state="portal"} * 2
            or reachability_connectivity_state{%(sel)s, state="limited"} * 3
            or reachability_connectivity_state{%(sel)s, state="full"} * 4
          )
        ||| % v, 'overall'),
      ]) + {
      fieldConfig: {
        defaults: {
          color: { mode: 'thresholds' },
          mappings: [
            {
              type: 'value',
              options: {
                '0': { text: 'unknown', color: 'text', index: 0 },
                '1': { text: 'none', color: 'red', index: 1 },
                '2': { text: 'portal', color: 'orange', index: 2 },
                '3': { text: 'limited', color: 'yellow', index: 3 },
                '4': { text: 'full', color: 'green', index: 4 },
              },
            },
          ],
          thresholds: { mode: 'absolute', steps: [{ color: 'green', value: null }] },
          custom: {
            fillOpacity: 80,
            lineWidth: 0,
            hideFrom: { legend: false, tooltip: false, viz: false },
          },
        },
        overrides: [],
      },
      options: {
        mergeValues: true,
        showValue: 'auto',
        alignValue: 'left',
        rowHeight: 0.9,
        legend: { showLegend: true, displayMode: 'list', placement: 'bottom' },
        tooltip: { mode: 'single', sort: 'none' },
      },
    },
    g.panel('state-timeline', 9, 'State per IP family and uplink', { x: 0, y: 11, w: 24, h: 6 },
      'reachability_family_connectivity_state and reachability_uplink_connectivity_state, encoded like the overall state.',
      [
        g.range(|||
          sum by (family) (
            reachability_family_connectivity_state{%(sel)s, state="none"}
            or reachability_family_connectivity_state{%(sel)s, state="portal"} * 2
            or reachability_family_connectivity_state{%(sel)s, state="limited"} * 3
            or reachability_family_connectivity_state{%(sel)s, state="full"} * 4
          )
        ||| % v, '{{family}}'),
        g.range(|||
          sum by (interface) (
            reachability_uplink_connectivity_state{%(sel)s, state="none"}
            or reachability_uplink_connectivity_state{%(sel)s, state="portal"} * 2
            or reachability_uplink_connectivity_state{%(sel)s, state="limited"} * 3
            or reachability_uplink_connectivity_state{%(sel)s, state="full"} * 4
          )
        ||| % v, 'uplink {{interface}}'),
      ]) + {
      fieldConfig: {
        defaults: {
          color: { mode: 'thresholds' },
          mappings: [
            {
              type: 'value',
              options: {
                '0': { text: 'unknown', color: 'text', index: 0 },
                '1': { text: 'none', color: 'red', index: 1 },
                '2': { text: 'portal', color: 'orange', index: 2 },
                '3': { text: 'limited', color: 'yellow', index: 3 },
                '4': { text: 'full', color: 'green', index: 4 },
              },
            },
          ],
          thresholds: { mode: 'absolute', steps: [{ color: 'green', value: null }] },
          custom: {
            fillOpacity: 80,
            lineWidth: 0,
            hideFrom: { legend: false, tooltip: false, viz: false },
          },
        },
        overrides: [],
      },
      options: {
        mergeValues: true,
        showValue: 'auto',
        alignValue: 'left',
        rowHeight: 0.9,
        legend: { showLegend: true, displayMode: 'list', placement: 'bottom' },
        tooltip: { mode: 'single', sort: 'none' },
      },
    },
    g.row(10, 'Availability', y=17),
    g.panel('bargauge', 11, 'Availability by window (Prometheus)', { x: 0, y: 18, w: 8, h: 7 },
      'Samples online divided by scrapes attempted (count_over_time(up[window])), as the recording rules count it: a failed scrape is unknown time, not online time. Coverage: the share of attempted scrapes that succeeded. Computed by Prometheus from its own samples, so it needs that much retention.',
      [g.instant(v.availability(w), w) for w in ['1h', '1d', '7d', '30d']]
      + [g.instant(v.coverage(w), 'coverage ' + w) for w in ['1h', '1d', '7d', '30d']]) + {
      fieldConfig: {
        defaults: {
          color: { mode: 'thresholds' },
          mappings: [],
          thresholds: {
            mode: 'absolute',
            steps: [
              { color: 'red', value: null },
              { color: 'yellow', value: 0.99 },
              { color: 'green', value: 0.999 },
            ],
          },
          unit: 'percentunit',
          min: 0,
          max: 1,
          decimals: 3,
        },
        overrides: [],
      },
      options: {
        reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
        orientation: 'horizontal',
        displayMode: 'gradient',
        showUnfilled: true,
        valueMode: 'color',
        namePlacement: 'auto',
        sizing: 'auto',
        minVizHeight: 16,
        minVizWidth: 8,
        maxVizHeight: 300,
      },
    },
    g.panel('bargauge', 12, 'Availability by window (exporter history)', { x: 8, y: 18, w: 8, h: 7 },
      'reachability_availability_ratio{window}: computed by the exporter from its on-disk history, so it survives Prometheus retention; reachability_history_coverage_ratio says how much of the window the history covers.',
      [
        g.instant('reachability_availability_ratio{%(sel)s}' % v, '{{window}}'),
        g.instant('reachability_history_coverage_ratio{%(sel)s}' % v, 'coverage {{window}}'),
      ]) + {
      fieldConfig: {
        defaults: {
          color: { mode: 'thresholds' },
          mappings: [],
          thresholds: {
            mode: 'absolute',
            steps: [
              { color: 'red', value: null },
              { color: 'yellow', value: 0.99 },
              { color: 'green', value: 0.999 },
            ],
          },
          unit: 'percentunit',
          min: 0,
          max: 1,
          decimals: 3,
        },
        overrides: [],
      },
      options: {
        reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
        orientation: 'horizontal',
        displayMode: 'gradient',
        showUnfilled: true,
        valueMode: 'color',
        namePlacement: 'auto',
        sizing: 'auto',
        minVizHeight: 16,
        minVizWidth: 8,
        maxVizHeight: 300,
      },
    },
    g.panel('timeseries', 13, 'Online share and SLO burn rate', { x: 16, y: 18, w: 8, h: 7 },
      'Left: share of samples online per interval. Right: the 99.5 % SLO\'s burn rate from the recording rules (1 spends the budget exactly; the fast-burn alert pages at 14.4).',
      [
        g.range('avg_over_time(reachability_internet_reachable{%(sel)s}[$__rate_interval])' % v, 'online share'),
        g.range('reachability:slo_burn_rate:1h{%(sel)s}' % v, 'burn rate 1h'),
        g.range('reachability:slo_burn_rate:6h{%(sel)s}' % v, 'burn rate 6h'),
      ]) + {
      fieldConfig: {
        defaults: {
          color: { mode: 'palette-classic' },
          mappings: [],
          thresholds: { mode: 'absolute', steps: [{ color: 'green', value: null }] },
          unit: 'percentunit',
          min: 0,
          custom: {
            drawStyle: 'line',
            lineWidth: 1,
            fillOpacity: 10,
            showPoints: 'never',
            spanNulls: false,
            stacking: { mode: 'none', group: 'A' },
            axisPlacement: 'auto',
            lineInterpolation: 'linear',
            barAlignment: 0,
            pointSize: 4,
            gradientMode: 'none',
            axisBorderShow: false,
            scaleDistribution: { type: 'linear' },
            thresholdsStyle: { mode: 'off' },
            hideFrom: { legend: false, tooltip: false, viz: false },
          },
        },
        overrides: [
          {
            matcher: { id: 'byRegexp', options: 'burn rate.*' },
            properties: [
              { id: 'unit', value: 'none' },
              { id: 'custom.axisPlacement', value: 'right' },
              { id: 'max' },
            ],
          },
        ],
      },
      options: {
        legend: { showLegend: true, displayMode: 'list', placement: 'bottom', calcs: [] },
        tooltip: { mode: 'multi', sort: 'desc' },
      },
    },
    g.row(14, 'Latency', y=25),
    g.panel('heatmap', 15, 'RTT heatmap', { x: 0, y: 26, w: 12, h: 8 },
      'Successful probes\' round trips (reachability_probe_duration_seconds histogram; each ICMP echo is one observation).',
      [
        g.range('sum by (le) (increase(reachability_probe_duration_seconds_bucket{%(sel)s, target=~"$target"}[$__rate_interval])%(probes)s)' % v, '{{le}}', format='heatmap'),
      ]) + {
      fieldConfig: {
        defaults: {
          color: { mode: 'palette-classic' },
          mappings: [],
          thresholds: { mode: 'absolute', steps: [{ color: 'green', value: null }] },
          custom: {
            hideFrom: { legend: false, tooltip: false, viz: false },
            scaleDistribution: { type: 'linear' },
          },
        },
        overrides: [],
      },
      options: {
        calculate: false,
        cellGap: 1,
        yAxis: { axisPlacement: 'left', unit: 's', reverse: false },
        rowsFrame: { layout: 'auto' },
        color: {
          mode: 'scheme',
          scheme: 'Oranges',
          fill: 'dark-orange',
          scale: 'exponential',
          exponent: 0.5,
          steps: 64,
          reverse: false,
        },
        filterValues: { le: 1e-09 },
        showValue: 'never',
        legend: { show: true },
        tooltip: { mode: 'single', yHistogram: true, showColorScale: false },
        exemplars: { color: 'rgba(255,0,255,0.7)' },
        cellValues: { unit: 'short' },
      },
    },
    g.panel('timeseries', 16, 'RTT percentiles', { x: 12, y: 26, w: 12, h: 8 },
      'p50, p90 and p99 per target from the histogram (histogram_quantile over reachability_probe_duration_seconds_bucket).',
      [
        g.range('histogram_quantile(0.5, sum by (probe, target, le) (rate(reachability_probe_duration_seconds_bucket{%(sel)s, target=~"$target"}[$__rate_interval])%(probes)s))' % v, 'p50 {{target}}'),
        g.range('histogram_quantile(0.9, sum by (probe, target, le) (rate(reachability_probe_duration_seconds_bucket{%(sel)s, target=~"$target"}[$__rate_interval])%(probes)s))' % v, 'p90 {{target}}'),
        g.range('histogram_quantile(0.99, sum by (probe, target, le) (rate(reachability_probe_duration_seconds_bucket{%(sel)s, target=~"$target"}[$__rate_interval])%(probes)s))' % v, 'p99 {{target}}'),
      ]) + {
      fieldConfig: {
        defaults: {
          color: { mode: 'palette-classic' },
          mappings: [],
          thresholds: { mode: 'absolute', steps: [{ color: 'green', value: null }] },
          unit: 's',
          custom: {
            drawStyle: 'line',
            lineWidth: 1,
            fillOpacity: 0,
            showPoints: 'never',
            spanNulls: false,
            stacking: { mode: 'none', group: 'A' },
            axisPlacement: 'auto',
            lineInterpolation: 'linear',
            barAlignment: 0,
            pointSize: 4,
            gradientMode: 'none',
            axisBorderShow: false,
            scaleDistribution: { type: 'linear' },
            thresholdsStyle: { mode: 'off' },
            hideFrom: { legend: false, tooltip: false, viz: false },
          },
        },
        overrides: [],
      },
      options: {
        legend: { showLegend: true, displayMode: 'list', placement: 'bottom', calcs: [] },
        tooltip: { mode: 'multi', sort: 'desc' },
      },
    },
    g.panel('timeseries', 17, 'HTTP phase breakdown', { x: 0, y: 34, w: 8, h: 8 },
      'Where the last HTTP(S) round\'s time went: resolve, connect, tls, processing (time to first byte), transfer (reachability_probe_phase_duration_seconds).',
      [
        g.range('reachability_probe_phase_duration_seconds{%(sel)s, target=~"$target", probe=~"https?"}%(probes)s' % v, '{{target}} {{phase}}'),
      ]) + {
      fieldConfig: {
        defaults: {
          color: { mode: 'palette-classic' },
          mappings: [],
          thresholds: { mode: 'absolute', steps: [{ color: 'green', value: null }] },
          unit: 's',
          custom: {
            drawStyle: 'bars',
            lineWidth: 1,
            fillOpacity: 80,
            showPoints: 'never',
            spanNulls: false,
            stacking: { mode: 'normal', group: 'A' },
            axisPlacement: 'auto',
            lineInterpolation: 'linear',
            barAlignment: 0,
            pointSize: 4,
            gradientMode: 'none',
            axisBorderShow: false,
            scaleDistribution: { type: 'linear' },
            thresholdsStyle: { mode: 'off' },
            hideFrom: { legend: false, tooltip: false, viz: false },
          },
        },
        overrides: [],
      },
      options: {
        legend: { showLegend: true, displayMode: 'list', placement: 'bottom', calcs: [] },
        tooltip: { mode: 'multi', sort: 'desc' },
      },
    },
    g.panel('timeseries', 18, 'DNS time', { x: 8, y: 34, w: 8, h: 8 },
      'The last lookup\'s duration per DNS probe (phase resolve) and the p90 of successful lookups.',
      [
        g.range('reachability_probe_phase_duration_seconds{%(sel)s, target=~"$target", probe="dns", phase="resolve"}%(probes)s' % v, 'last {{target}}'),
        g.range('histogram_quantile(0.9, sum by (target, le) (rate(reachability_probe_duration_seconds_bucket{%(sel)s, target=~"$target", probe="dns"}[$__rate_interval])%(probes)s))' % v, 'p90 {{target}}'),
      ]) + {
      fieldConfig: {
        defaults: {
          color: { mode: 'palette-classic' },
          mappings: [],
          thresholds: { mode: 'absolute', steps: [{ color: 'green', value: null }] },
          unit: 's',
          custom: {
            drawStyle: 'line',
            lineWidth: 1,
            fillOpacity: 0,
            showPoints: 'never',
            spanNulls: false,
            stacking: { mode: 'none', group: 'A' },
            axisPlacement: 'auto',
            lineInterpolation: 'linear',
            barAlignment: 0,
            pointSize: 4,
            gradientMode: 'none',
            axisBorderShow: false,
            scaleDistribution: { type: 'linear' },
            thresholdsStyle: { mode: 'off' },
            hideFrom: { legend: false, tooltip: false, viz: false },
          },
        },
        overrides: [],
      },
      options: {
        legend: { showLegend: true, displayMode: 'list', placement: 'bottom', calcs: [] },
        tooltip: { mode: 'multi', sort: 'desc' },
      },
    },
    g.panel('timeseries', 19, 'ICMP loss', { x: 16, y: 34, w: 8, h: 8 },
      'Share of echo requests without reply: per round (reachability_icmp_loss_ratio) and from the echo counters over the interval.',
      [
        g.range('reachability_icmp_loss_ratio{%(sel)s, target=~"$target"}%(probes)s' % v, 'last round {{target}}'),
        g.range('1 - sum by (target) (rate(reachability_icmp_echo_replies_total{%(sel)s, target=~"$target"}[$__rate_interval])%(probes)s) / (sum by (target) (rate(reachability_icmp_echo_requests_total{%(sel)s, target=~"$target"}[$__rate_interval])%(probes)s) > 0)' % v, '{{target}}'),
      ]) + {
      fieldConfig: {
        defaults: {
          color: { mode: 'palette-classic' },
          mappings: [],
          thresholds: { mode: 'absolute', steps: [{ color: 'green', value: null }] },
          unit: 'percentunit',
          min: 0,
          max: 1,
          custom: {
            drawStyle: 'line',
            lineWidth: 1,
            fillOpacity: 0,
            showPoints: 'never',
            spanNulls: false,
            stacking: { mode: 'none', group: 'A' },
            axisPlacement: 'auto',
            lineInterpolation: 'linear',
            barAlignment: 0,
            pointSize: 4,
            gradientMode: 'none',
            axisBorderShow: false,
            scaleDistribution: { type: 'linear' },
            thresholdsStyle: { mode: 'off' },
            hideFrom: { legend: false, tooltip: false, viz: false },
          },
        },
        overrides: [],
      },
      options: {
        legend: { showLegend: true, displayMode: 'list', placement: 'bottom', calcs: [] },
        tooltip: { mode: 'multi', sort: 'desc' },
      },
    },
    g.row(20, 'Probes', y=42),
    g.panel('table', 21, 'Probes', { x: 0, y: 43, w: 12, h: 8 },
      'Every configured probe (reachability_probe_info) with its last result (reachability_probe_success) and duration.',
      [
        g.table('max by (probe, target, destination, interface) (reachability_probe_info{%(sel)s, target=~"$target"}%(probes)s)' % v),
        g.table('max by (probe, target) (reachability_probe_success{%(sel)s, target=~"$target"}%(probes)s)' % v),
        g.table('max by (probe, target) (reachability_probe_last_duration_seconds{%(sel)s, target=~"$target"}%(probes)s)' % v),
      ]) + {
      fieldConfig: {
        defaults: {
          color: { mode: 'palette-classic' },
          mappings: [],
          thresholds: { mode: 'absolute', steps: [{ color: 'green', value: null }] },
          custom: { align: 'auto', cellOptions: { type: 'auto' }, inspect: false },
        },
        overrides: [
          {
            matcher: { id: 'byName', options: 'last result' },
            properties: [
              { id: 'custom.cellOptions', value: { type: 'color-background' } },
              {
                id: 'mappings',
                value: [
                  {
                    type: 'value',
                    options: {
                      '0': { text: 'fail', color: 'red', index: 0 },
                      '1': { text: 'ok', color: 'green', index: 1 },
                    },
                  },
                ],
              },
            ],
          },
          {
            matcher: { id: 'byName', options: 'last duration' },
            properties: [{ id: 'unit', value: 's' }],
          },
        ],
      },
      options: {
        showHeader: true,
        cellHeight: 'sm',
        footer: { show: false, reducer: ['sum'], fields: '' },
      },
      transformations: [
        { id: 'merge', options: {} },
        {
          id: 'organize',
          options: {
            excludeByName: { Time: true, 'Value #A': true },
            renameByName: { 'Value #B': 'last result', 'Value #C': 'last duration' },
          },
        },
      ],
    },
    g.panel('timeseries', 22, 'Failures and portal signals by reason', { x: 12, y: 43, w: 12, h: 8 },
      'Failed rounds (reachability_probe_failures_total) and captive-portal signals (reachability_probe_portal_signals_total) per target and reason.',
      [
        g.range('sum by (target, reason) (increase(reachability_probe_failures_total{%(sel)s, target=~"$target"}[$__rate_interval])%(probes)s)' % v, '{{target}} {{reason}}'),
        g.range('sum by (target, reason) (increase(reachability_probe_portal_signals_total{%(sel)s, target=~"$target"}[$__rate_interval])%(probes)s)' % v, 'portal {{target}} {{reason}}'),
      ]) + {
      fieldConfig: {
        defaults: {
          unit: 'none',
          color: { mode: 'palette-classic' },
          mappings: [],
          thresholds: { mode: 'absolute', steps: [{ color: 'green', value: null }] },
          custom: {
            drawStyle: 'bars',
            lineWidth: 1,
            fillOpacity: 80,
            showPoints: 'never',
            spanNulls: false,
            stacking: { mode: 'normal', group: 'A' },
            axisPlacement: 'auto',
            lineInterpolation: 'linear',
            barAlignment: 0,
            pointSize: 4,
            gradientMode: 'none',
            axisBorderShow: false,
            scaleDistribution: { type: 'linear' },
            thresholdsStyle: { mode: 'off' },
            hideFrom: { legend: false, tooltip: false, viz: false },
          },
        },
        overrides: [],
      },
      options: {
        legend: { showLegend: true, displayMode: 'list', placement: 'bottom', calcs: [] },
        tooltip: { mode: 'multi', sort: 'desc' },
      },
    },
    g.row(23, 'Uplinks', y=51),
    g.panel('stat', 24, 'Uplinks side by side', { x: 0, y: 52, w: 8, h: 6 },
      'Each uplink\'s verdict (reachability_uplink_connectivity_state): probes bound to the interface with --probe.uplink.',
      [
        g.instant(|||
          sum by (interface) (
            reachability_uplink_connectivity_state{%(sel)s, state="none"}
            or reachability_uplink_connectivity_state{%(sel)s, state="portal"} * 2
            or reachability_uplink_connectivity_state{%(sel)s, state="limited"} * 3
            or reachability_uplink_connectivity_state{%(sel)s, state="full"} * 4
          )
        ||| % v, '{{interface}}'),
      ]) + {
      fieldConfig: {
        defaults: {
          color: { mode: 'thresholds' },
          mappings: [
            {
              type: 'value',
              options: {
                '0': { text: 'unknown', color: 'text', index: 0 },
                '1': { text: 'none', color: 'red', index: 1 },
                '2': { text: 'portal', color: 'orange', index: 2 },
                '3': { text: 'limited', color: 'yellow', index: 3 },
                '4': { text: 'full', color: 'green', index: 4 },
              },
            },
          ],
          thresholds: { mode: 'absolute', steps: [{ color: 'green', value: null }] },
        },
        overrides: [],
      },
      options: {
        reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
        colorMode: 'background',
        graphMode: 'none',
        justifyMode: 'auto',
        orientation: 'horizontal',
        textMode: 'value_and_name',
        showPercentChange: false,
        wideLayout: true,
      },
    },
    g.panel('timeseries', 25, 'RTT p50 per uplink', { x: 8, y: 52, w: 8, h: 6 },
      'Median round trip of the probes bound to each uplink (targets named name@interface).',
      [
        g.range('histogram_quantile(0.5, sum by (uplink, probe, le) (label_replace(rate(reachability_probe_duration_seconds_bucket{%(sel)s, target=~".+@.+"}[$__rate_interval])%(probes)s, "uplink", "$1", "target", ".+@(.+)")))' % v, '{{uplink}} {{probe}}'),
      ]) + {
      fieldConfig: {
        defaults: {
          color: { mode: 'palette-classic' },
          mappings: [],
          thresholds: { mode: 'absolute', steps: [{ color: 'green', value: null }] },
          unit: 's',
          custom: {
            drawStyle: 'line',
            lineWidth: 1,
            fillOpacity: 0,
            showPoints: 'never',
            spanNulls: false,
            stacking: { mode: 'none', group: 'A' },
            axisPlacement: 'auto',
            lineInterpolation: 'linear',
            barAlignment: 0,
            pointSize: 4,
            gradientMode: 'none',
            axisBorderShow: false,
            scaleDistribution: { type: 'linear' },
            thresholdsStyle: { mode: 'off' },
            hideFrom: { legend: false, tooltip: false, viz: false },
          },
        },
        overrides: [],
      },
      options: {
        legend: { showLegend: true, displayMode: 'list', placement: 'bottom', calcs: [] },
        tooltip: { mode: 'multi', sort: 'desc' },
      },
    },
    g.panel('state-timeline', 26, 'Path and interfaces', { x: 16, y: 52, w: 8, h: 6 },
      'reachability_path_satisfied per IP family and reachability_interface_up per interface, from the netlink path monitor.',
      [
        g.range('reachability_path_satisfied{%(sel)s}' % v, 'path {{family}}'),
        g.range('reachability_interface_up{%(sel)s}' % v, '{{interface}} ({{type}})'),
      ]) + {
      fieldConfig: {
        defaults: {
          color: { mode: 'thresholds' },
          mappings: [
            {
              type: 'value',
              options: {
                '0': { text: 'down', color: 'red', index: 0 },
                '1': { text: 'up', color: 'green', index: 1 },
              },
            },
          ],
          thresholds: { mode: 'absolute', steps: [{ color: 'green', value: null }] },
          custom: {
            fillOpacity: 80,
            lineWidth: 0,
            hideFrom: { legend: false, tooltip: false, viz: false },
          },
        },
        overrides: [],
      },
      options: {
        mergeValues: true,
        showValue: 'auto',
        alignValue: 'left',
        rowHeight: 0.9,
        legend: { showLegend: true, displayMode: 'list', placement: 'bottom' },
        tooltip: { mode: 'single', sort: 'none' },
      },
    },
    g.row(27, 'Transitions and certificates', y=58),
    g.panel('timeseries', 28, 'Transitions', { x: 0, y: 59, w: 8, h: 7 },
      'Overall state changes (reachability_state_transitions_total by from and to) and path changes seen by the monitor (reachability_path_changes_total).',
      [
        g.range('sum by (from, to) (increase(reachability_state_transitions_total{%(sel)s}[$__rate_interval]))' % v, '{{from}} → {{to}}'),
        g.range('sum(increase(reachability_path_changes_total{%(sel)s}[$__rate_interval]))' % v, 'path changes'),
      ]) + {
      fieldConfig: {
        defaults: {
          unit: 'none',
          color: { mode: 'palette-classic' },
          mappings: [],
          thresholds: { mode: 'absolute', steps: [{ color: 'green', value: null }] },
          custom: {
            drawStyle: 'bars',
            lineWidth: 1,
            fillOpacity: 80,
            showPoints: 'never',
            spanNulls: false,
            stacking: { mode: 'normal', group: 'A' },
            axisPlacement: 'auto',
            lineInterpolation: 'linear',
            barAlignment: 0,
            pointSize: 4,
            gradientMode: 'none',
            axisBorderShow: false,
            scaleDistribution: { type: 'linear' },
            thresholdsStyle: { mode: 'off' },
            hideFrom: { legend: false, tooltip: false, viz: false },
          },
        },
        overrides: [],
      },
      options: {
        legend: { showLegend: true, displayMode: 'list', placement: 'bottom', calcs: [] },
        tooltip: { mode: 'multi', sort: 'desc' },
      },
    },
    g.panel('table', 29, 'Transitions in range', { x: 8, y: 59, w: 6, h: 7 },
      'How often the overall state went from one state to another in the selected range.',
      [
        g.table('sum by (from, to) (increase(reachability_state_transitions_total{%(sel)s}[$__range]))' % v),
      ]) + {
      fieldConfig: {
        defaults: {
          color: { mode: 'palette-classic' },
          mappings: [],
          thresholds: { mode: 'absolute', steps: [{ color: 'green', value: null }] },
          custom: { align: 'auto', cellOptions: { type: 'auto' }, inspect: false },
        },
        overrides: [
          {
            matcher: { id: 'byName', options: 'count' },
            properties: [{ id: 'decimals', value: 0 }],
          },
        ],
      },
      options: {
        showHeader: true,
        cellHeight: 'sm',
        footer: { show: false, reducer: ['sum'], fields: '' },
      },
      transformations: [
        {
          id: 'organize',
          options: { excludeByName: { Time: true }, renameByName: { Value: 'count' } },
        },
      ],
    },
    g.panel('bargauge', 30, 'Certificate expiry', { x: 14, y: 59, w: 10, h: 7 },
      'Time left on each HTTPS target\'s leaf certificate (reachability_tls_certificate_expiry_timestamp_seconds - time()).',
      [
        g.instant('(reachability_tls_certificate_expiry_timestamp_seconds{%(sel)s, target=~"$target"}%(probes)s) - time()' % v, '{{target}}'),
      ]) + {
      fieldConfig: {
        defaults: {
          color: { mode: 'thresholds' },
          mappings: [],
          thresholds: {
            mode: 'absolute',
            steps: [
              { color: 'red', value: null },
              { color: 'yellow', value: 604800 },
              { color: 'green', value: 1209600 },
            ],
          },
          unit: 's',
          min: 0,
        },
        overrides: [],
      },
      options: {
        reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
        orientation: 'horizontal',
        displayMode: 'gradient',
        showUnfilled: true,
        valueMode: 'color',
        namePlacement: 'auto',
        sizing: 'auto',
        minVizHeight: 16,
        minVizWidth: 8,
        maxVizHeight: 300,
      },
    },
    g.row(31, 'Exporter health', y=66),
    g.panel('stat', 32, 'Scraped', { x: 0, y: 67, w: 3, h: 5 },
      'Prometheus\' up for the exporter.',
      [
        g.instant('up{%(sel)s}' % v, '{{instance}}'),
      ]) + {
      fieldConfig: {
        defaults: {
          color: { mode: 'thresholds' },
          mappings: [
            {
              type: 'value',
              options: {
                '0': { text: 'DOWN', color: 'red', index: 0 },
                '1': { text: 'UP', color: 'green', index: 1 },
              },
            },
          ],
          thresholds: { mode: 'absolute', steps: [{ color: 'green', value: null }] },
        },
        overrides: [],
      },
      options: {
        reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
        colorMode: 'background',
        graphMode: 'none',
        justifyMode: 'auto',
        orientation: 'auto',
        textMode: 'value',
        showPercentChange: false,
        wideLayout: true,
      },
    },
    g.panel('stat', 33, 'Version', { x: 3, y: 67, w: 3, h: 5 },
      'reachability_exporter_build_info.',
      [
        g.instant('reachability_exporter_build_info{%(sel)s}' % v, '{{version}} ({{swiftversion}})'),
      ]) + {
      fieldConfig: {
        defaults: {
          unit: 'none',
          color: { mode: 'palette-classic' },
          mappings: [],
          thresholds: { mode: 'absolute', steps: [{ color: 'green', value: null }] },
        },
        overrides: [],
      },
      options: {
        reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
        colorMode: 'none',
        graphMode: 'none',
        justifyMode: 'auto',
        orientation: 'auto',
        textMode: 'name',
        showPercentChange: false,
        wideLayout: true,
      },
    },
    g.panel('stat', 34, 'Config reload', { x: 6, y: 67, w: 3, h: 5 },
      'reachability_exporter_config_last_reload_successful (with --config.file).',
      [
        g.instant('reachability_exporter_config_last_reload_successful{%(sel)s}' % v, '{{instance}}'),
      ]) + {
      fieldConfig: {
        defaults: {
          color: { mode: 'thresholds' },
          mappings: [
            {
              type: 'value',
              options: {
                '0': { text: 'FAILED', color: 'red', index: 0 },
                '1': { text: 'OK', color: 'green', index: 1 },
              },
            },
          ],
          thresholds: { mode: 'absolute', steps: [{ color: 'green', value: null }] },
        },
        overrides: [],
      },
      options: {
        reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
        colorMode: 'background',
        graphMode: 'none',
        justifyMode: 'auto',
        orientation: 'auto',
        textMode: 'value',
        showPercentChange: false,
        wideLayout: true,
      },
    },
    g.panel('timeseries', 35, 'Probe rounds', { x: 9, y: 67, w: 5, h: 5 },
      'Rounds per second (reachability_rounds_total) and the p90 round duration (reachability_round_duration_seconds).',
      [
        g.range('rate(reachability_rounds_total{%(sel)s}[$__rate_interval])' % v, 'rounds/s'),
        g.range('histogram_quantile(0.9, sum by (le) (rate(reachability_round_duration_seconds_bucket{%(sel)s}[$__rate_interval])))' % v, 'p90 round duration'),
      ]) + {
      fieldConfig: {
        defaults: {
          color: { mode: 'palette-classic' },
          mappings: [],
          thresholds: { mode: 'absolute', steps: [{ color: 'green', value: null }] },
          custom: {
            drawStyle: 'line',
            lineWidth: 1,
            fillOpacity: 0,
            showPoints: 'never',
            spanNulls: false,
            stacking: { mode: 'none', group: 'A' },
            axisPlacement: 'auto',
            lineInterpolation: 'linear',
            barAlignment: 0,
            pointSize: 4,
            gradientMode: 'none',
            axisBorderShow: false,
            scaleDistribution: { type: 'linear' },
            thresholdsStyle: { mode: 'off' },
            hideFrom: { legend: false, tooltip: false, viz: false },
          },
        },
        overrides: [
          {
            matcher: { id: 'byName', options: 'p90 round duration' },
            properties: [{ id: 'unit', value: 's' }, { id: 'custom.axisPlacement', value: 'right' }],
          },
        ],
      },
      options: {
        legend: { showLegend: true, displayMode: 'list', placement: 'bottom', calcs: [] },
        tooltip: { mode: 'multi', sort: 'desc' },
      },
    },
    g.panel('timeseries', 36, 'Process', { x: 14, y: 67, w: 5, h: 5 },
      'Resident memory, CPU and open descriptors (process_*), scrape duration and rejected HTTP connections.',
      [
        g.range('process_resident_memory_bytes{%(sel)s}' % v, 'resident memory'),
        g.range('rate(process_cpu_seconds_total{%(sel)s}[$__rate_interval])' % v, 'cpu'),
        g.range('process_open_fds{%(sel)s}' % v, 'open fds'),
        g.range('scrape_duration_seconds{%(sel)s}' % v, 'scrape duration'),
        g.range('increase(reachability_exporter_http_rejected_connections_total{%(sel)s}[$__rate_interval])' % v, 'rejected connections'),
      ]) + {
      fieldConfig: {
        defaults: {
          color: { mode: 'palette-classic' },
          mappings: [],
          thresholds: { mode: 'absolute', steps: [{ color: 'green', value: null }] },
          unit: 'bytes',
          custom: {
            drawStyle: 'line',
            lineWidth: 1,
            fillOpacity: 0,
            showPoints: 'never',
            spanNulls: false,
            stacking: { mode: 'none', group: 'A' },
            axisPlacement: 'auto',
            lineInterpolation: 'linear',
            barAlignment: 0,
            pointSize: 4,
            gradientMode: 'none',
            axisBorderShow: false,
            scaleDistribution: { type: 'linear' },
            thresholdsStyle: { mode: 'off' },
            hideFrom: { legend: false, tooltip: false, viz: false },
          },
        },
        overrides: [
          {
            matcher: { id: 'byRegexp', options: 'cpu|open fds|scrape duration|rejected connections' },
            properties: [{ id: 'unit', value: 'short' }, { id: 'custom.axisPlacement', value: 'right' }],
          },
        ],
      },
      options: {
        legend: { showLegend: true, displayMode: 'list', placement: 'bottom', calcs: [] },
        tooltip: { mode: 'multi', sort: 'desc' },
      },
    },
    g.panel('timeseries', 37, 'History', { x: 19, y: 67, w: 5, h: 5 },
      'The history writer: bytes on disk (reachability_history_bytes), write errors and dropped records.',
      [
        g.range('reachability_history_bytes{%(sel)s}' % v, 'bytes'),
        g.range('increase(reachability_history_write_errors_total{%(sel)s}[$__rate_interval])' % v, 'write errors'),
        g.range('increase(reachability_history_dropped_records_total{%(sel)s}[$__rate_interval])' % v, 'dropped records'),
      ]) + {
      fieldConfig: {
        defaults: {
          color: { mode: 'palette-classic' },
          mappings: [],
          thresholds: { mode: 'absolute', steps: [{ color: 'green', value: null }] },
          unit: 'bytes',
          custom: {
            drawStyle: 'line',
            lineWidth: 1,
            fillOpacity: 0,
            showPoints: 'never',
            spanNulls: false,
            stacking: { mode: 'none', group: 'A' },
            axisPlacement: 'auto',
            lineInterpolation: 'linear',
            barAlignment: 0,
            pointSize: 4,
            gradientMode: 'none',
            axisBorderShow: false,
            scaleDistribution: { type: 'linear' },
            thresholdsStyle: { mode: 'off' },
            hideFrom: { legend: false, tooltip: false, viz: false },
          },
        },
        overrides: [
          {
            matcher: { id: 'byRegexp', options: 'write errors|dropped records' },
            properties: [{ id: 'unit', value: 'short' }, { id: 'custom.axisPlacement', value: 'right' }],
          },
        ],
      },
      options: {
        legend: { showLegend: true, displayMode: 'list', placement: 'bottom', calcs: [] },
        tooltip: { mode: 'multi', sort: 'desc' },
      },
    },
  ],
}
