import ReachabilityVerdict

/// The history's metric families, registered from `MetricCatalog`. Every series exists from the
/// first scrape once `--history.dir` is set.
package struct HistoryMetrics: Sendable {
    /// The availability windows, label value and length in seconds.
    package static let windows: [(label: String, seconds: Double)] = [
        ("1h", 3600), ("1d", 86_400), ("7d", 7 * 86_400), ("30d", 30 * 86_400),
    ]

    let writeErrors: Counter
    let dropped: Counter
    let corrupt: Counter
    let written: Counter
    let bytes: Gauge
    let files: Gauge
    let availability: [Gauge]
    let coverage: [Gauge]

    package init(registry r: MetricsRegistry) {
        writeErrors = r.counter(MetricCatalog.historyWriteErrorsTotal).labels()
        dropped = r.counter(MetricCatalog.historyDroppedRecordsTotal).labels()
        corrupt = r.counter(MetricCatalog.historyCorruptRecordsTotal).labels()
        written = r.counter(MetricCatalog.historyRecordsWrittenTotal).labels()
        bytes = r.gauge(MetricCatalog.historyBytes).labels()
        files = r.gauge(MetricCatalog.historyFiles).labels()
        let a = r.gauge(MetricCatalog.availabilityRatio)
        let c = r.gauge(MetricCatalog.historyCoverageRatio)
        availability = Self.windows.map { a.labels($0.label) }
        coverage = Self.windows.map { c.labels($0.label) }
        for g in availability { g.set(.nan) }
    }
}
