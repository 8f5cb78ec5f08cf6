// Recording rules: availability counted against the scrapes Prometheus attempted (a scrape that
// failed is unknown time, not online time), the scrape coverage beside it, SLO burn rates,
// latency quantiles, ICMP loss and probe success ratios.
local windowsShort = ['5m', '30m', '1h', '6h'];
local windowsLong = ['1d', '7d', '30d'];

{
  prometheusRules+:: {
    local c = $._config,
    local slo = '%g' % c.sloTarget,

    // Availability over a window: samples with the verdict `full` divided by the scrapes
    // attempted (`up` has a sample for every attempt, failed or not). A site that cannot be
    // scraped is not counted as online: its missing samples lower availability and coverage.
    // `or ... * 0` keeps the series (at 0) when no scrape of the window succeeded at all.
    local availability(w) = {
      record: 'reachability:availability:ratio_' + w,
      expr: |||
        (sum_over_time(reachability_internet_reachable{%(selector)s}[%(w)s]) or count_over_time(up{%(selector)s}[%(w)s]) * 0)
          / count_over_time(up{%(selector)s}[%(w)s])
      ||| % (c { w: w }),
    },
    // The share of attempted scrapes that delivered the verdict: 1 - coverage is unknown time.
    local coverage(w) = {
      record: 'reachability:scrape_coverage:ratio_' + w,
      expr: |||
        (count_over_time(reachability_internet_reachable{%(selector)s}[%(w)s]) or count_over_time(up{%(selector)s}[%(w)s]) * 0)
          / count_over_time(up{%(selector)s}[%(w)s])
      ||| % (c { w: w }),
    },
    local burnRate(w) = {
      record: 'reachability:slo_burn_rate:' + w,
      expr: '(1 - reachability:availability:ratio_%s) / (1 - %s)' % [w, slo],
    },
    local quantile(q, name) = {
      record: 'reachability:probe_duration_seconds:%s_5m' % name,
      expr: 'histogram_quantile(%s, rate(reachability_probe_duration_seconds_bucket{%s}[5m]))' % [q, c.selector],
    },

    groups+: [
      {
        name: 'reachability.availability',
        rules: [availability(w) for w in windowsShort] + [coverage(w) for w in windowsShort] + [burnRate(w) for w in windowsShort],
      },
      {
        // Long windows read days of samples: evaluated once a minute.
        name: 'reachability.availability.long',
        interval: '1m',
        rules: [availability(w) for w in windowsLong] + [coverage(w) for w in windowsLong] + [
          burnRate('1d'),
          {
            record: 'reachability:slo_error_budget_remaining:ratio_30d',
            expr: '1 - (1 - reachability:availability:ratio_30d) / (1 - %s)' % slo,
          },
        ],
      },
      {
        name: 'reachability.latency',
        rules: [
          quantile('0.5', 'p50'),
          quantile('0.9', 'p90'),
          quantile('0.99', 'p99'),
          {
            record: 'reachability:icmp_loss:ratio_5m',
            expr: |||
              1 - rate(reachability_icmp_echo_replies_total{%(selector)s}[5m])
                / (rate(reachability_icmp_echo_requests_total{%(selector)s}[5m]) > 0)
            ||| % c,
          },
          {
            record: 'reachability:probe_success:ratio_5m',
            expr: 'avg_over_time(reachability_probe_success{%(selector)s}[5m])' % c,
          },
        ],
      },
    ],
  },
}
