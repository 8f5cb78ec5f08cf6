import ReachabilityVerdict
import Synchronization

/// Keeps `reachability_availability_ratio{window}` and `reachability_history_coverage_ratio{window}`
/// current: seeded from the history files at start-up (`replay`), then fed each round as it
/// arrives, and re-evaluated at scrape time so the windows slide between rounds. Thread-safe.
package final class AvailabilityTracker: RoundObserver, Sendable {
    private let ledger: Mutex<AvailabilityLedger>
    private let cap: Double
    private let now: @Sendable () -> Double
    private let metrics: HistoryMetrics?

    /// `interval`: the configured probe interval (a round covers at most twice that).
    /// `metrics`: gauges to keep current (nil for reports and tests).
    package init(interval: Duration, metrics: HistoryMetrics?, now: @escaping @Sendable () -> Double = { unixNow() }) {
        ledger = Mutex(AvailabilityLedger(keep: HistoryMetrics.windows.map(\.seconds).max() ?? 0))
        cap = 2 * interval.seconds
        self.now = now
        self.metrics = metrics
    }

    /// Feeds one event read back from the history, in file order.
    package func replay(_ event: HistoryEvent) {
        ledger.withLock { $0.replay(event) }
    }

    /// Marks this process's start: the previous run's coverage ends here at the latest.
    package func markStart(at time: Double) {
        ledger.withLock { $0.cut(at: time) }
        refresh()
    }

    package func roundCompleted(_ status: ReachabilityStatus) {
        ledger.withLock {
            $0.add(
                at: status.roundStarted + status.roundDuration.seconds, verdict: status.overall.verdict,
                cap: status.interval.map { 2 * $0.seconds } ?? cap)
        }
        refresh()
    }

    /// The windows as of `time` (default: now): label, covered and up seconds.
    package func windows(at time: Double? = nil) -> [(label: String, window: AvailabilityLedger.Window)] {
        let t = time ?? now()
        return ledger.withLock { l in HistoryMetrics.windows.map { ($0.label, l.window($0.seconds, now: t)) } }
    }

    /// Recomputes the gauges (after each round and before each scrape).
    package func refresh() {
        guard let metrics else { return }
        for (i, w) in windows().enumerated() {
            metrics.availability[i].set(w.window.availability)
            metrics.coverage[i].set(min(1, w.window.covered / HistoryMetrics.windows[i].seconds))
        }
    }
}
