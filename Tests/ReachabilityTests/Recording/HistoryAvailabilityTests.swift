import ReachabilityTestSupport
import Synchronization
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// A settable wall clock for the history (`now` closures).
final class TestWallClock: Sendable {
    private let t: Mutex<Double>
    init(_ start: Double) { t = Mutex(start) }
    var now: Double { t.withLock { $0 } }
    func set(_ v: Double) { t.withLock { $0 = v } }
    func advance(_ d: Double) { t.withLock { $0 += d } }
    var closure: @Sendable () -> Double { { [self] in now } }
}

func status(
    at t: Double, _ v: Verdict, since: Double, round: Int = 1, duration: Double = 0,
    transitions: [ScopeTransition] = []
) -> ReachabilityStatus {
    ReachabilityStatus(
        overall: ScopedVerdict(verdict: v, since: since), families: [.ipv4: ScopedVerdict(verdict: v, since: since)],
        uplinks: [:],
        probes: [
            ProbeOutcome(
                name: "127.0.0.1:9", type: .tcp, target: "127.0.0.1:9", interface: nil,
                result: v.state == .full
                    ? ProbeResult(status: .success, duration: .milliseconds(1))
                    : .failure(.refused, "refused", duration: .milliseconds(1)), at: t)
        ],
        roundStarted: t, roundDuration: .milliseconds(Int64(duration * 1000)), transitions: transitions, round: round)
}

/// The coverage rule, the sliding windows, and restart continuity through real files.
@Suite struct HistoryAvailabilityTests {
    static let t0 = 1_767_225_600.0
    let full = Verdict(.full)
    let down = Verdict(.limited, reason: .probe(.timeout))

    @Test func aRoundCoversUntilTheNextButAtMostTwiceTheInterval() {
        var tl = VerdictTimeline()
        #expect(tl.add(at: 0, verdict: full, cap: 10) == nil)
        #expect(tl.add(at: 5, verdict: down, cap: 10) == Segment(0, 5, full))
        // 30 s of silence: the down round covers 10 s, the rest is a gap.
        #expect(tl.add(at: 35, verdict: full, cap: 10) == Segment(5, 15, down))
        #expect(tl.pending(now: 40) == Segment(35, 40, full))
        #expect(tl.pending(now: 100) == Segment(35, 45, full))
        // A start record cuts the previous round's coverage.
        #expect(tl.cut(at: 38) == Segment(35, 38, full))
        #expect(tl.pending(now: 100) == nil)
        // unknown covers nothing.
        #expect(tl.add(at: 50, verdict: .unknown, cap: 10) == nil)
        #expect(tl.add(at: 55, verdict: full, cap: 10) == nil)
        #expect(tl.add(at: 57, verdict: full, cap: 10) == Segment(55, 57, full))
    }

    @Test func theWallClockSteppingBackwardsNeverCoversTimeTwice() {
        var tl = VerdictTimeline()
        var segments: [Segment] = []
        for (at, v) in [
            (100.0, full), (105, full), (110, down), (50, down), (55, down), (108, full), (113, full), (118, full),
        ] {
            if let s = tl.add(at: at, verdict: v, cap: 10) { segments.append(s) }
        }
        // Back to 50: nothing until the clock passes 110+cap, the latest covered instant; then
        // coverage resumes from there.
        #expect(
            segments == [
                Segment(100, 105, full), Segment(105, 110, full), Segment(110, 113, full), Segment(113, 118, full),
            ])
        for (a, b) in zip(segments, segments.dropFirst()) { #expect(a.end <= b.start) }
    }

