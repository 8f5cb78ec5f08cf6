import ReachabilityVerdict
import Synchronization

/// The history the status page draws: the overall state over the last 24 hours (gaps where the
/// exporter was not running) and each family's and uplink's, RTT per probe in 5-minute buckets, availability per UTC day for the
/// last 30 days and the recent outages. Built once at start-up from the same pass over the files
/// that seeds the availability gauges (`replay`), plus one read of the last day's probe results
/// (`loadSamples`, in the background: the fast reader skips them); then kept current from each
/// round. Memory is bounded (24 h of segments and buckets, 30 days, 100 outages, 32 probes,
/// 16 families and uplinks).
/// Thread-safe; `snapshot()` is what a page renders, never the files.
package final class StatusHistory: RoundObserver, Sendable {
    /// Days of availability shown.
    package static let dayCount = 30
    /// Outages listed.
    package static let outageCount = 20

    let log = Mutex(StatusHistoryLog())  // internal: tests feed RTT samples directly
    private let cap: Double
    private let interval: Duration
    private let now: @Sendable () -> Double

    /// `interval`: the configured probe interval (a round's verdict covers at most twice that).
    package init(interval: Duration, now: @escaping @Sendable () -> Double = { unixNow() }) {
        self.interval = interval
        cap = 2 * interval.seconds
        self.now = now
    }

    /// Feeds one event read back from the history, in file order.
    package func replay(_ event: HistoryEvent) {
        log.withLock { l in
            l.replay(event)
            if case .round(let r) = event {
                l.addScopes(
                    families: r.families.map { ($0.name, $0.verdict) },
                    uplinks: r.uplinks.map { ($0.name, $0.verdict) },
                    at: r.at, cap: 2 * r.interval)
            }
        }
    }

    /// Marks this process's start: the previous run's coverage ends here at the latest.
    package func markStart(at time: Double) { log.withLock { $0.cut(at: time) } }

    /// Reads the probe results of the last day of rounds that started before `until` (this
    /// process's start: later rounds arrive through `roundCompleted`). Blocks; run it off the
    /// request path. Marks the samples loaded even when the files cannot be read.
    @discardableResult
    package func loadSamples(directory: String, until: Double) -> HistoryReader.Stats {
        let from = until - StatusHistoryLog.span
        var stats = HistoryReader.Stats()
        if let paths = try? HistoryReader.paths(directory: directory, from: from) {
            var batch: [RoundRecord] = []
            func flush() {
                log.withLock { l in for r in batch { l.addSamples(r.probes, at: r.time) } }
                batch.removeAll(keepingCapacity: true)
            }
            stats = HistoryReader.readRecords(paths: paths) { record in
                guard case .round(let r) = record, r.time >= from, r.time < until else { return }
                batch.append(r)
                if batch.count == 16 { flush() }  // short lock holds: rounds and page snapshots wait on it
            }
            flush()
        }
        log.withLock { $0.samplesLoaded = true }
        return stats
    }

    package func roundCompleted(_ status: ReachabilityStatus) {
        let record = RoundRecord(status, interval: status.interval ?? interval)
        let cap = 2 * record.interval
        log.withLock { l in
            l.add(at: record.at, verdict: record.overall, cap: cap)
            l.addScopes(
                families: record.families.map { ($0.key, $0.value) },
                uplinks: record.uplinks.map { ($0.key, $0.value) },
                at: record.at, cap: cap)
            l.addSamples(record.probes, at: record.time)
        }
    }

    /// Changes whenever the history does: a cached rendering is current while this is unchanged.
    package var generation: Int { log.withLock { $0.generation } }

    var retained: (segments: Int, days: Int, buckets: Int, outages: Int) { log.withLock { $0.retained } }

    /// The history as of `time` (default: now).
    package func snapshot(at time: Double? = nil) -> StatusHistorySnapshot {
        let t = time ?? now()
        return log.withLock { $0.snapshot(now: t) }
    }
}
