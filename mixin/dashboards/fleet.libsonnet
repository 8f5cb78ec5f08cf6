// The fleet dashboard (dashboards/README.md describes every panel), rendered into
// dashboards/ by scripts/mixin.sh; panels and variables come from lib/grafana.libsonnet.
local g = import '../lib/grafana.libsonnet';

function(c) {
  local v = g.vars(c),
  uid: 'reachability-fleet',
  title: 'Reachability — fleet',
  description: 'Many reachability_exporter instances (sites) at once: who is offline or behind a portal now, is it a site or the target, availability and latency compared. See dashboards/README.md.',
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
      title: 'Host',
      type: 'link',
      url: '/d/reachability-host',
      icon: 'dashboard',
      targetBlank: false,
      tooltip: 'One site in detail',
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
    ],
  },
  templating: { list: g.variables(c, multiInstance=true) },
  panels: [
    g.row(1, 'Fleet now', y=0),
    g.panel('stat', 2, 'Sites online', { x: 0, y: 1, w: 4, h: 4 },
      'Instances whose verdict is full (reachability_internet_reachable == 1).',
      [
        g.instant('count(reachability_internet_reachable{%(sel)s} == 1) or vector(0)' % v, 'Sites online'),
      ]) + {
      fieldConfig: {
        defaults: {
          unit: 'none',
          color: { mode: 'thresholds' },
          mappings: [],
          thresholds: {
            mode: 'absolute',
            steps: [{ color: 'green', value: null }, { color: 'green', value: 1 }],
          },
          decimals: 0,
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
    g.panel('stat', 3, 'Sites offline', { x: 4, y: 1, w: 4, h: 4 },
      'Instances whose verdict is none or limited.',
      [
        g.instant('count(reachability_connectivity_state{%(sel)s, state=~"none|limited"} == 1) or vector(0)' % v, 'Sites offline'),
      ]) + {
      fieldConfig: {
        defaults: {
          unit: 'none',
          color: { mode: 'thresholds' },
          mappings: [],
          thresholds: {
            mode: 'absolute',
            steps: [{ color: 'green', value: null }, { color: 'red', value: 1 }],
          },
          decimals: 0,
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
    g.panel('stat', 4, 'Behind a captive portal', { x: 8, y: 1, w: 4, h: 4 },
      'Instances whose verdict is portal.',
      [
        g.instant('count(reachability_connectivity_state{%(sel)s, state="portal"} == 1) or vector(0)' % v, 'Behind a captive portal'),
      ]) + {
      fieldConfig: {
        defaults: {
          unit: 'none',
          color: { mode: 'thresholds' },
          mappings: [],
          thresholds: {
            mode: 'absolute',
            steps: [{ color: 'green', value: null }, { color: 'orange', value: 1 }],
          },
          decimals: 0,
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
    g.panel('stat', 5, 'Exporters down', { x: 12, y: 1, w: 4, h: 4 },
      'Targets Prometheus cannot scrape (up == 0): their state is unknown.',
      [
        g.instant('count(up{%(sel)s} == 0) or vector(0)' % v, 'Exporters down'),
      ]) + {
      fieldConfig: {
        defaults: {
          unit: 'none',
          color: { mode: 'thresholds' },
          mappings: [],
          thresholds: {
            mode: 'absolute',
            steps: [{ color: 'green', value: null }, { color: 'red', value: 1 }],
          },
          decimals: 0,
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
    g.panel('stat', 6, 'Firing alerts', { x: 16, y: 1, w: 4, h: 4 },
      'Reachability alerts firing now (ALERTS) for the chosen job, sites and instances (an alert without an instance label, such as ReachabilityExporterAbsent, counts while $instance is All).',
      [
        g.instant('count(ALERTS{alertname=~"Reachability.*", alertstate="firing", %(sel)s}) or vector(0)' % v, 'Firing alerts'),
      ]) + {
      fieldConfig: {
        defaults: {
          unit: 'none',
          color: { mode: 'thresholds' },
          mappings: [],
          thresholds: {
            mode: 'absolute',
            steps: [{ color: 'green', value: null }, { color: 'red', value: 1 }],
          },
          decimals: 0,
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
    g.panel('stat', 7, 'Fleet availability (24h)', { x: 20, y: 1, w: 4, h: 4 },
      'Mean over instances of the share of scrapes attempted in the last 24 hours that found the verdict full (a failed scrape counts as unknown, not online).',
      [
        g.instant('avg(%s)' % v.availability('1d'), 'fleet'),
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
    // Is it me or the target? (consensus.libsonnet), right below the fleet's numbers.
  ] + (import 'consensus.libsonnet')(c, 5).panels + [
    g.row(8, 'Sites', y=21),
    g.panel('table', 9, 'Sites', { x: 0, y: 22, w: 24, h: 9 },
      'One row per instance: verdict, reason, where it breaks (reachability_fault_info\'s location), time in state, availability (failed scrapes count as unknown, not online), p90 RTT of ICMP echoes and of HTTP(S) exchanges apart. Click an instance to open its host dashboard.',
      [
        g.table('max by (job, %(site)s, instance, state, reason) (reachability_connectivity_info{%(sel)s, scope="%(overall)s"})' % v),
        g.table('max by (job, %(site)s, instance) (time() - reachability_state_since_timestamp_seconds{%(sel)s, scope="%(overall)s"})' % v),
        g.table(v.availability('1d')),
        g.table(v.availability('7d')),
        g.table('histogram_quantile(0.9, sum by (job, %(site)s, instance, le) (rate(reachability_probe_duration_seconds_bucket{%(sel)s, probe="icmp"}[5m])%(probes)s))' % v),
        g.table('sum by (job, %(site)s, instance) (increase(reachability_state_transitions_total{%(sel)s}[$__range]))' % v),
        g.table('histogram_quantile(0.9, sum by (job, %(site)s, instance, le) (rate(reachability_probe_duration_seconds_bucket{%(sel)s, probe=~"https?"}[5m])%(probes)s))' % v),
        g.table('max by (job, %(site)s, instance, location) (reachability_fault_info{%(sel)s, scope="%(overall)s"})' % v),
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
            matcher: { id: 'byName', options: 'instance' },
            properties: [
              {
                id: 'links',
                value: [
                  {
                    title: 'Open host dashboard',
                    url: '/d/reachability-host?var-job=${__data.fields.job}&var-instance=${__data.fields.instance}&${__url_time_range}',
                    targetBlank: false,
                  },
                ],
              },
            ],
          },
          {
            matcher: { id: 'byName', options: 'state' },
            properties: [
              { id: 'custom.cellOptions', value: { type: 'color-background' } },
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
          {
            matcher: { id: 'byName', options: 'in state for' },
            properties: [{ id: 'unit', value: 's' }],
          },
          {
            matcher: { id: 'byRegexp', options: 'availability.*' },
            properties: [
              { id: 'unit', value: 'percentunit' },
              { id: 'decimals', value: 3 },
              { id: 'custom.cellOptions', value: { type: 'color-text' } },
              {
                id: 'thresholds',
                value: {
                  mode: 'absolute',
                  steps: [
                    { color: 'red', value: null },
                    { color: 'yellow', value: 0.99 },
                    { color: 'green', value: 0.999 },
                  ],
                },
              },
            ],
          },
          {
            matcher: { id: 'byRegexp', options: 'p90 RTT.*' },
            properties: [{ id: 'unit', value: 's' }],
          },
          {
            matcher: { id: 'byName', options: 'transitions in range' },
            properties: [{ id: 'decimals', value: 0 }],
          },
        ],
      },
      options: {
        showHeader: true,
        cellHeight: 'sm',
        sortBy: [{ displayName: 'state', desc: false }],
        footer: { show: false, reducer: ['sum'], fields: '' },
      },
      transformations: [
        { id: 'merge', options: {} },
        {
          id: 'organize',
          options: {
            excludeByName: { Time: true, 'Value #A': true, 'Value #H': true },
            renameByName: {
              location: 'breaks at',
              'Value #B': 'in state for',
              'Value #C': 'availability 24h',
              'Value #D': 'availability 7d',
              'Value #E': 'p90 RTT ICMP',
              'Value #F': 'transitions in range',
              'Value #G': 'p90 RTT HTTP(S)',
            },
            indexByName: { instance: 0, site: 1, job: 2, state: 3, reason: 4, location: 5 },
          },
        },
      ],
    },
    g.panel('state-timeline', 10, 'State per site', { x: 0, y: 31, w: 24, h: 8 },
      'Each instance\'s overall verdict over time (0 unknown … 4 full).',
      [
        g.range(|||
          sum by (%(site)s, instance) (
            reachability_connectivity_state{%(sel)s, state="none"}
            or reachability_connectivity_state{%(sel)s, state="portal"} * 2
            or reachability_connectivity_state{%(sel)s, state="limited"} * 3
            or reachability_connectivity_state{%(sel)s, state="full"} * 4
          )
        ||| % v, '{{instance}} {{site}}'),
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
    g.row(11, 'Comparison', y=39),
    g.panel('bargauge', 12, 'Availability (7d), worst first', { x: 0, y: 40, w: 8, h: 8 },
      'Availability over 7 days per instance: samples online divided by scrapes attempted.',
      [
        g.instant('sort(%s)' % v.availability('7d'), '{{instance}} {{site}}'),
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
    g.panel('timeseries', 13, 'p90 RTT per site', { x: 8, y: 40, w: 8, h: 8 },
      '90th percentile of successful probes per instance and probe kind (ICMP echoes, HTTP(S) exchanges, DNS lookups and TCP connects are not mixed).',
      [
        g.range('histogram_quantile(0.9, sum by (%(site)s, instance, probe, le) (rate(reachability_probe_duration_seconds_bucket{%(sel)s}[$__rate_interval])%(probes)s))' % v, '{{probe}} {{instance}} {{site}}'),
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
    g.panel('bargauge', 14, 'Most state changes in range', { x: 16, y: 40, w: 8, h: 8 },
      'The ten instances whose verdict changed most often.',
      [
        g.instant('topk(10, sum by (%(site)s, instance) (increase(reachability_state_transitions_total{%(sel)s}[$__range])))' % v, '{{instance}} {{site}}'),
      ]) + {
      fieldConfig: {
        defaults: {
          color: { mode: 'thresholds' },
          mappings: [],
          thresholds: {
            mode: 'absolute',
            steps: [
              { color: 'green', value: null },
              { color: 'yellow', value: 3 },
              { color: 'red', value: 10 },
            ],
          },
          decimals: 0,
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
    g.panel('timeseries', 15, 'Probe failures by reason', { x: 0, y: 48, w: 8, h: 8 },
      'Failed probe rounds across the fleet by reason (reachability_probe_failures_total).',
      [
        g.range('sum by (reason) (increase(reachability_probe_failures_total{%(sel)s}[$__rate_interval])%(probes)s)' % v, '{{reason}}'),
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
    g.panel('timeseries', 16, 'ICMP loss per site', { x: 8, y: 48, w: 8, h: 8 },
      'Worst per-round ICMP loss per instance (reachability_icmp_loss_ratio).',
      [
        g.range('max by (%(site)s, instance) (reachability_icmp_loss_ratio{%(sel)s}%(probes)s)' % v, '{{instance}} {{site}}'),
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
    g.panel('table', 17, 'Uplinks down', { x: 16, y: 48, w: 8, h: 8 },
      'Uplinks whose verdict is not full, per instance (reachability_uplink_internet_reachable == 0).',
      [
        g.table('reachability_uplink_internet_reachable{%(sel)s} == 0' % v),
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
            matcher: { id: 'byName', options: 'instance' },
            properties: [
              {
                id: 'links',
                value: [
                  {
                    title: 'Open host dashboard',
                    url: '/d/reachability-host?var-job=${__data.fields.job}&var-instance=${__data.fields.instance}&${__url_time_range}',
                    targetBlank: false,
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
        {
          id: 'organize',
          options: { excludeByName: { Time: true, Value: true, __name__: true } },
        },
      ],
    },
    g.row(18, 'Fleet health', y=56),
    g.panel('bargauge', 19, 'Certificates expiring first', { x: 0, y: 57, w: 8, h: 7 },
      'The ten HTTPS targets whose leaf certificate expires soonest.',
      [
        g.instant('bottomk(10, min by (target) ((reachability_tls_certificate_expiry_timestamp_seconds{%(sel)s}%(probes)s) - time()))' % v, '{{target}}'),
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
    g.panel('table', 20, 'Exporter versions', { x: 8, y: 57, w: 8, h: 7 },
      'How many instances run each build (reachability_exporter_build_info).',
      [
        g.table('count by (version, revision, swiftversion) (reachability_exporter_build_info{%(sel)s})' % v),
      ]) + {
      fieldConfig: {
        defaults: {
          color: { mode: 'palette-classic' },
          mappings: [],
          thresholds: { mode: 'absolute', steps: [{ color: 'green', value: null }] },
          custom: { align: 'auto', cellOptions: { type: 'auto' }, inspect: false },
        },
        overrides: [],
      },
      options: {
        showHeader: true,
        cellHeight: 'sm',
        footer: { show: false, reducer: ['sum'], fields: '' },
      },
      transformations: [
        {
          id: 'organize',
          options: { excludeByName: { Time: true }, renameByName: { Value: 'instances' } },
        },
      ],
    },
    g.panel('timeseries', 21, 'History and configuration problems', { x: 16, y: 57, w: 8, h: 7 },
      'History write errors and dropped records, and failed configuration reloads, summed over the fleet; 0 when there are none (also without --history.dir).',
      [
        g.range('sum(increase(reachability_history_write_errors_total{%(sel)s}[$__rate_interval])) or vector(0)' % v, 'history write errors'),
        g.range('sum(increase(reachability_history_dropped_records_total{%(sel)s}[$__rate_interval])) or vector(0)' % v, 'history records dropped'),
        g.range('count(reachability_exporter_config_last_reload_successful{%(sel)s} == 0) or vector(0)' % v, 'instances with a failed reload'),
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
  ],
}
