import ReachabilityVerdict

/// `reachability_passive_*`: what each read of the host's TCP connections found (`PassiveWatch`).
/// Counts and ages only.
package struct PassiveMetrics: Sendable {
    let connections: MetricFamily<Gauge>
    let age: MetricFamily<Gauge>
    let readSeconds: Gauge
    let sockets: Gauge
    let rechecks: Counter

    package init(registry r: MetricsRegistry) {
        connections = r.gauge(MetricCatalog.passiveConnections)
        age = r.gauge(MetricCatalog.passiveLastReceiveAge)
        readSeconds = r.gauge(MetricCatalog.passiveReadSeconds).labels()
        sockets = r.gauge(MetricCatalog.passiveSockets).labels()
        rechecks = r.counter(MetricCatalog.passiveStallRechecks).labels()
    }

    package func publish(_ reading: PassiveReading) {
        let summaries = reading.summaries
        sockets.set(Double(reading.sockets))
        readSeconds.set(reading.took.seconds)
        if !reading.beganStalling.isEmpty { rechecks.inc() }
        connections.removeAll { summaries[Scope(label: $0[0])] == nil }
        age.removeAll { summaries[Scope(label: $0[0])]?.freshestReceive == nil }
        for (scope, s) in summaries {
            connections.labels(scope.label, "receiving").set(Double(s.receiving))
            connections.labels(scope.label, "stalled").set(Double(s.stalled))
            connections.labels(scope.label, "quiet").set(Double(s.quiet))
            if let age = s.freshestReceive { self.age.labels(scope.label).set(age.seconds) }
        }
    }
}
