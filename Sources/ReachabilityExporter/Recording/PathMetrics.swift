import ReachabilityVerdict

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
