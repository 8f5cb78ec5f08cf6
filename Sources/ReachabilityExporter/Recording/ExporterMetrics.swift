import ReachabilityVerdict
import Synchronization

/// The verdict's and the probes' metric families, registered from `MetricCatalog`.
package struct ExporterMetrics: Sendable {
    let reachable: Gauge
    let familyReachable: MetricFamily<Gauge>
    let uplinkReachable: MetricFamily<Gauge>
    let state: MetricFamily<Gauge>
    let familyState: MetricFamily<Gauge>
    let uplinkState: MetricFamily<Gauge>
    let stateInfo: MetricFamily<Gauge>
    let faultInfo: MetricFamily<Gauge>
    let faultLastHop: MetricFamily<Gauge>
    let pathMTU: MetricFamily<Gauge>
    let transitions: MetricFamily<Counter>
    let lastTransition: Gauge
    let stateSince: MetricFamily<Gauge>
    let rounds: Counter
    let roundDuration: Histogram
    let probeSuccess: MetricFamily<Gauge>
    let probeStatus: MetricFamily<Gauge>
    let probeDuration: MetricFamily<Histogram>
    let probeLastDuration: MetricFamily<Gauge>
    let probes: MetricFamily<Counter>
    let failures: MetricFamily<Counter>
    let portalSignals: MetricFamily<Counter>
    let phase: MetricFamily<Gauge>
    let icmpLoss: MetricFamily<Gauge>
    let icmpTTL: MetricFamily<Gauge>
    let icmpHops: MetricFamily<Gauge>
    let nat64Prefix: MetricFamily<Gauge>
    let icmpSent: MetricFamily<Counter>
    let icmpReceived: MetricFamily<Counter>
    let httpStatus: MetricFamily<Gauge>
    let certExpiry: MetricFamily<Gauge>
    let dnsAnswers: MetricFamily<Gauge>
    let dnsRcode: MetricFamily<Gauge>
    let probeInfo: MetricFamily<Gauge>
    let schedulerLateness: Histogram
    let probeTrafficBytes: MetricFamily<Counter>
    let probeTrafficPackets: MetricFamily<Counter>
    let uplinkTrafficBytes: MetricFamily<Counter>
    let uplinkTrafficPackets: MetricFamily<Counter>
    let uplinkInterval: MetricFamily<Gauge>
    let budgetBytes: MetricFamily<Gauge>
    let budgetRemaining: MetricFamily<Gauge>
    let budgetWindowEnd: MetricFamily<Gauge>

    package init(registry r: MetricsRegistry) {
        reachable = r.gauge(MetricCatalog.internetReachable).labels()
        familyReachable = r.gauge(MetricCatalog.familyInternetReachable)
        uplinkReachable = r.gauge(MetricCatalog.uplinkInternetReachable)
        state = r.gauge(MetricCatalog.connectivityState)
        familyState = r.gauge(MetricCatalog.familyConnectivityState)
        uplinkState = r.gauge(MetricCatalog.uplinkConnectivityState)
        stateInfo = r.gauge(MetricCatalog.connectivityInfo)
        faultInfo = r.gauge(MetricCatalog.faultInfo)
        faultLastHop = r.gauge(MetricCatalog.faultLastHop)
        pathMTU = r.gauge(MetricCatalog.pathMtuBytes)
        transitions = r.counter(MetricCatalog.stateTransitionsTotal)
        lastTransition = r.gauge(MetricCatalog.lastTransitionTimestampSeconds).labels()
        stateSince = r.gauge(MetricCatalog.stateSinceTimestampSeconds)
        rounds = r.counter(MetricCatalog.roundsTotal).labels()
        roundDuration = r.histogram(MetricCatalog.roundDurationSeconds).labels()
        probeSuccess = r.gauge(MetricCatalog.probeSuccess)
        probeStatus = r.gauge(MetricCatalog.probePortal)
        probeDuration = r.histogram(MetricCatalog.probeDurationSeconds)
        probeLastDuration = r.gauge(MetricCatalog.probeLastDurationSeconds)
        probes = r.counter(MetricCatalog.probesTotal)
        failures = r.counter(MetricCatalog.probeFailuresTotal)
        portalSignals = r.counter(MetricCatalog.probePortalSignalsTotal)
        phase = r.gauge(MetricCatalog.probePhaseDurationSeconds)
        icmpLoss = r.gauge(MetricCatalog.icmpLossRatio)
        icmpTTL = r.gauge(MetricCatalog.icmpReplyTtl)
        icmpHops = r.gauge(MetricCatalog.icmpReplyHops)
        nat64Prefix = r.gauge(MetricCatalog.nat64PrefixInfo)
        icmpSent = r.counter(MetricCatalog.icmpEchoRequestsTotal)
        icmpReceived = r.counter(MetricCatalog.icmpEchoRepliesTotal)
        httpStatus = r.gauge(MetricCatalog.httpStatusCode)
        certExpiry = r.gauge(MetricCatalog.tlsCertificateExpiryTimestampSeconds)
        dnsAnswers = r.gauge(MetricCatalog.dnsAnswers)
        dnsRcode = r.gauge(MetricCatalog.dnsRcode)
        probeInfo = r.gauge(MetricCatalog.probeInfo)
        schedulerLateness = r.histogram(MetricCatalog.schedulerLatenessSeconds).labels()
        probeTrafficBytes = r.counter(MetricCatalog.probeTrafficBytes)
        probeTrafficPackets = r.counter(MetricCatalog.probeTrafficPackets)
        uplinkTrafficBytes = r.counter(MetricCatalog.uplinkTrafficBytes)
        uplinkTrafficPackets = r.counter(MetricCatalog.uplinkTrafficPackets)
        uplinkInterval = r.gauge(MetricCatalog.uplinkProbeInterval)
        budgetBytes = r.gauge(MetricCatalog.uplinkBudgetBytes)
        budgetRemaining = r.gauge(MetricCatalog.uplinkBudgetRemainingBytes)
        budgetWindowEnd = r.gauge(MetricCatalog.uplinkBudgetWindowEnd)
    }
}

