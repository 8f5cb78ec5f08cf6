// What the rules, alerts and dashboards would otherwise hard-code. Override any field:
//   (import 'mixin.libsonnet') + { _config+:: { job: 'edge' } }
{
  _config+:: {
    // The scrape job of the exporters: the rules and alerts select it, and the dashboards open
    // on it (their $job offers every job that has the exporter's metrics).
    job: 'reachability',
    // Further PromQL matchers (comma-separated, e.g. 'site!=""') that every rule, alert and
    // dashboard query adds to the job's. Empty: none.
    extraMatchers: '',
    // What the rules and alerts select: the job and the extra matchers. Override it whole for a
    // selector without a job (the dashboards then still select $job and extraMatchers).
    selector: std.join(', ', ['job="%s"' % self.job] + (if self.extraMatchers == '' then [] else [self.extraMatchers])),
    // The label that tells sites apart: a target label of the scrape, or the `site` external
    // label of a Prometheus agent that remote-writes (deploy/fleet/). The dashboards filter on it.
    siteLabel: 'site',
    // Constant probe labels (the configuration file's `labels:`) the dashboards offer as filters,
    // one variable each ($probe_<name>), joined on reachability_probe_labels_info.
    probeLabels: ['check'],

    // Every alert's runbook_url is runbookURLBase + '#' + the alert's name in lower case.
    runbookURLBase: 'https://github.com/reachability-exporter/reachability_exporter/blob/main/docs/runbook.md',

    // Availability SLO: the share of time online.
    sloTarget: 0.995,

    // Alert thresholds and `for` durations.
    internetUnreachableFor: '5m',
    captivePortalFor: '1m',
    uplinkDownFor: '5m',
    // An uplink budget (uplink_settings budget) that holds its probes' interval above this
    // bound (its outage would be seen this late), for uplinkBudgetSlowsDetectionFor.
    uplinkBudgetDetectionBound: '15m',
    uplinkBudgetSlowsDetectionFor: '30m',
    // States of an IP family that count as failing while another family is full. `none` (no
    // path: no address or default route of that family) is left out by default, since hosts
    // without IPv6 show it for ever; add it on a fleet that is dual-stack everywhere.
    familyFailingStates: 'limited|portal',
    familyDownFor: '10m',
    partialConnectivityFor: '10m',
    pathMTUBlackHoleFor: '10m',
    highLatencySeconds: 0.5,
    highLatencyFor: '10m',
    packetLossRatio: 0.05,
    packetLossFor: '10m',
    certificateExpiryDays: 14,
    certificateExpiringFor: '1h',
    exporterDownFor: '2m',
    exporterAbsentFor: '10m',
    // An instance that had an `up` series within the lookback and has none now (gone from
    // service discovery, or an agent that stopped remote-writing).
    exporterInstanceAbsentLookback: '1d',
    exporterInstanceAbsentFor: '5m',
    roundsStalledWindow: '5m',
    roundsStalledFor: '5m',
    flappingRecoveries: 6,
    flappingWindow: '1h',
    historyProblemsWindow: '10m',
    configReloadFailedFor: '5m',
    // Fleet consensus (rules/consensus.libsonnet): is it the site or the target? A site votes
    // on a target only while it reaches another one; a target is down when at least
    // fleetTargetDownRatio of at least fleetMinSites voting sites fail it; a site fails a target
    // alone when fewer than fleetFailingAloneRatio of the other voting sites (at least
    // fleetMinSites - 1 of them) fail it too. Below fleetMinSites nothing is compared: a single
    // host never raises these alerts.
    fleetMinSites: 3,
    fleetTargetDownRatio: 0.8,
    fleetTargetDownFor: '5m',
    fleetFailingAloneRatio: 0.5,
    fleetFailingAloneFor: '10m',
    // A site seen within the lookback (its `up`) with nothing newer than siteSilentAfter is
    // silent (cut off from the central: deploy/fleet/fleet.rules.yml's ReachabilitySiteSilent).
    siteSilentAfter: '2m',
    siteSilentLookback: '6h',
    // Multiwindow, multi-burn-rate alerts (the Google SRE workbook's numbers).
    burnRateFast: 14.4,
    burnRateFastFor: '2m',
    burnRateSlow: 6,
    burnRateSlowFor: '15m',

    // Dashboards.
    dashboardTags: ['reachability', 'network'],
    dashboardRefresh: '30s',
    dashboardTimezone: 'browser',
  },
}
