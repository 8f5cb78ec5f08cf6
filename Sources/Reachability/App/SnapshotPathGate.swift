/// Adapts a path source (the netlink `PathMonitor`, or a fake) to what the scheduler needs.
package struct SnapshotPathGate: PathGate {
    let source: any PathSource

    package init(_ source: any PathSource) { self.source = source }

    package func unsatisfiedReason(for family: IPFamily?) -> String? {
        let snapshot = source.current
        guard let family else {
            if snapshot.overallSatisfied { return nil }
            return snapshot.status(for: .ipv4).reason?.rawValue ?? snapshot.status(for: .ipv6).reason?.rawValue
        }
        return snapshot.status(for: family).reason?.rawValue
    }

    package func unsatisfiedReason(interface: String) -> String? {
        let snapshot = source.current
        guard let i = snapshot.interfaces.first(where: { $0.name == interface }), i.isUp else {
            return PathUnsatisfiedReason.noInterface.rawValue
        }
        if !i.hasCarrier { return PathUnsatisfiedReason.noCarrier.rawValue }
        let usable = snapshot.addresses.contains { $0.interfaceName == interface && $0.scope != .host && $0.scope != .link }
        return usable ? nil : PathUnsatisfiedReason.noAddress.rawValue
    }

    package func isLocal(address: String) -> Bool { source.current.isLocal(address: address) }

    package var defaultRouteInterfaces: [String] {
        var seen: [String] = []
        for r in source.current.defaultRoutes where !seen.contains(r.interfaceName) { seen.append(r.interfaceName) }
        return seen
    }

    /// One element per change of state (the first snapshot, which every stream starts with,
    /// is not a change).
    package func changes() -> AsyncStream<Void> {
        let updates = source.updates()
        let initial = source.current
        return AsyncStream { continuation in
            let task = Task {
                var last = initial
                for await snapshot in updates {
                    if snapshot.hasSameState(as: last) { continue }
                    last = snapshot
                    continuation.yield()
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

/// `reachability_path_*` and `reachability_interface_*`, read from the path source at scrape time.
package enum PathMetrics {
    package static func register(in registry: MetricsRegistry, source: any PathSource) {
        let satisfied = registry.gauge(MetricCatalog.pathSatisfied)
        let reason = registry.gauge(MetricCatalog.pathInfo)
        let up = registry.gauge(MetricCatalog.interfaceUp)
        let info = registry.gauge(MetricCatalog.interfaceInfo)
        let mtu = registry.gauge(MetricCatalog.interfaceMtuBytes)
        let changes = registry.counter(MetricCatalog.pathChangesTotal).labels()
        registry.onCollect {
            let s = source.current
            for family in IPFamily.allCases {
                let status = s.status(for: family)
                satisfied.labels(family.rawValue).set(status.isSatisfied)
                reason.removeAll { $0[0] == family.rawValue }
                reason.labels(family.rawValue, status.interfaceName ?? "", status.reason?.rawValue ?? "").set(1)
            }
            up.removeAll { _ in true }
            info.removeAll { _ in true }
            mtu.removeAll { _ in true }
            for i in s.interfaces {
                up.labels(i.name, i.type.rawValue).set(i.isUp && i.hasCarrier)
                info.labels(i.name, i.type.rawValue, i.kind ?? "", i.operState.rawValue, String(i.isExpensive)).set(1)
                mtu.labels(i.name).set(Double(i.mtu))
            }
            let delta = Double(s.changeCount) - changes.value
            if delta > 0 { changes.inc(delta) }
        }
    }
}
