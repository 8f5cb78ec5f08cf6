// Fleet consensus: is it the site or the target? Recording rules that compare the sites
// (exporters: job, instance and the site label) probing the same target (probe, target).
//
// The rules, in order (each reads the ones above it; a group evaluates its rules in order):
// 1. A site votes on each target it probes through the routing table (probes bound to an uplink
//    are the uplink alerts' business) only while it reaches at least one of them: 1 fails,
//    0 reaches. A site that reaches nothing is cut off and casts no vote, so a dead site never
//    makes a target look down.
// 2. Per target: the sites voting, the sites failing it, the share failing.
// 3. A site fails a target alone when fewer than fleetFailingAloneRatio of the other voting
//    sites fail it, and there are at least fleetMinSites - 1 others.
// 4. Per site: how many targets it fails alone; whether its verdict is not full; whether the
//    problem is the site's (it fails a target alone, or it is not full while most others are,
//    or it is silent), 0 for every other site that is scraped.
// Every rule has a value (0 or more) for every site or target it covers, never only the bad
// ones, so that dashboards and alerts can tell "fine" from "not measured".
{
  prometheusRules+:: {
    local c = $._config,
    local v = c {
      site: c.siteLabel,
      // What tells sites apart.
      vantage: 'job, instance, %s' % c.siteLabel,
      minSites: '%d' % c.fleetMinSites,
      aloneRatio: '%g' % c.fleetFailingAloneRatio,
    },
    // probe_success of the probes that follow the routing table (reachability_probe_info names
    // an interface only for probes bound to an uplink).
    local routed = |||
      reachability_probe_success{%(selector)s}
        unless on (%(vantage)s, probe, target) reachability_probe_info{%(selector)s, interface!=""}
    ||| % v,
    local indent(text, n) = std.join('\n' + std.repeat(' ', n), std.split(std.rstripChars(text, '\n'), '\n')),

    groups+: [
      {
        name: 'reachability.consensus',
        rules: [
          {
            record: 'reachability:probe_failure:vote',
            expr: |||
              1 - (
                %(routed)s
              )
              and on (%(vantage)s)
              max by (%(vantage)s) (
                %(routed)s
              ) == 1
            ||| % (v { routed: indent(routed, 2) }),
          },
          {
            record: 'reachability:target_sites:count',
            expr: 'count by (job, probe, target) (reachability:probe_failure:vote)',
          },
          {
            record: 'reachability:target_sites_failing:count',
            expr: 'sum by (job, probe, target) (reachability:probe_failure:vote)',
          },
          {
            record: 'reachability:target_sites_failing:ratio',
            expr: 'reachability:target_sites_failing:count / reachability:target_sites:count',
          },
          // The others failing it: the failing sites but this one, over the voting sites but
          // this one. 0/0 (a lone voter) compares false; the second factor is 0 there anyway.
          {
            record: 'reachability:probe_failure:alone',
            expr: |||
              reachability:probe_failure:vote
                * on (job, probe, target) group_left ()
                (
                  (reachability:target_sites_failing:count - 1) / (reachability:target_sites:count - 1) < bool %(aloneRatio)s
                )
                * on (job, probe, target) group_left ()
                (reachability:target_sites:count >= bool %(minSites)s)
            ||| % v,
          },
          {
            record: 'reachability:site_targets_failing_alone:count',
            expr: 'sum by (%(vantage)s) (reachability:probe_failure:alone)' % v,
          },
          {
            record: 'reachability:site_not_full:bool',
            expr: 'max by (%(vantage)s) (reachability_connectivity_state{%(selector)s, state=~"none|limited|portal"})' % v,
          },
          // 1 in the first case that holds, else 0 (`or` keeps the first series of a site).
          {
            record: 'reachability:site_failing_alone:bool',
            expr: |||
              (
                reachability:site_not_full:bool
                  * on (job) group_left ()
                  (
                    (sum by (job) (reachability:site_not_full:bool) - 1) / (count by (job) (reachability:site_not_full:bool) - 1) < bool %(aloneRatio)s
                  )
                  * on (job) group_left ()
                  (count by (job) (reachability:site_not_full:bool) >= bool %(minSites)s)
              ) == 1
              or
              clamp_max(reachability:site_targets_failing_alone:count, 1) == 1
              or
              (
                group by (%(vantage)s) (present_over_time(up{%(selector)s}[%(siteSilentLookback)s]))
                unless on (%(vantage)s)
                group by (%(vantage)s) (present_over_time(up{%(selector)s}[%(siteSilentAfter)s]))
              )
              or
              reachability:site_not_full:bool * 0
              or
              reachability:site_targets_failing_alone:count * 0
              or
              group by (%(vantage)s) (up{%(selector)s}) * 0
            ||| % v,
          },
        ],
      },
    ],
  },
}