/// Turns finished rounds into metrics. Series of every configured probe exist from the start
/// (and from the reload that adds it); all five states are always present per scope.
package final class MetricsRecorder: RoundObserver {
    let m: ExporterMetrics
    private let registry: MetricsRegistry
    /// The configured probes (name → type and destination) and uplinks, for reloads.
    private struct Known {
        var probes: [String: (type: ProbeType, target: String)] = [:]
        var uplinks: [String] = []
        /// Target labels of the (probe, interface) pairs that run (uplink probe sets leave some out).
        var running: Set<String> = []
    }
    private let known = Mutex(Known())
    private let labels: ProbeLabelsMetric
    private let series = ProbeSeriesTable()

    /// Pre-creates the series (and the labels info rows) of every probe on the routing table and
    /// on each of `uplinks`.
    package init(
        registry: MetricsRegistry, probes: [ProbeSpec], uplinks: [String], uplinkProbes: [String: Set<String>] = [:]
    ) {
        m = ExporterMetrics(registry: registry)
        self.registry = registry
        labels = ProbeLabelsMetric(registry: registry)
        // Every from→to pair exists from the first scrape, so increase() sees the first change.
        for from in ConnectivityState.allCases {
            for to in ConnectivityState.allCases where to != from {
                m.transitions.labels(from.rawValue, to.rawValue).inc(0)
            }
        }
        setStates(.unknown, reason: nil, scope: .overall)
        for family in IPFamily.allCases { setStates(.unknown, reason: nil, scope: .family(family)) }
        var settings = MonitorSettings()
        settings.uplinks = uplinks
        settings.uplinkProbes = uplinkProbes
        probesChanged(probes, settings: settings)
    }

    /// After a reload: drops every series of removed probes (and of probes whose type or
    /// destination changed) and of removed uplinks, and pre-creates the series of new ones.
    /// Series of unchanged probes keep their values.
    package func probesChanged(_ probes: [ProbeSpec], settings: MonitorSettings) {
        let uplinks = settings.uplinks
        let running = Set(
            probes.flatMap { spec in settings.interfaces(of: spec).map { Self.targetLabel(spec.name, $0) } })
        let (stale, gone, added, fresh): (Set<String>, [String], [String], [(ProbeSpec, String?)]) = known.withLock {
            k in
            // A pair an uplink's probe set no longer names loses its series; one it names again gets them.
            var stale = k.running.subtracting(running)
            var fresh: [(ProbeSpec, String?)] = []
            let gone = k.uplinks.filter { !uplinks.contains($0) }
            let added = uplinks.filter { !k.uplinks.contains($0) }
            for (name, before) in k.probes {
                let now = probes.first { $0.name == name }
                let changed = now.map { $0.type != before.type || $0.target != before.target } ?? true
                for iface in [nil] + k.uplinks where changed || gone.contains(iface ?? "") {
                    stale.insert(Self.targetLabel(name, iface))
                }
            }
            for spec in probes {
                let before = k.probes[spec.name]
                let isNew = before.map { $0.type != spec.type || $0.target != spec.target } ?? true
                for iface in settings.interfaces(of: spec)
                where isNew || added.contains(iface ?? "") || !k.running.contains(Self.targetLabel(spec.name, iface)) {
                    fresh.append((spec, iface))
                }
            }
            k.probes = Dictionary(probes.map { ($0.name, ($0.type, $0.target)) }, uniquingKeysWith: { a, _ in a })
            k.uplinks = uplinks
            k.running = running
            return (stale, gone, added, fresh)
        }
        labels.set(probes, uplinks: uplinks)
        forget(targets: stale)
        for uplink in gone {
            m.uplinkState.removeAll { $0[0] == uplink }
            m.uplinkReachable.remove(uplink)
            m.stateInfo.removeAll { $0[0] == uplink }
            m.stateSince.remove(uplink)
            m.uplinkTrafficBytes.removeAll { $0[0] == uplink }
            m.uplinkTrafficPackets.removeAll { $0[0] == uplink }
        }
        for uplink in added {
            setStates(.unknown, reason: nil, scope: .uplink(uplink))
            for direction in ["sent", "received"] {
                m.uplinkTrafficBytes.labels(uplink, direction).inc(0)
                m.uplinkTrafficPackets.labels(uplink, direction).inc(0)
            }
        }
        for (spec, iface) in fresh {
            let target = Self.targetLabel(spec.name, iface)
            let t = spec.type.rawValue
            m.probeInfo.labels(t, target, spec.target, iface ?? "").set(1)
            m.probes.labels(t, target).inc(0)
            for direction in ["sent", "received"] {
                m.probeTrafficBytes.labels(t, target, direction).inc(0)
                m.probeTrafficPackets.labels(t, target, direction).inc(0)
            }
            m.probeSuccess.labels(t, target).set(0)
            _ = m.probeDuration.labels(t, target)
        }
    }

    /// Probes bound to an uplink get `name@interface` as their target label.
    static func targetLabel(_ name: String, _ interface: String?) -> String {
        interface.map { "\(name)@\($0)" } ?? name
    }

    /// Removes every series of a probe that is no longer configured (after a reload), on the
    /// routing table and on every uplink.
    package func forget(probeNames: Set<String>) {
        let uplinks = known.withLock { $0.uplinks }
        forget(targets: Set(probeNames.flatMap { name in ([nil] + uplinks).map { Self.targetLabel(name, $0) } }))
    }

    /// Removes every series whose `target` label is one of `targets` (exact match: a probe name
    /// may itself contain `@`, as `name@server` DNS probes do).
    private func forget(targets: Set<String>) {
        guard !targets.isEmpty else { return }
        for family in MetricCatalog.perProbe {
            guard let at = family.labels.firstIndex(of: "target") else { continue }
            registry.removeSeries(of: family.name) { targets.contains($0[at]) }
        }
        // After the registry's removals: an outcome recorded meanwhile makes fresh series.
        series.forget(targets)
    }

    package func roundCompleted(_ status: ReachabilityStatus) {
        m.rounds.inc()
        m.roundDuration.observe(status.roundDuration)
        // A scrape may land between two of these updates. So that it never sees overall full
        // while no family is: overall first when it is not full, last when it is.
        let overallFull = status.overall.verdict.state == .full
        if !overallFull { applyOverall(status.overall) }
        for (family, v) in status.families {
            apply(v, scope: .family(family))
            m.familyReachable.labels(family.rawValue).set(v.verdict.state == .full)
        }
        for (uplink, v) in status.uplinks {
            apply(v, scope: .uplink(uplink))
            m.uplinkReachable.labels(uplink).set(v.verdict.state == .full)
        }
        if overallFull { applyOverall(status.overall) }
        for (scope, fault) in status.faults {
            m.faultInfo.removeAll { $0[0] == scope.label && $0[1] != fault.location.rawValue }
            m.faultInfo.labels(scope.label, fault.location.rawValue).set(1)
        }
        // A scope gone (an uplink removed by a reload) or undecided again loses its series.
        m.faultInfo.removeAll { status.faults[Scope(label: $0[0])] == nil }
        // One last-hop series per scope that has one (the router's address stays in the detail:
        // a forger answering from a new address each round must not mint series).
        m.faultLastHop.removeAll { labels in
            guard let last = status.faults[Scope(label: labels[0])]?.lastHop else { return true }
            return last.reached
        }
        for (scope, fault) in status.faults {
            if let last = fault.lastHop, !last.reached { m.faultLastHop.labels(scope.label).set(Double(last.hop)) }
        }
        // State changes only: a new reason within the same state (limited (dns) -> limited
        // (timeout)) is a transition of the verdict, in history and logs, but not of the state.
        for case (.overall, let t) in status.transitions.map({ ($0.scope, $0.transition) })
        where t.from.state != t.to.state {
            m.transitions.labels(t.from.state.rawValue, t.to.state.rawValue).inc()
            m.lastTransition.set(t.at)
        }
        for o in status.probes where o.at >= status.roundStarted { record(o) }
        recordTraffic(status)
        let prefixes = Set(status.nat64Prefixes.map(\.description))
        m.nat64Prefix.removeAll { !prefixes.contains($0[0]) }
        for p in prefixes { m.nat64Prefix.labels(p).set(1) }
    }

    private func applyOverall(_ v: ScopedVerdict) {
        apply(v, scope: .overall)
        m.reachable.set(v.verdict.state == .full)
    }

    private func apply(_ v: ScopedVerdict, scope: Scope) {
        setStates(v.verdict.state, reason: v.verdict.reason, scope: scope)
        m.stateSince.labels(scope.label).set(v.since)
    }

    private func setStates(_ current: ConnectivityState, reason: VerdictReason?, scope: Scope) {
        for s in ConnectivityState.allCases {
            switch scope {
            case .overall: m.state.labels(s.rawValue).set(s == current)
            case .family(let f): m.familyState.labels(f.rawValue, s.rawValue).set(s == current)
            case .uplink(let name): m.uplinkState.labels(name, s.rawValue).set(s == current)
            }
        }
        m.stateInfo.removeAll { $0[0] == scope.label }
        m.stateInfo.labels(scope.label, current.rawValue, reason?.label ?? "").set(1)
    }

    private func record(_ o: ProbeOutcome) {
        let t = o.type.rawValue
        let target = Self.targetLabel(o.name, o.interface)
        let r = o.result
        let s = series.series(m, type: t, target: target)
        // A round the probe could not run (no path) is no run and no failure: nothing can
        // succeed without a path, so it reads 0, and the scope's state says `none`.
        guard o.ran else {
            s.success.set(false)
            s.portal.set(false)
            return
        }
        s.probes.inc()
        if let lateness = o.startLateness { m.schedulerLateness.observe(lateness) }
        s.success.set(r.status == .success)
        s.portal.set(r.status == .portal)
        s.lastDuration.set(r.duration.seconds)
        if let traffic = o.traffic {
            s.bytesSent.inc(Double(traffic.sentBytes))
            s.bytesReceived.inc(Double(traffic.receivedBytes))
            s.packetsSent.inc(Double(traffic.sentPackets))
            s.packetsReceived.inc(Double(traffic.receivedPackets))
        }
        switch r.status {
        case .success:
            if let icmp = r.icmp {
                for rtt in icmp.rtts { s.duration.observe(rtt) }
            } else {
                s.duration.observe(r.duration)
            }
        case .failure:
            m.failures.labels(t, target, r.reason?.rawValue ?? "error").inc()
        case .portal:
            m.portalSignals.labels(t, target, r.reason?.rawValue ?? VerdictReason.portal.label).inc()
        }
        for (phase, d) in r.phases { s.phase(phase).set(d.seconds) }
        if let icmp = r.icmp {
            s.byTarget(m.icmpLoss).set(icmp.lossRatio)
            if let ttl = icmp.ttl { s.byTarget(m.icmpTTL).set(Double(ttl)) }
            if let hops = icmp.hops { s.byTarget(m.icmpHops).set(Double(hops)) }
            s.byTarget(m.icmpSent).inc(Double(icmp.sent))
            s.byTarget(m.icmpReceived).inc(Double(icmp.received))
        }
        if let http = r.http {
            m.httpStatus.labels(t, target).set(Double(http.statusCode ?? 0))
            if let expiry = http.certificateNotAfter { m.certExpiry.labels(target).set(expiry) }
        }
        if o.type == .mtu {
            if let mtu = r.mtu {
                m.pathMTU.labels(target).set(Double(mtu))
            } else {
                m.pathMTU.removeAll { $0[0] == target }
            }
        }
        if let dns = r.dns {
            m.dnsAnswers.labels(target).set(Double(dns.answers))
            if let rcode = dns.rcode { m.dnsRcode.labels(target).set(Double(rcode)) }
        }
    }
}

