import ReachabilityVerdict

/// The traffic the probes cost and the uplinks' paces and budgets, per round (#31).
extension MetricsRecorder {
    /// What the round put on each interface's wire, and each paced uplink's interval and budget.
    func recordTraffic(_ status: ReachabilityStatus) {
        for (interface, t) in status.traffic {
            m.uplinkTrafficBytes.labels(interface, "sent").inc(Double(t.sentBytes))
            m.uplinkTrafficBytes.labels(interface, "received").inc(Double(t.receivedBytes))
            m.uplinkTrafficPackets.labels(interface, "sent").inc(Double(t.sentPackets))
            m.uplinkTrafficPackets.labels(interface, "received").inc(Double(t.receivedPackets))
        }
        let paces = status.uplinkPaces
        m.uplinkInterval.removeAll { paces[$0[0]]?.cause != $0[1] }
        for f in [m.budgetBytes, m.budgetRemaining, m.budgetWindowEnd] { f.removeAll { paces[$0[0]]?.budget == nil } }
        for (uplink, pace) in paces {
            // Zero means every round: the global interval (faster while not full).
            m.uplinkInterval.labels(uplink, pace.cause).set(max(pace.interval, status.interval ?? .zero).seconds)
            guard let budget = pace.budget else { continue }
            m.budgetBytes.labels(uplink).set(Double(budget.bytes))
            m.budgetRemaining.labels(uplink).set(Double(pace.remaining))
            m.budgetWindowEnd.labels(uplink).set(pace.windowEnd)
        }
    }
}
