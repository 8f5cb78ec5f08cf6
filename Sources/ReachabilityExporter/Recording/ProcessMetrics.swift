import ReachabilityVerdict

/// The standard `process_*` metrics, read from /proc at scrape time (as client_golang's process
/// collector does), plus `reachability_exporter_build_info`.
package enum ProcessMetrics {
    /// Registers the families and a collect hook that refreshes them on every scrape.
    package static func register(in registry: MetricsRegistry) {
        let cpuSeconds = registry.counter(MetricCatalog.processCpuSecondsTotal).labels()
        let resident = registry.gauge(MetricCatalog.processResidentMemoryBytes).labels()
        let virtual = registry.gauge(MetricCatalog.processVirtualMemoryBytes).labels()
        let openFDs = registry.gauge(MetricCatalog.processOpenFds).labels()
        let maxFDs = registry.gauge(MetricCatalog.processMaxFds).labels()
        let start = registry.gauge(MetricCatalog.processStartTimeSeconds).labels()
        let threads = registry.gauge(MetricCatalog.processThreads).labels()
        if let s = ProcessSample.read() { start.set(s.startTime) }
        registry.onCollect {
            guard let s = ProcessSample.read() else { return }
            // The counter only moves forward; CPU time never decreases.
            let delta = s.cpuSeconds - cpuSeconds.value
            if delta > 0 { cpuSeconds.inc(delta) }
            resident.set(s.residentBytes)
            virtual.set(s.virtualBytes)
            openFDs.set(Double(s.openFDs))
            maxFDs.set(s.maxFDs)
            threads.set(s.threads)
        }
    }
}
