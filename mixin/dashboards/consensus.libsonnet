// The fleet dashboard's "Is it me or the target?" row (dashboards/README.md describes the
// panels): the fleet consensus recording rules (rules/consensus.libsonnet) side by side, per
// target and per site. `y` is the row's place on the grid; the row is 16 units high.
local g = import '../lib/grafana.libsonnet';

function(c, y) {
  local v = g.vars(c),
  local hostLink = {
    matcher: { id: 'byName', options: 'instance' },
    properties: [{
      id: 'links',
      value: [{
        title: 'Open host dashboard',
        url: '/d/reachability-host?var-job=${__data.fields.job}&var-instance=${__data.fields.instance}&${__url_time_range}',
        targetBlank: false,
      }],
    }],
  },
  local share = {
    mode: 'absolute',
    steps: [
      { color: 'green', value: null },
      { color: 'yellow', value: c.fleetFailingAloneRatio },
      { color: 'red', value: c.fleetTargetDownRatio },
    ],
  },
  local tableOptions(sortBy) = {
    showHeader: true,
    cellHeight: 'sm',
    sortBy: [{ displayName: sortBy, desc: true }],
    footer: { show: false, reducer: ['sum'], fields: '' },
  },

  panels: [
    g.row(22, 'Is it me or the target?', y=y),
    g.panel('table', 23, 'Is it the target?', { x: 0, y: y + 1, w: 12, h: 8 },
      'Per target (probe and target), the sites that fail it while they reach another target, out of the sites voting on it (a site that reaches nothing is cut off and does not vote; uplink-bound probes do not vote). Red from %s%% of at least %d sites: ReachabilityTargetDown, the target is down, not the sites. Counted over every site of the job: $site and $instance do not apply. (reachability:target_sites_failing:ratio and the counts beside it.)'
      % [std.toString(c.fleetTargetDownRatio * 100), c.fleetMinSites],
      [
        // max by: the same labels and no metric name, so that the merge joins the three.
        g.table('max by (job, probe, target) (reachability:target_sites_failing:ratio{job=~"$job"})'),
        g.table('max by (job, probe, target) (reachability:target_sites_failing:count{job=~"$job"})'),
        g.table('max by (job, probe, target) (reachability:target_sites:count{job=~"$job"})'),
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
            matcher: { id: 'byName', options: 'sites failing' },
            properties: [
              { id: 'unit', value: 'percentunit' },
              { id: 'decimals', value: 0 },
              { id: 'custom.cellOptions', value: { type: 'color-background' } },
              { id: 'thresholds', value: share },
            ],
          },
          {
            matcher: { id: 'byRegexp', options: 'failing|voting' },
            properties: [{ id: 'decimals', value: 0 }],
          },
        ],
      },
      options: tableOptions('sites failing'),
      transformations: [
        { id: 'merge', options: {} },
        {
          id: 'organize',
          options: {
            excludeByName: { Time: true },
            renameByName: { 'Value #A': 'sites failing', 'Value #B': 'failing', 'Value #C': 'voting' },
            indexByName: { target: 0, probe: 1, 'Value #A': 2, 'Value #B': 3, 'Value #C': 4, job: 5 },
          },
        },
      ],
    },
    g.panel('table', 24, 'Is it me?', { x: 12, y: y + 1, w: 12, h: 8 },
      "Per site: whether the problem is the site's own (reachability:site_failing_alone:bool): it fails targets that most other sites reach (how many: ReachabilitySiteFailingAlone), or its verdict is not full while most other sites are, or it has gone silent. With its state and where its path breaks. Click an instance to open its host dashboard.",
      [
        g.table('max by (job, %(site)s, instance) (reachability:site_failing_alone:bool{%(sel)s})' % v),
        g.table('max by (job, %(site)s, instance) (reachability:site_targets_failing_alone:count{%(sel)s})' % v),
        g.table('max by (job, %(site)s, instance, state) (reachability_connectivity_info{%(sel)s, scope="%(overall)s"})' % v),
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
          hostLink,
          {
            matcher: { id: 'byName', options: 'the site' },
            properties: [
              { id: 'custom.cellOptions', value: { type: 'color-background' } },
              {
                id: 'mappings',
                value: [{
                  type: 'value',
                  options: {
                    '0': { text: 'no', color: 'green', index: 0 },
                    '1': { text: 'yes', color: 'red', index: 1 },
                  },
                }],
              },
            ],
          },
          {
            matcher: { id: 'byName', options: 'targets failing alone' },
            properties: [{ id: 'decimals', value: 0 }],
          },
        ],
      },
      options: tableOptions('the site'),
      transformations: [
        { id: 'merge', options: {} },
        {
          id: 'organize',
          options: {
            excludeByName: { Time: true, 'Value #C': true, 'Value #D': true },
            renameByName: { 'Value #A': 'the site', 'Value #B': 'targets failing alone', location: 'breaks at' },
            indexByName: { instance: 0, [c.siteLabel]: 1, 'Value #A': 2, 'Value #B': 3, state: 4, location: 5, job: 6 },
          },
        },
      ],
    },
    g.panel('timeseries', 25, 'Share of sites failing each target', { x: 0, y: y + 9, w: 24, h: 7 },
      'Per target, the share of the voting sites that fail it over time (reachability:target_sites_failing:ratio); the line marks ReachabilityTargetDown\'s threshold. A target that climbs alone is down; many targets rising together at a few sites point at those sites (see "Is it me?").',
      [
        g.range('reachability:target_sites_failing:ratio{job=~"$job"}', '{{target}} ({{probe}})'),
      ]) + {
      fieldConfig: {
        defaults: {
          color: { mode: 'palette-classic' },
          mappings: [],
          thresholds: { mode: 'absolute', steps: [{ color: 'green', value: null }, { color: 'red', value: c.fleetTargetDownRatio }] },
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
            lineInterpolation: 'stepAfter',
            barAlignment: 0,
            pointSize: 4,
            gradientMode: 'none',
            axisBorderShow: false,
            scaleDistribution: { type: 'linear' },
            thresholdsStyle: { mode: 'line' },
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