/// The configuration file's metrics (`--config.file` only): reload outcome, as Prometheus and
/// Alertmanager name theirs.
package final class ConfigMetrics: Sendable {
    let lastReloadSuccessful: Gauge
    let lastReloadSuccessTimestamp: Gauge

    package init(registry: MetricsRegistry) {
        lastReloadSuccessful = registry.gauge(MetricCatalog.exporterConfigLastReloadSuccessful).labels()
        lastReloadSuccessTimestamp = registry.gauge(MetricCatalog.exporterConfigLastReloadSuccessTimestampSeconds)
            .labels()
    }
}

/// The probes' constant labels as an info metric to join on (`reachability_probe_labels_info`).
final class ProbeLabelsMetric: Sendable {
    static let name = MetricCatalog.probeLabelsInfo.name
    private let registry: MetricsRegistry
    /// The label names the info family is registered with (nil: not registered).
    private let labelNames = Mutex<[String]?>(nil)

    init(registry: MetricsRegistry) { self.registry = registry }

    /// Replaces the rows: one per target label (a probe, and `name@uplink` per uplink), with
    /// every label name any probe uses (empty where a probe has none), so a join never drops a
    /// probe. No probe with labels: no family at all. The family is re-registered when the set
    /// of label names changes; one scrape in between may miss it.
    func set(_ probes: [ProbeSpec], uplinks: [String]) {
        let rows = probes.flatMap { spec in
            spec.interfaces(uplinks).map { (target: MetricsRecorder.targetLabel(spec.name, $0), labels: spec.labels) }
        }
        let names = Array(Set(rows.flatMap { $0.labels.map(\.name) })).sorted()
        labelNames.withLock { current in
            if current != nil && (names.isEmpty || current! != ["target"] + names) {
                registry.unregister(Self.name)
                current = nil
            }
            guard !names.isEmpty else { return }
            let family = registry.gauge(MetricCatalog.probeLabelsInfo, extraLabels: names)
            current = ["target"] + names
            family.removeAll { _ in true }
            for row in rows {
                let values = names.map { n in row.labels.first { $0.name == n }?.value ?? "" }
                family.labels([row.target] + values).set(1)
            }
        }
    }
}