    /// Found by a hostile review: history dated a day ahead (the clock was stepped back) left
    /// every ratio NaN until real time caught up. A step back past the tolerance restarts
    /// coverage at the landing point.
    @Test func aLargeStepBackRestartsCoverageWhereTheClockLanded() {
        var ledger = AvailabilityLedger(keep: 3600)
        for i in 0..<20 { ledger.add(at: 86_400 + Double(i) * 5, verdict: full, cap: 10) }
        ledger.cut(at: 1000)  // this process starts, at the real time
        for i in 1...12 { ledger.add(at: 1000 + Double(i) * 5, verdict: i <= 6 ? full : down, cap: 10) }
        let w = ledger.window(300, now: 1060)
        #expect(w.covered == 60 - 5, "from the first round after the start to now")
        #expect(w.up == 30)
        #expect(!w.availability.isNaN)
        // A small step (NTP) is not a rewind: the overlap is only not covered twice.
        var tl = VerdictTimeline()
        _ = tl.add(at: 100, verdict: full, cap: 10)
        _ = tl.add(at: 105, verdict: full, cap: 10)
        _ = tl.add(at: 60, verdict: full, cap: 10)
        #expect(tl.rewinds == 0)
        _ = tl.add(at: 10, verdict: full, cap: 10)
        #expect(tl.rewinds == 1 && tl.rewoundTo == 10)
        #expect(tl.add(at: 15, verdict: full, cap: 10) == Segment(10, 15, full))
    }

