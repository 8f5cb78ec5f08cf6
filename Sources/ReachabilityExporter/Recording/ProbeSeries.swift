import ReachabilityVerdict
import Synchronization

/// One probe's series (per target label), looked up once per outcome instead of once per
/// series (#33: at 10,000 probes a second the label lookups, each hashing an array of strings,
/// were ~7 % of the exporter's CPU). Made on the probe's first outcome, dropped with its series.
final class ProbeSeries: Sendable {
    let probes: Counter
    let success: Gauge
    let portal: Gauge
    let lastDuration: Gauge
    let duration: Histogram
    let bytesSent: Counter
    let bytesReceived: Counter
    let packetsSent: Counter
    let packetsReceived: Counter
    /// Made on first use: a probe reports only the phases it has.
    private let phases = Mutex<[ProbePhase: Gauge]>([:])
    private let phaseFamily: MetricFamily<Gauge>
    private let type: String
    private let target: String

    init(_ m: ExporterMetrics, type t: String, target: String) {
        type = t
        self.target = target
        probes = m.probes.labels(t, target)
        success = m.probeSuccess.labels(t, target)
        portal = m.probeStatus.labels(t, target)
        lastDuration = m.probeLastDuration.labels(t, target)
        duration = m.probeDuration.labels(t, target)
        bytesSent = m.probeTrafficBytes.labels(t, target, "sent")
        bytesReceived = m.probeTrafficBytes.labels(t, target, "received")
        packetsSent = m.probeTrafficPackets.labels(t, target, "sent")
        packetsReceived = m.probeTrafficPackets.labels(t, target, "received")
        phaseFamily = m.phase
    }

    /// Series labelled by the target alone (the ICMP ones), made on first use: one probe sets
    /// only those its results carry.
    private let byTarget = Mutex<[ObjectIdentifier: any MetricSeries]>([:])

    func byTarget<S: MetricSeries>(_ family: MetricFamily<S>) -> S {
        byTarget.withLock { known in
            if let s = known[ObjectIdentifier(family)] as? S { return s }
            let s = family.labels(target)
            known[ObjectIdentifier(family)] = s
            return s
        }
    }

    func phase(_ p: ProbePhase) -> Gauge {
        phases.withLock { known in
            if let g = known[p] { return g }
            let g = phaseFamily.labels(type, target, p.rawValue)
            known[p] = g
            return g
        }
    }
}

/// The `ProbeSeries` of every target label that has reported.
final class ProbeSeriesTable: Sendable {
    private let table = Mutex<[String: ProbeSeries]>([:])

    /// The series of `target` for a probe of type `type` (made now if it has none, or if its
    /// type changed).
    func series(_ m: ExporterMetrics, type: String, target: String) -> ProbeSeries {
        // Made under the lock, so a `forget` in between cannot leave a stale entry behind.
        table.withLock { t in
            if let s = t[target], s.probes.labelValues.first == type { return s }
            let made = ProbeSeries(m, type: type, target: target)
            t[target] = made
            return made
        }
    }

    /// Forgets these targets: their series were removed from the registry.
    func forget(_ targets: Set<String>) {
        table.withLock { t in for target in targets { t.removeValue(forKey: target) } }
    }
}
