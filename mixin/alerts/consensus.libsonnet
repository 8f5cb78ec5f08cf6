// The fleet consensus alerts (rules/consensus.libsonnet has the rules they read): a target down
// from most sites, once for the target; a site failing targets that most others reach, once for
// the site. The site-level alerts (cut off, offline) are ReachabilityInternetUnreachable here and
// ReachabilitySiteSilent / ReachabilitySiteOutageReported in deploy/fleet/fleet.rules.yml;
// deploy/fleet/alertmanager.yml inhibits the per-site symptoms of both kinds of outage.
local u = import '../lib/util.libsonnet';
local labels = import '../lib/verdict_labels.json';

{
  prometheusAlerts+:: {
    local c = $._config,
    local site = c.siteLabel,
    local alert(name, expr, forDuration, summary, description) = {
      alert: name,
      expr: expr,
      'for': forDuration,
      labels: { severity: 'warning' },
      annotations: { summary: summary, description: description, runbook_url: u.runbookURL(c, name) },
    },
    // A query template over the alert's target (job, probe, target): `what` over the result
    // when it has series, nothing when it has none. `expr` holds %%s for the three labels.
    local aboutTarget(expr, what) =
      '{{ with printf "%s" $labels.job $labels.probe $labels.target | query }}%s{{ end }}' % [expr, what],
    local targetSel = 'job=\\"%s\\",probe=\\"%s\\",target=\\"%s\\"',
    // The same over the alert's site (job, instance, site label).
    local aboutSite(expr, what) =
      '{{ with printf "%s" $labels.job $labels.instance $labels.%s | query }}%s{{ end }}' % [expr, site, what],
    local siteSel = 'job=\\"%%s\\",instance=\\"%%s\\",%s=\\"%%s\\"' % site,

    groups+: [{
      name: 'reachability.consensus.alerts',
      rules: [
        // Once per target, however many sites fail it; the sites' own symptoms of it (loss,
        // latency to that target) are inhibited by it in Alertmanager.
        alert(
          'ReachabilityTargetDown',
          |||
            reachability:target_sites_failing:ratio >= %(r)s
            and on (job, probe, target)
            reachability:target_sites:count >= %(n)d
          ||| % { r: '%g' % c.fleetTargetDownRatio, n: c.fleetMinSites },
          c.fleetTargetDownFor,
          'A probe target is down from at least %s%% of the sites.' % u.percent(c.fleetTargetDownRatio),
          ('%s of %s sites that reach other targets have failed %s probes to %s for %s (threshold: %s%% of at least %d sites): '
           + 'the target, or the path every site shares to it, is down, not the sites.%s')
          % [
            aboutTarget('reachability:target_sites_failing:count{%s}' % targetSel, '{{ . | first | value | printf "%.0f" }}'),
            aboutTarget('reachability:target_sites:count{%s}' % targetSel, '{{ . | first | value | printf "%.0f" }}'),
            '{{ $labels.probe }}',
            '{{ $labels.target }}',
            u.duration(c.fleetTargetDownFor),
            u.percent(c.fleetTargetDownRatio),
            c.fleetMinSites,
            aboutTarget(
              // The voting sites' reasons only: a site cut off fails every target for its own reasons.
              'sort_desc(count by (reason) ((increase(reachability_probe_failures_total{%s}[%s]) > 0) and on (%s, probe, target) (reachability:probe_failure:vote == 1)))'
              % [targetSel, c.fleetTargetDownFor, 'job, instance, ' + site],
              ' Failure reasons: {{ range $i, $s := . }}{{ if $i }}, {{ end }}{{ $s.Labels.reason }} at {{ $s.Value | printf "%.0f" }}{{ if eq $s.Value 1.0 }} site{{ else }} sites{{ end }}{{ end }}.'
            ),
          ],
        ),
        // Once per site: the targets it fails that most other sites reach, and where the
        // exporter says its path breaks.
        alert(
          'ReachabilitySiteFailingAlone',
          'reachability:site_targets_failing_alone:count > 0',
          c.fleetFailingAloneFor,
          'A site fails targets that most other sites reach.',
          ('For %s {{ $labels.instance }}%s has failed probes that most other sites pass: %s. '
           + "The problem is this site's path to them (its resolver, a filter, a route), not the targets%s.")
          % [
            u.duration(c.fleetFailingAloneFor),
            '{{ with $labels.%s }} (site {{ . }}){{ end }}' % site,
            aboutSite(
              'reachability:probe_failure:alone{%s} == 1' % siteSel,
              '{{ range $i, $s := . | sortByLabel "target" }}{{ if $i }}, {{ end }}{{ $s.Labels.target }} ({{ $s.Labels.probe }}){{ end }}'
            ),
            aboutSite(
              'reachability_fault_info{%s,scope=\\"%s\\"}' % [siteSel, labels.scope.overall],
              '{{ with first . }}; its verdict breaks at: {{ .Labels.location }}{{ end }}'
            ),
          ],
        ),
      ],
    }],
  },
}