    /// The prefix-sum ledger against brute force on random timelines and windows.
    @Test func ledgerWindowsMatchBruteForce() {
        var rng = SplitMix64(seed: 11)
        for _ in 0..<50 {
            var ledger = AvailabilityLedger(keep: 1000)
            var tl = VerdictTimeline()
            var segments: [Segment] = []
            var t = 0.0
            for _ in 0..<200 {
                t += Double(rng.next() % 40) - 5  // sometimes backwards
                let v: Verdict = rng.next() % 3 == 0 ? down : (rng.next() % 7 == 0 ? .unknown : full)
                if rng.next() % 23 == 0 {
                    ledger.cut(at: t)
                    if let s = tl.cut(at: t) { segments.append(s) }
                } else {
                    ledger.add(at: t, verdict: v, cap: 20)
                    if let s = tl.add(at: t, verdict: v, cap: 20) { segments.append(s) }
                }
            }
            for _ in 0..<20 {
                let now = t + Double(rng.next() % 30)
                let length = Double(rng.next() % 1000) + 1
                var covered = 0.0
                var up = 0.0
                for s in segments + [tl.pending(now: now)].compactMap({ $0 }) {
                    let part = max(0, min(s.end, now) - max(s.start, now - length))
                    covered += part
                    if s.verdict.state == .full { up += part }
                }
                let w = ledger.window(length, now: now)
                #expect(
                    abs(w.covered - covered) < 1e-6 && abs(w.up - up) < 1e-6,
                    "window \(length) at \(now): \(w) vs \(covered), \(up)")
            }
        }
    }

    @Test func trackerGaugesFollowRoundsAndSlideWithTime() {
        let registry = MetricsRegistry()
        let clock = TestWallClock(Self.t0)
        let tracker = AvailabilityTracker(
            interval: .seconds(10), metrics: HistoryMetrics(registry: registry), now: clock.closure)
        tracker.markStart(at: Self.t0)
        // 50 minutes full, 10 minutes limited, one round every 10 s.
        for i in 0..<360 {
            clock.set(Self.t0 + Double(i) * 10)
            tracker.roundCompleted(status(at: clock.now, i < 300 ? full : down, since: Self.t0))
        }
        clock.set(Self.t0 + 3600)
        tracker.refresh()
        let text = registry.renderString()
        #expect(text.contains("reachability_availability_ratio{window=\"1h\"} 0.8333333333333334"), "\(text)")
        #expect(text.contains("reachability_history_coverage_ratio{window=\"1h\"} 1\n"))
        #expect(text.contains("reachability_history_coverage_ratio{window=\"1d\"} 0.041666666666666664"))
        // No rounds for 20 more minutes (the exporter is stopped): the last round covers 20 s,
        // then it is a gap, not an outage. The windows slide without any round arriving.
        clock.set(Self.t0 + 3600 + 1200)
        let w = tracker.windows().first { $0.label == "1h" }!.window
        #expect(w.covered == 2400 + 10)
        #expect(w.up == 1800)
    }

    /// Write, "crash" (no stop record), start again later: the last verdict and its since come
    /// back, the monitor keeps them, and the downtime is a gap in the windows.
    @Test func restartRestoresStateAndCountsDowntimeAsAGap() async throws {
        let dir = ScratchDirectory()
        let clock = TestWallClock(Self.t0)
        var config = HistoryConfig(directory: dir.path)
        config.retention = .seconds(3650 * 86_400)
        let first = HistoryService.start(
            config, interval: .seconds(10), registry: MetricsRegistry(), logger: Logger(level: .error),
            now: clock.closure)
        #expect(first.lastRound == nil)
        let wentDown = Self.t0 + 600
        for i in 0..<90 {
            clock.set(Self.t0 + Double(i) * 10)
            let v = i < 60 ? full : down
            let transitions: [ScopeTransition] =
                i == 60
                ? [
                    ScopeTransition(.overall, Transition(from: full, to: down, at: wentDown)),
                    ScopeTransition(.family(.ipv4), Transition(from: full, to: down, at: wentDown)),
                ] : []
            for o in first.observers {
                o.roundCompleted(
                    status(at: clock.now, v, since: i < 60 ? Self.t0 : wentDown, round: i + 1, transitions: transitions)
                )
            }
        }
        #expect(first.writer.flush())
        // Crash: no stop() — the writer thread is simply abandoned.

        clock.set(Self.t0 + 3600)  // down for 45 minutes
        let registry = MetricsRegistry()
        let second = HistoryService.start(
            config, interval: .seconds(10), registry: registry, logger: Logger(level: .error), now: clock.closure)
        defer { second.stop() }
        #expect(second.loaded.rounds == 90)
        #expect(second.loaded.corrupt == 0)
        let last = try #require(second.lastRound)
        #expect(last.overall == down)
        #expect(last.since == wentDown)

        // The monitor takes the restored verdict: a limited round keeps the original since.
        let prober = ScriptedProber(type: .tcp, clock: ManualClock())
        prober.set(.failure(.timeout, "x", duration: .milliseconds(1)))
        let spec = ProbeSpec(name: "p", type: .tcp, target: "p", family: .ipv4) { _ in prober }
        let monitor = ReachabilityMonitor(
            probes: [spec], observers: second.observers, clock: ManualClock(), wallClock: clock.closure)
        second.restore(into: monitor)
        let s = await monitor.check()
        #expect(s.overall.verdict == down)
        #expect(s.overall.since == wentDown)
        #expect(second.lastFamilies[.ipv4] == ScopedVerdict(verdict: down, since: wentDown))
        #expect(s.families[.ipv4]?.verdict == down)
        #expect(s.families[.ipv4]?.since == wentDown, "the family keeps its own since across the restart")
        #expect(s.transitions.isEmpty)

        // 1h window: 600 s full, 310 s limited (the last round covers 20 s, twice the
        // interval), then the downtime is a gap: coverage drops, availability does not.
        let hour = second.tracker.windows(at: Self.t0 + 3600).first { $0.label == "1h" }!.window
        #expect(hour.covered == 910)
        #expect(hour.up == 600)
        second.tracker.refresh()
        let text = registry.renderString()
        #expect(text.contains("reachability_history_coverage_ratio{window=\"1h\"} \(910.0 / 3600)\n"), "\(text)")
        #expect(text.contains("reachability_availability_ratio{window=\"1h\"} \(600.0 / 910)\n"))
        #expect(second.writer.flush())
        let types = dir.files.flatMap { dir.lines($0) }.compactMap { line -> String? in
            guard case .object? = JSONValue.parse(Array(line.utf8)) else { return nil }
            return JSONValue.parse(Array(line.utf8))?["type"]?.string
        }
        #expect(types.filter { $0 == "start" }.count == 2)
        #expect(
            types.filter { $0 == "transition" }.count == 2,
            "overall and ipv4 went down once, before the restart; nothing after it")
        #expect(types.filter { $0 == "round" }.count == 91)
    }
}
