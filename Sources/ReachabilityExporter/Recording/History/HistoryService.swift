import ReachabilityVerdict

/// The history as the exporter runs it: at start-up it repairs and prunes the directory, reads
/// the records back (restoring the last verdict and seeding the availability gauges), then
/// writes every round through a `HistoryWriter` and keeps the gauges current through an
/// `AvailabilityTracker`. Nothing here can stop the exporter: every failure is counted and logged.
package final class HistoryService: Sendable {
    package let writer: HistoryWriter
    package let tracker: AvailabilityTracker
    /// What the status page draws.
    package let summary: StatusHistory
    /// The newest round found in the history at start-up.
    package let lastRound: RoundSummary?
    /// What reading the history at start-up went through.
    package let loaded: HistoryReader.Stats

    /// The observers to hand to the monitor.
    package var observers: [any RoundObserver] { [writer, tracker, summary] }

    /// Each family's and uplink's verdict in the newest round, with when it began.
    package let lastFamilies: [IPFamily: ScopedVerdict]
    package let lastUplinks: [String: ScopedVerdict]

    private init(
        writer: HistoryWriter, tracker: AvailabilityTracker, summary: StatusHistory, lastRound: RoundSummary?,
        families: [IPFamily: ScopedVerdict], uplinks: [String: ScopedVerdict], loaded: HistoryReader.Stats
    ) {
        self.writer = writer
        self.tracker = tracker
        self.summary = summary
        self.lastRound = lastRound
        self.loaded = loaded
        self.lastFamilies = families
        self.lastUplinks = uplinks
    }

    /// Opens the directory, reads it back and starts the writer thread.
    package static func start(
        _ config: HistoryConfig, interval: Duration, registry: MetricsRegistry, logger: Logger,
        now: @escaping @Sendable () -> Double = { unixNow() }
    ) -> HistoryService {
        let metrics = HistoryMetrics(registry: registry)
        let startTime = now()
        let store = open(config, metrics: metrics, logger: logger, now: startTime)
        let tracker = AvailabilityTracker(interval: interval, metrics: metrics, now: now)
        let summary = StatusHistory(interval: interval, now: now)
        let back = readBack(
            config.directory, since: startTime - (HistoryMetrics.windows.map(\.seconds).max() ?? 0),
            into: [tracker.replay, summary.replay], metrics: metrics, logger: logger)
        tracker.markStart(at: startTime)
        summary.markStart(at: startTime)
        // The fast pass above skips probe results; the page's RTT charts read the last day again.
        let directory = config.directory
        _ = startThread(name: "history-rtt") {
            let began = ContinuousClock().now
            let read = summary.loadSamples(directory: directory, until: startTime)
            logger.info(
                "history: probe results of the last day read for the status page", ("rounds", read.rounds),
                ("ms", began.duration(to: ContinuousClock().now).milliseconds))
        }
        registry.onCollect { tracker.refresh() }
        let writer = HistoryWriter(
            config: config, interval: interval, metrics: metrics, logger: logger, store: store, now: now)
        writer.start(at: startTime)
        let last = back.lastRound
        let families = Dictionary(
            last?.families.compactMap { f in IPFamily(rawValue: f.name).map { ($0, back.since(f, startTime)) } } ?? [],
            uniquingKeysWith: { a, _ in a })
        let uplinks = Dictionary(
            last?.uplinks.map { ($0.name, back.since($0, startTime)) } ?? [], uniquingKeysWith: { a, _ in a })
        return HistoryService(
            writer: writer, tracker: tracker, summary: summary, lastRound: last, families: families,
            uplinks: uplinks, loaded: back.stats)
    }

    /// The store, opened: a torn final line is cut and counted; an unusable directory is logged
    /// and counted, and the exporter runs on without it.
    private static func open(_ config: HistoryConfig, metrics: HistoryMetrics, logger: Logger, now: Double)
        -> HistoryStore
    {
        var store = HistoryStore(config: config)
        do {
            let torn = try store.open(now: now)
            if torn > 0 {
                metrics.corrupt.inc()
                logger.warn(
                    "history: cut a torn final line (the previous run ended mid-write)", ("bytes", torn))
            }
        } catch {
            metrics.writeErrors.inc()
            logger.error(
                "history directory unusable; the exporter runs on without it until it is fixed",
                ("dir", config.directory), ("op", error.operation.rawValue), ("err", error.detail))
        }
        if let refused = store.takeRefusedNewest() {
            metrics.writeErrors.inc()
            logger.error(
                "history: the newest file is not a file of ours; it is left untouched and a new file is started",
                ("dir", config.directory), ("file", refused.name), ("err", refused.error.detail))
        }
        if let failure = store.takeRetentionFailure() {
            metrics.writeErrors.inc()
            logger.error(
                "history: cannot delete an expired file", ("dir", config.directory), ("err", failure.description))
        }
        return store
    }

    /// What reading the history back found: the newest round, each scope's last transition and
    /// the first record's time.
    private struct ReadBack {
        var lastRound: RoundSummary?
        var changes: [Scope: (to: Verdict, at: Double)] = [:]
        var firstTime: Double?
        var stats = HistoryReader.Stats()

        /// When a scope's last verdict began: its last transition to that verdict, else (it held
        /// through the whole window read) the window's first record.
        func since(_ scope: NamedVerdict, _ startTime: Double) -> ScopedVerdict {
            let change = changes[Scope(label: scope.name)]
            let at =
                change.flatMap { $0.to == scope.verdict ? $0.at : nil } ?? firstTime ?? lastRound?.time ?? startTime
            return ScopedVerdict(verdict: scope.verdict, since: at)
        }
    }

    /// Reads the records newer than `since`, handing each to `consumers`; logs and counts what it
    /// could not read.
    private static func readBack(
        _ directory: String, since: Double, into consumers: [(HistoryEvent) -> Void], metrics: HistoryMetrics,
        logger: Logger
    ) -> ReadBack {
        var back = ReadBack()
        let began = ContinuousClock.now
        do {
            back.stats = try HistoryReader.read(directory: directory, from: since) { event in
                for consume in consumers { consume(event) }
                switch event {
                case .round(let r):
                    back.lastRound = r
                    back.firstTime = back.firstTime ?? r.time
                case .transition(let t): back.changes[t.scope] = (t.to, t.time)
                case .start(let time, _): back.firstTime = back.firstTime ?? time
                case .stop: break
                }
            }
        } catch {
            logger.warn("history: cannot read the directory", ("dir", directory), ("err", error.description))
        }
        if back.stats.corrupt > 0 {
            metrics.corrupt.inc(Double(back.stats.corrupt))
            logger.warn("history: skipped corrupt lines", ("count", back.stats.corrupt))
        }
        logger.info(
            "history loaded", ("dir", directory), ("files", back.stats.files),
            ("rounds", back.stats.rounds),
            ("corrupt", back.stats.corrupt), ("ms", began.duration(to: .now).milliseconds))
        return back
    }

    /// Gives the monitor the last verdicts (overall, per family and uplink) and when they began, so a restart neither
    /// resets `reachability_state_since_timestamp_seconds` nor forgets an ongoing outage.
    package func restore<C: Clock>(into monitor: ReachabilityMonitor<C>, logger: Logger? = nil) {
        guard let last = lastRound, last.overall.state != .unknown else { return }
        monitor.restore(overall: last.overall, since: last.since, families: lastFamilies, uplinks: lastUplinks)
        logger?.info(
            "restored state from history", ("state", last.overall.description), ("since", UTCTime.rfc3339(last.since)))
    }

    /// Writes the `stop` record and closes the file.
    package func stop() { writer.stop() }
}

/// Started (read back, writer running) when made, before the first round; as a `Service`
/// (`history`) it runs until shutdown, then writes its `stop` record after the last round.
extension HistoryService: Service {
    package var name: String { "history" }

    package func run() async {
        await untilCancelled()
        stop()
    }
}
