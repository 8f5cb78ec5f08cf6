import Dispatch
import ReachabilityVerdict
import Synchronization

/// Appends the history: a `RoundObserver` that turns each finished round into a round record
/// (plus one record per transition) and hands them to a dedicated writer thread through a
/// bounded queue, so probing never waits for the disk.
///
/// Durability: one `write` per record on an `O_APPEND` descriptor; `fdatasync` right after
/// transition, start and stop records, and otherwise at most `syncInterval` after a round.
/// Failures (full disk, read-only or vanished directory, I/O errors) are counted
/// (`reachability_history_write_errors_total`, `…_dropped_records_total`), logged once per
/// condition (and once more when writes recover), and never stop the exporter.
///
/// Contract: `start()` once, then `roundCompleted` from any thread; `stop()` once at shutdown.
package final class HistoryWriter: RoundObserver, Sendable {
    private enum Item {
        case record(HistoryRecord)
        case flush(DispatchSemaphore)
    }
    private struct Queue {
        var items: [Item] = []
        var records = 0
        var stopping = false
        var queueFullLogged = false
    }

    package let config: HistoryConfig
    private let interval: Duration
    private let metrics: HistoryMetrics
    private let logger: Logger
    private let now: @Sendable () -> Double
    private let queue = Mutex(Queue())
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    /// Owned by the writer thread once started (the lock is never contended).
    private let store: Mutex<HistoryStore>
    private let conditions = Mutex<Set<String>>([])
    private let started = Atomic<Bool>(false)

    /// `store`: an already opened store (see `HistoryFlags.start`), or nil to open one lazily.
    package init(
        config: HistoryConfig, interval: Duration, metrics: HistoryMetrics, logger: Logger,
        store: HistoryStore? = nil, now: @escaping @Sendable () -> Double = { unixNow() }
    ) {
        self.config = config
        self.interval = interval
        self.metrics = metrics
        self.logger = logger
        self.now = now
        self.store = Mutex(store ?? HistoryStore(config: config))
        let (bytes, files) = self.store.withLock { ($0.totalBytes, $0.files.count) }
        metrics.bytes.set(Double(bytes))
        metrics.files.set(Double(files))
    }

    /// Starts the writer thread and queues the `start` record (stamped `time`, default now).
    package func start(at time: Double? = nil) {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        append(.start(StartRecord(time: time ?? now(), interval: interval.seconds, pid: Int(FileIO.processID()))))
        startThread(name: "history-writer") { [self] in run() }
    }

    package func roundCompleted(_ status: ReachabilityStatus) {
        append(.round(RoundRecord(status, interval: status.interval ?? interval)))
        for t in status.transitions {
            let (scope, change) = (t.scope, t.transition)
            append(
                .transition(
                    TransitionRecord(
                        time: change.at, scope: scope, from: change.from, to: change.to, fault: status.faults[scope])))
        }
    }

    /// Queues one record; drops (and counts) it if the queue is full. Never blocks.
    package func append(_ record: HistoryRecord) {
        enum Outcome { case queued, dropped, droppedFirst, closed }
        let outcome: Outcome = queue.withLock { q in
            // After stop() (a round finishing during shutdown) there is nothing to write to.
            guard !q.stopping else { return .closed }
            guard q.records < config.queueCapacity else {
                defer { q.queueFullLogged = true }
                return q.queueFullLogged ? .dropped : .droppedFirst
            }
            q.items.append(.record(record))
            q.records += 1
            return .queued
        }
        switch outcome {
        case .queued: wake.signal()
        case .dropped: metrics.dropped.inc()
        case .droppedFirst:
            metrics.dropped.inc()
            logger.warn(
                "history queue full; dropping records until the disk keeps up",
                ("capacity", config.queueCapacity))
        case .closed: break
        }
    }

    /// Waits (at most `timeout`) until everything queued so far is written and synced.
    @discardableResult
    package func flush(timeout: Duration = .seconds(10)) -> Bool {
        guard started.load(ordering: .acquiring) else { return false }
        let done = DispatchSemaphore(value: 0)
        queue.withLock { $0.items.append(.flush(done)) }
        wake.signal()
        return done.wait(timeout: .now() + .milliseconds(Int(timeout.milliseconds))) == .success
    }

    /// Writes a `stop` record, drains the queue, syncs and closes (waits at most `timeout`).
    package func stop(timeout: Duration = .seconds(5)) {
        guard started.load(ordering: .acquiring) else { return }
        append(.stop(StopRecord(time: now())))
        let first = queue.withLock { q -> Bool in
            defer { q.stopping = true }
            return !q.stopping
        }
        guard first else { return }
        wake.signal()
        if finished.wait(timeout: .now() + .milliseconds(Int(timeout.milliseconds))) != .success {
            logger.warn("history writer did not finish in time; the last records may be lost")
        }
    }

    // MARK: The writer thread

    private func run() {
        var lastSync = ContinuousClock.now
        var dirty = false
        while true {
            let syncDue = lastSync + config.syncInterval
            if dirty {
                let left = ContinuousClock.now.duration(to: syncDue)
                _ = wake.wait(timeout: .now() + .milliseconds(max(0, Int(left.milliseconds)) + 1))
            } else {
                wake.wait()
            }
            let (items, stopping) = queue.withLock { q -> ([Item], Bool) in
                let items = q.items
                q.items.removeAll(keepingCapacity: true)
                q.records = 0
                if q.queueFullLogged && items.count < config.queueCapacity / 2 { q.queueFullLogged = false }
                return (items, q.stopping)
            }
            var syncNow = false
            var waiters: [DispatchSemaphore] = []
            for item in items {
                switch item {
                case .record(let r):
                    if write(r) {
                        dirty = true
                        if case .round = r {} else { syncNow = true }
                    }
                case .flush(let s):
                    waiters.append(s)
                    syncNow = true
                }
            }
            if dirty && (syncNow || stopping || ContinuousClock.now >= syncDue) {
                sync()
                dirty = false
                lastSync = ContinuousClock.now
            }
            for w in waiters { w.signal() }
            if stopping {
                store.withLock { $0.close() }
                finished.signal()
                return
            }
        }
    }

    /// Writes one record; false (counted, logged once) if it was lost.
    private func write(_ record: HistoryRecord) -> Bool {
        let bytes = record.encoded()
        let t = now()
        let (result, retention, bytesNow, files) = store.withLock {
            s -> (HistoryStoreError?, HistoryStoreError?, Int, Int) in
            var result: HistoryStoreError?
            do throws(HistoryStoreError) { try s.append(bytes, now: t) } catch { result = error }
            // A file refused when the store reopened its directory: counted and logged like a retention failure.
            let refused = s.takeRefusedNewest().map { $0.error }
            return (result, s.takeRetentionFailure() ?? refused, s.totalBytes, s.files.count)
        }
        metrics.bytes.set(Double(bytesNow))
        metrics.files.set(Double(files))
        if let retention {
            metrics.writeErrors.inc()
            failed(retention)
        }
        switch result {
        case nil:
            metrics.written.inc()
            recovered()
            return true
        case let error?:
            metrics.writeErrors.inc()
            metrics.dropped.inc()
            failed(error)
            return false
        }
    }

    private func sync() {
        let result: HistoryStoreError? = store.withLock { s in
            do throws(HistoryStoreError) {
                try s.sync()
                return nil
            } catch { return error }
        }
        let (bytes, files) = store.withLock { ($0.totalBytes, $0.files.count) }
        metrics.bytes.set(Double(bytes))
        metrics.files.set(Double(files))
        if let result {
            metrics.writeErrors.inc()
            failed(result)
        }
    }

    /// Logs a failure the first time its condition (operation and errno) appears.
    private func failed(_ error: HistoryStoreError) {
        let key = "\(error.operation.rawValue):\(error.errno.code)"
        let isNew = conditions.withLock { $0.insert(key).inserted }
        if isNew {
            logger.error(
                "history write failed; records are being lost (logged once until it recovers)",
                ("dir", config.directory), ("op", error.operation.rawValue), ("err", error.detail))
        }
    }

    private func recovered() {
        let had = conditions.withLock { c -> Bool in
            defer { c.removeAll() }
            return !c.isEmpty
        }
        if had { logger.info("history writes recovered", ("dir", config.directory)) }
    }
}
