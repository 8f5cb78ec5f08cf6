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
        var store = HistoryStore(config: config)
        do {
            let torn = try store.open(now: startTime)
            if torn > 0 {
                metrics.corrupt.inc()
                logger.warn(
                    "history: cut a torn final line (the previous run ended mid-write)", ("bytes", String(torn)))
            }
        } catch {
            metrics.writeErrors.inc()
            logger.error(
                "history directory unusable; the exporter runs on without it until it is fixed",
                ("dir", config.directory), ("op", error.operation.rawValue), ("err", error.errno.description))
        }
        if let failure = store.takeRetentionFailure() {
            metrics.writeErrors.inc()
            logger.error(
                "history: cannot delete an expired file", ("dir", config.directory), ("err", failure.description))
        }

        let tracker = AvailabilityTracker(interval: interval, metrics: metrics, now: now)
        let summary = StatusHistory(interval: interval, now: now)
        var lastRound: RoundSummary?
        var changes: [String: (to: Verdict, at: Double)] = [:]
        var firstTime: Double?
        let clock = ContinuousClock()
        let began = clock.now
        let longest = HistoryMetrics.windows.map(\.seconds).max() ?? 0
        var stats = HistoryReader.Stats()
        do {
            stats = try HistoryReader.read(directory: config.directory, from: startTime - longest) { event in
                tracker.replay(event)
                summary.replay(event)
                switch event {
                case .round(let r):
                    lastRound = r
                    firstTime = firstTime ?? r.time
                case .transition(let t): changes[t.scope] = (t.to, t.time)
                case .start(let time, _): firstTime = firstTime ?? time
                case .stop: break
                }
            }
        } catch {
            logger.warn("history: cannot read the directory", ("dir", config.directory), ("err", error.description))
        }
        if stats.corrupt > 0 {
            metrics.corrupt.inc(Double(stats.corrupt))
            logger.warn("history: skipped corrupt lines", ("count", String(stats.corrupt)))
        }
        logger.info(
            "history loaded", ("dir", config.directory), ("files", String(stats.files)),
            ("rounds", String(stats.rounds)),
            ("corrupt", String(stats.corrupt)), ("ms", String(began.duration(to: clock.now).milliseconds)))
        tracker.markStart(at: startTime)
        summary.markStart(at: startTime)
        // The fast pass above skips probe results; the page's RTT charts read the last day again.
        let directory = config.directory
        _ = startThread(name: "history-rtt") {
            let began = ContinuousClock().now
            let read = summary.loadSamples(directory: directory, until: startTime)
            logger.info(
                "history: probe results of the last day read for the status page", ("rounds", String(read.rounds)),
                ("ms", String(began.duration(to: ContinuousClock().now).milliseconds)))
        }
        registry.onCollect { tracker.refresh() }

        let writer = HistoryWriter(
            config: config, interval: interval, metrics: metrics, logger: logger, store: store, now: now)
        writer.start(at: startTime)
        // When each family's and uplink's last verdict began: its last transition to that verdict,
        // else (it held through the whole window read) the window's first record.
        func since(_ scope: NamedVerdict) -> ScopedVerdict {
            let change = changes[scope.name]
            let at =
                change.flatMap { $0.to == scope.verdict ? $0.at : nil } ?? firstTime ?? lastRound?.time ?? startTime
            return ScopedVerdict(verdict: scope.verdict, since: at)
        }
        let families = Dictionary(
            lastRound?.families.compactMap { f in IPFamily(rawValue: f.name).map { ($0, since(f)) } } ?? [],
            uniquingKeysWith: { a, _ in a })
        let uplinks = Dictionary(lastRound?.uplinks.map { ($0.name, since($0)) } ?? [], uniquingKeysWith: { a, _ in a })
        return HistoryService(
            writer: writer, tracker: tracker, summary: summary, lastRound: lastRound, families: families,
            uplinks: uplinks, loaded: stats)
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
