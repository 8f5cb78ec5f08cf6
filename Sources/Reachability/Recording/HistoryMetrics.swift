/// The history's metrics: names and help texts in one place (to be consolidated with
/// `ExporterMetrics`). Every series exists from the first scrape once `--history.dir` is set.
public struct HistoryMetrics: Sendable {
    /// The availability windows, label value and length in seconds.
    public static let windows: [(label: String, seconds: Double)] = [("1h", 3600), ("1d", 86_400), ("7d", 7 * 86_400), ("30d", 30 * 86_400)]

    let writeErrors: Counter
    let dropped: Counter
    let corrupt: Counter
    let written: Counter
    let bytes: Gauge
    let files: Gauge
    let availability: [Gauge]
    let coverage: [Gauge]

    public init(registry r: MetricsRegistry) {
        writeErrors = r.counter("reachability_history_write_errors_total", help: "Failed history file operations (open, write, sync, rotate, delete); each is logged once per condition.").labels()
        dropped = r.counter("reachability_history_dropped_records_total", help: "History records lost: the write queue was full or the write failed.").labels()
        corrupt = r.counter("reachability_history_corrupt_records_total", help: "History lines skipped as corrupt while reading (torn final lines, garbage).").labels()
        written = r.counter("reachability_history_records_written_total", help: "History records written.").labels()
        bytes = r.gauge("reachability_history_bytes", help: "Total size of the history files.").labels()
        files = r.gauge("reachability_history_files", help: "Number of history files.").labels()
        let a = r.gauge("reachability_availability_ratio", help: "Share of the covered time in the window during which the overall verdict was full (NaN when nothing is covered); from the history, so it survives restarts.", labels: ["window"])
        let c = r.gauge("reachability_history_coverage_ratio", help: "Share of the window covered by the history (time the exporter was not running is a gap).", labels: ["window"])
        availability = Self.windows.map { a.labels($0.label) }
        coverage = Self.windows.map { c.labels($0.label) }
        for g in availability { g.set(.nan) }
    }
}
