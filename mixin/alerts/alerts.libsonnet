// Alerting rules. Every alert keeps the exporter's target labels (job, instance, and any the
// scrape or the agent adds, such as site) so Alertmanager can route per site, and links its
// section of docs/runbook.md. As the mixin guidelines (and mixtool lint) ask: a `summary` that is
// one fixed sentence, the same for every instance of the alert (a notification title that
// groups well); a `description` that names the instance, the target and the values.
local u = import '../lib/util.libsonnet';
// Scope and reason label values, generated from the exporter's types (VerdictReasonTests holds it).
local labels = import '../lib/verdict_labels.json';

{
  prometheusAlerts+:: {
    local c = $._config,
    // The config and the label values the expressions select: `%(overall)s`, `%(partial)s`, `%(mtu)s`.
    local cl = c { overall: labels.scope.overall, partial: labels.rule.partial, mtu: labels.probe.mtu },
    local alert(name, severity, expr, forDuration, summary, description) = {
      alert: name,
      expr: expr,
      'for': forDuration,
      labels: { severity: severity },
      annotations: { summary: summary, description: description, runbook_url: u.runbookURL(c, name) },
    },
    // A query template reading a per-scope info series of the alert's exporter back: `what`
    // (a template over the sample's .Labels) when the series exists, nothing when it does not.
    // scope: a quoted PromQL string literal's content, or %s with scopeArg giving its value.
    local currentInfo(metric, scope, scopeArg, what) =
      '{{ with printf "%s{scope=\\"%s\\",job=\\"%%s\\",instance=\\"%%s\\",%s=\\"%%s\\"}" %s$labels.job $labels.instance $labels.%s | query }}{{ with first . }}%s{{ end }}{{ end }}'
      % [metric, scope, c.siteLabel, scopeArg, c.siteLabel, what],
    // The current verdict of a scope (its state and reason).
    local currentVerdict(scope, scopeArg, what) = currentInfo('reachability_connectivity_info', scope, scopeArg, what),
    // " (now: limited, reason timeout; breaks at: upstream after hop 3)": the
    // scope's verdict, where its path breaks (reachability_fault_info) and, for upstream, the
    // last hop that answers (reachability_fault_last_hop). Only templates read them, so the
    // alert fires the same without them: no "; breaks at" when fault_info is absent (an
    // exporter older than fault localization), no hop without a trace, nothing at all when the
    // verdict series is absent too.
    local currentVerdictAndFault(scope, scopeArg) =
      currentVerdict(scope, scopeArg, ' (now: {{ .Labels.state }}, reason {{ .Labels.reason }}%s)'
                                      % currentInfo('reachability_fault_info', scope, scopeArg, '; breaks at: {{ .Labels.location }}%s'
                                                    % currentInfo('reachability_fault_last_hop', scope, scopeArg, ' after hop {{ .Value }}'))),

    // "; largest packet that passes: 1400 bytes (mtu:9.9.9.9)": the path MTU each failing `mtu`
    // probe of the alert's exporter measured (reachability_path_mtu_bytes of the targets whose
    // probe_success is 0), by target; nothing when none measured a size. An uplink scope lists
    // the probes bound to that uplink (target "NAME@IFACE"), any other scope (overall, ipv4,
    // ipv6) the unbound ones (probe names have no "@").
    local failingPathMTU =
      local sel = 'job=\\"%%s\\",instance=\\"%%s\\",%s=\\"%%s\\"' % c.siteLabel;
      '{{ $bound := "" }}{{ if not (eq $labels.scope "%s" "%s" "%s") }}{{ $bound = printf "@%%s" $labels.scope }}{{ end }}'
      % [labels.scope.overall, labels.scope.ipv4, labels.scope.ipv6]
      + '{{ with printf "reachability_path_mtu_bytes{%s,target=~\\"[^@]*%%s\\"} and on (target) (reachability_probe_success{probe=\\"mtu\\",%s} == 0)" $labels.job $labels.instance $labels.%s $bound $labels.job $labels.instance $labels.%s | query | sortByLabel "target" }}'
        % [sel, sel, c.siteLabel, c.siteLabel]
      + '; largest packet that passes: {{ range $i, $s := . }}{{ if $i }}, {{ end }}{{ $s.Value }} bytes ({{ $s.Labels.target }}){{ end }}{{ end }}',

    groups+: [{
      name: 'reachability.alerts',
      rules: [
        // `none` (no usable path) or `limited` for any reason but `partial` and `mtu`, which
        // have their own alerts (the internet works, for some traffic); `unknown` (no round yet)
        // does not count. The reason is aggregated away so that a
        // change of reason (timeout -> refused) does not restart the `for` clock; the description
        // reads the current one back.
        alert(
          'ReachabilityInternetUnreachable', 'critical',
          |||
            max without (scope, state, reason) (
              reachability_connectivity_info{%(selector)s, scope="%(overall)s", state=~"none|limited", reason!~"%(partial)s|%(mtu)s"}
            ) == 1
          ||| % cl,
          c.internetUnreachableFor,
          'A site cannot reach the internet.',
          'The reachability verdict of {{ $labels.instance }} has been none or limited for %s%s.'
          % [u.duration(c.internetUnreachableFor), currentVerdictAndFault(labels.scope.overall, '')],
        ),
        alert(
          'ReachabilityCaptivePortal', 'warning',
          'reachability_connectivity_state{%(selector)s, state="portal"} == 1' % c,
          c.captivePortalFor,
          'A site is behind a captive portal.',
          'A captive portal (or another interceptor) answers in place of the internet on {{ $labels.instance }} (signal: %s).'
          % currentVerdict(labels.scope.overall, '', '{{ .Labels.reason }}'),
        ),
        // One uplink is not `full` (and not still `unknown`) while another uplink of the same
        // exporter is `full`: the failover path is what carries the traffic.
        alert(
          'ReachabilityUplinkDown', 'warning',
          |||
            max without (state) (reachability_uplink_connectivity_state{%(selector)s, state=~"none|limited|portal"}) == 1
            and ignoring (interface)
            max without (interface) (reachability_uplink_internet_reachable{%(selector)s}) == 1
          ||| % c,
          c.uplinkDownFor,
          'An uplink is down while another uplink of the site works.',
          'Probes bound to {{ $labels.interface }} have not reached the internet for %s%s, while at least one other uplink of {{ $labels.instance }} does.'
          % [u.duration(c.uplinkDownFor), currentVerdictAndFault('%s', '$labels.interface ')],
        ),
        // A metered uplink's budget stretches its probes past the bound (or is spent): an outage
        // of that uplink would be seen that late. Its own configured interval never fires it.
        alert(
          'ReachabilityUplinkBudgetSlowsDetection', 'warning',
          |||
            max without (cause) (reachability_uplink_probe_interval_seconds{%(selector)s, cause=~"budget|exhausted"}) > %(bound)g
          ||| % (c { bound: u.seconds(c.uplinkBudgetDetectionBound) }),
          c.uplinkBudgetSlowsDetectionFor,
          'The traffic budget of an uplink slows its probes past %s.' % u.duration(c.uplinkBudgetDetectionBound),
          'To stay within its budget, the probes of uplink {{ $labels.interface }} of {{ $labels.instance }} run only every {{ $value | humanizeDuration }}: an outage of that uplink would be seen that late.%s Raise the budget, name fewer or smaller probes for it (uplink_settings probes), or accept the delay.'
          % '{{ with printf "reachability_uplink_budget_remaining_bytes{job=\\"%s\\",instance=\\"%s\\",interface=\\"%s\\"}" $labels.job $labels.instance $labels.interface | query }}{{ with first . }} {{ .Value | humanize1024 }}B left in this window.{{ end }}{{ end }}',
        ),
        // One IP family fails while another is full: "IPv6 broken, IPv4 fine" (or the reverse).
        // Applications that try the broken family first stall until they fall back.
        alert(
          'ReachabilityIPFamilyDown', 'warning',
          |||
            max without (state) (reachability_family_connectivity_state{%(selector)s, state=~"%(familyFailingStates)s"}) == 1
            and ignoring (family)
            max without (family) (reachability_family_internet_reachable{%(selector)s}) == 1
          ||| % c,
          c.familyDownFor,
          'One IP family fails while another works.',
          'The {{ $labels.family }} verdict of {{ $labels.instance }} has not been full for %s%s while another IP family reaches the internet.'
          % [u.duration(c.familyDownFor), currentVerdictAndFault('%s', '$labels.family ')],
        ),
        // HTTP works while every HTTPS probe fails (Android's PARTIAL connectivity), per scope.
        alert(
          'ReachabilityPartialConnectivity', 'warning',
          'max without (state, reason) (reachability_connectivity_info{%(selector)s, state="limited", reason="%(partial)s"}) == 1' % cl,
          c.partialConnectivityFor,
          'A site has partial connectivity: plain HTTP passes, HTTPS does not.',
          'Plain HTTP reaches the internet but HTTPS does not on {{ $labels.instance }} (scope {{ $labels.scope }}): a proxy or firewall blocks TLS.',
        ),
        // A path-MTU black hole, per scope: small packets pass, an `mtu` probe's full-size
        // echoes do not. The description lists what the instance's failing `mtu` probes measured
        // (reachability_path_mtu_bytes of the targets whose probe_success is 0): none listed
        // when the failure came from an `icmp` probe with `dont_fragment`, which measures nothing.
        alert(
          'ReachabilityPathMTUBlackHole', 'warning',
          'max without (state, reason) (reachability_connectivity_info{%(selector)s, state="limited", reason="%(mtu)s"}) == 1' % cl,
          c.pathMTUBlackHoleFor,
          'A site carries only small packets (a path-MTU black hole).',
          'Only small packets have passed on {{ $labels.instance }} (scope {{ $labels.scope }}) for %s: full-size packets are lost on the way (a path-MTU black hole)%s. Pings and DNS work; page loads, TLS handshakes, downloads and SSH sessions stall.'
          % [u.duration(c.pathMTUBlackHoleFor), failingPathMTU],
        ),
        alert(
          'ReachabilityHighLatency', 'warning',
          'reachability:probe_duration_seconds:p90_5m > %s' % '%g' % c.highLatencySeconds,
          c.highLatencyFor,
          'The round-trip time to a probe target is high.',
          'The 90th percentile of successful {{ $labels.probe }} probes from {{ $labels.instance }} to {{ $labels.target }} is {{ $value | humanizeDuration }} (over 5 minutes; threshold %s).'
          % u.shortSeconds(c.highLatencySeconds),
        ),
        // Not for loss that an outage of the site, or of the target for most of the fleet
        // (rules/consensus.libsonnet), explains: those alerts carry it, and the 5-minute ratio
        // outlives them by up to 5 minutes after they resolve, when Alertmanager's inhibition
        // ends. So loss within 5 minutes of either firing does not count, and the `for` starts
        // again after it (the 5 minutes matter for a `for` shorter than the loss ratio's window).
        alert(
          'ReachabilityPacketLoss', 'warning',
          |||
            reachability:icmp_loss:ratio_5m > %(ratio)s
            unless on (job, instance, %(site)s)
              max_over_time(ALERTS{alertname=~"ReachabilityInternetUnreachable|ReachabilityCaptivePortal", alertstate="firing"}[5m])
            unless on (job, target)
              max_over_time(ALERTS{alertname="ReachabilityTargetDown", alertstate="firing"}[5m])
          ||| % { ratio: '%g' % c.packetLossRatio, site: c.siteLabel },
          c.packetLossFor,
          'ICMP echoes to a probe target are lost.',
          '{{ $value | humanizePercentage }} of echo requests from {{ $labels.instance }} to {{ $labels.target }} got no reply over 5 minutes (threshold %s%%).'
          % u.percent(c.packetLossRatio),
        ),
        alert(
          'ReachabilityCertificateExpiring', 'warning',
          '(reachability_tls_certificate_expiry_timestamp_seconds{%s} - time()) < %d * 86400' % [c.selector, c.certificateExpiryDays],
          c.certificateExpiringFor,
          'The TLS certificate of a probe target expires soon.',
          'The certificate served to {{ $labels.instance }} by {{ $labels.target }} expires in {{ $value | humanizeDuration }}.',
        ),
        alert(
          'ReachabilityExporterDown', 'critical',
          'up{%(selector)s} == 0' % c,
          c.exporterDownFor,
          'Prometheus cannot scrape a reachability_exporter.',
          "Prometheus has not been able to scrape {{ $labels.instance }} for %s; this site's internet reachability is unknown."
          % u.duration(c.exporterDownFor),
        ),
        // An instance that was there within the lookback and has no `up` series now: gone from
        // service discovery, or (remote write) its site's agent stopped sending. Neither makes
        // up == 0, and absent() only sees the job as a whole.
        alert(
          'ReachabilityExporterInstanceAbsent', 'critical',
          'max_over_time(up{%(selector)s}[%(exporterInstanceAbsentLookback)s]) unless up{%(selector)s}' % c,
          c.exporterInstanceAbsentFor,
          'A reachability_exporter has vanished from Prometheus.',
          'Prometheus has had no up series for {{ $labels.instance }} for %s (the 5-minute lookback and the `for`), though it had one within the last %s: the target left service discovery, or its site stopped sending.'
          % [u.humanize(300 + u.seconds(c.exporterInstanceAbsentFor)), u.duration(c.exporterInstanceAbsentLookback)],
        ),
        alert(
          'ReachabilityExporterAbsent', 'critical',
          'absent(up{%(selector)s})' % c,
          c.exporterAbsentFor,
          'No reachability_exporter is scraped.',
          'Prometheus has had no up{%s} series for %s: service discovery or the scrape configuration lost every exporter{{ with $labels.job }} of job {{ . }}{{ end }}.'
          % [c.selector, u.duration(c.exporterAbsentFor)],
        ),
        // The monitor loop has stopped finishing rounds while the HTTP side still answers.
        alert(
          'ReachabilityProbeRoundsStalled', 'critical',
          'rate(reachability_rounds_total{%(selector)s}[%(roundsStalledWindow)s]) == 0 and up{%(selector)s} == 1' % c,
          c.roundsStalledFor,
          'A reachability_exporter has stopped probing.',
          'No probe round has finished on {{ $labels.instance }} for %s although the exporter is scraped: its verdict is stale.'
          % u.humanize(u.seconds(c.roundsStalledWindow) + u.seconds(c.roundsStalledFor)),
        ),
        alert(
          'ReachabilityFlapping', 'warning',
          'sum without (from, to) (increase(reachability_state_transitions_total{%(selector)s, to="full"}[%(flappingWindow)s])) > %(flappingRecoveries)d' % c,
          '0m',
          'A site keeps losing and regaining the internet.',
          'The verdict of {{ $labels.instance }} returned to full {{ $value | printf "%%.0f" }} times in the last %s.'
          % std.strReplace(u.duration(c.flappingWindow), '1 ', ''),
        ),
        alert(
          'ReachabilityHistoryWriteErrors', 'warning',
          'increase(reachability_history_write_errors_total{%(selector)s}[%(historyProblemsWindow)s]) > 0' % c,
          '0m',
          'A reachability_exporter cannot write its history.',
          '{{ $value | printf "%%.0f" }} history writes of {{ $labels.instance }} failed in the last %s (disk full, read-only or missing state directory?).'
          % u.duration(c.historyProblemsWindow),
        ),
        alert(
          'ReachabilityHistoryRecordsDropped', 'warning',
          'increase(reachability_history_dropped_records_total{%(selector)s}[%(historyProblemsWindow)s]) > 0' % c,
          '0m',
          'A reachability_exporter drops history records.',
          '{{ $value | printf "%%.0f" }} history records of {{ $labels.instance }} were dropped in the last %s: the writer cannot keep up or the disk is failing.'
          % u.duration(c.historyProblemsWindow),
        ),
        alert(
          'ReachabilityConfigReloadFailed', 'warning',
          'reachability_exporter_config_last_reload_successful{%(selector)s} == 0' % c,
          c.configReloadFailedFor,
          'A reachability_exporter runs an old configuration.',
          'The last configuration reload of {{ $labels.instance }} failed; the exporter keeps probing with the previous configuration. See its log for the file, line and error.',
        ),
        // Multiwindow, multi-burn-rate alerts on the availability SLO: fast burn pages, slow burn
        // opens a ticket. Availability counts failed scrapes as not online (rules.libsonnet).
        // The burn rates page for downtime no other alert names (short outages, flapping). An
        // outage that InternetUnreachable or CaptivePortal paged for is theirs: its burn, which
        // outlives them by the short window (5m, 30m), pages nobody after they resolve.
        alert(
          'ReachabilityErrorBudgetBurnFast', 'critical',
          |||
            reachability:slo_burn_rate:1h > %(b)s and reachability:slo_burn_rate:5m > %(b)s
            unless on (job, instance, %(site)s)
              max_over_time(ALERTS{alertname=~"ReachabilityInternetUnreachable|ReachabilityCaptivePortal", alertstate="firing"}[5m])
          ||| % { b: '%g' % c.burnRateFast, site: c.siteLabel },
          c.burnRateFastFor,
          'A site burns its availability error budget fast.',
          'The burn rate of {{ $labels.instance }} over the last hour is {{ $value | printf "%%.1f" }} (and over 5 minutes above %s): at %s, %s%% of the 30-day error budget of the %s%% online SLO goes every hour.'
          % ['%g' % c.burnRateFast, '%g' % c.burnRateFast, u.percent(c.burnRateFast / 720), u.percent(c.sloTarget)],
        ),
        alert(
          'ReachabilityErrorBudgetBurnSlow', 'warning',
          |||
            reachability:slo_burn_rate:6h > %(b)s and reachability:slo_burn_rate:30m > %(b)s
            unless on (job, instance, %(site)s)
              max_over_time(ALERTS{alertname=~"ReachabilityInternetUnreachable|ReachabilityCaptivePortal", alertstate="firing"}[30m])
          ||| % { b: '%g' % c.burnRateSlow, site: c.siteLabel },
          c.burnRateSlowFor,
          'A site burns its availability error budget.',
          'Over the last 6 hours {{ $labels.instance }} was offline more than %s times as often as the %s%% online SLO allows.'
          % ['%g' % c.burnRateSlow, u.percent(c.sloTarget)],
        ),
      ],
    }],
  },
}
