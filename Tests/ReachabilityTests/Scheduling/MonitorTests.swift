import ReachabilityTestSupport
import Synchronization
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// The scheduler on a manual clock: no test here sleeps.
@Suite struct MonitorTests {
    static let failed = ProbeResult.failure(.timeout, "scripted", duration: .seconds(1))
    static let ok = ProbeResult(status: .success, duration: .milliseconds(3))

    func spec(_ name: String, _ prober: any Prober, type: ProbeType = .tcp, interval: Duration? = nil) -> ProbeSpec {
        ProbeSpec(name: name, type: type, target: name, interval: interval) { _ in prober }
    }

    func settings(
        interval: Duration = .seconds(5), timeout: Duration = .seconds(1), fastRecheck: Duration = .seconds(1)
    ) -> MonitorSettings {
        var s = MonitorSettings()
        s.interval = interval
        s.timeout = timeout
        s.fastRecheck = fastRecheck
        s.verdict = VerdictSettings(failAfter: 2, recoverAfter: 2)
        return s
    }

    /// Advances the clock one second at a time, letting the monitor react between steps.
    func step(_ clock: ManualClock, seconds: Int) async {
        for _ in 0..<seconds {
            _ = await clock.waitForSleepers()
            clock.advance(by: .seconds(1))
        }
        _ = await clock.waitForSleepers()
    }

    /// Yields (bounded) until the condition holds.
    func until(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<200_000 {
            if condition() { return true }
            await Task.yield()
        }
        return false
    }

    @Test func reChecksFasterWhileNotFullDoublingUpToTheInterval() async {
        let clock = ManualClock()
        let prober = ScriptedProber(type: .tcp, clock: clock)
        prober.set(Self.failed)
        let monitor = ReachabilityMonitor(
            probes: [spec("a", prober)], settings: settings(), clock: clock, wallClock: { 0 })
        let task = Task { await monitor.run() }
        await step(clock, seconds: 17)
        task.cancel()
        // Waits after each failing round: 1, 2, 4, then the 5 s interval.
        #expect(prober.calls.map { Int($0.offset.seconds) } == [0, 1, 3, 7, 12, 17])
    }

    @Test func fullRoundsRunOnTheInterval() async {
        let clock = ManualClock()
        let prober = ScriptedProber(type: .tcp, clock: clock)
        let monitor = ReachabilityMonitor(
            probes: [spec("a", prober)], settings: settings(), clock: clock, wallClock: { 0 })
        let task = Task { await monitor.run() }
        await step(clock, seconds: 15)
        task.cancel()
        #expect(prober.calls.map { Int($0.offset.seconds) } == [0, 5, 10, 15])
        #expect(monitor.current?.state == .full)
    }

    /// Work after the probes (verdicts, metrics, history) counts toward the interval: rounds
    /// start every 5 s even when that work takes 2 s, not every 7.
    @Test func roundsKeepTheIntervalWhenObserversAreSlow() async {
        struct SlowObserver: RoundObserver {
            let clock: ManualClock
            func roundCompleted(_ status: ReachabilityStatus) { clock.advance(by: .seconds(2)) }
        }
        let clock = ManualClock()
        let prober = ScriptedProber(type: .tcp, clock: clock)
        let monitor = ReachabilityMonitor(
            probes: [spec("a", prober)], settings: settings(), observers: [SlowObserver(clock: clock)], clock: clock,
            wallClock: { 0 })
        let task = Task { await monitor.run() }
        await step(clock, seconds: 14)  // plus 2 s per round from the observer: 20 s in all
        task.cancel()
        #expect(prober.calls.map { Int($0.offset.seconds) } == [0, 5, 10, 15, 20])
    }

    @Test func aPathChangeReProbesAtOnce() async throws {
        let clock = ManualClock()
        let prober = ScriptedProber(type: .tcp, clock: clock)
        let path = FakePathSource(
            FakePathSource.snapshot(name: "eth0", type: .ethernet, families: [.ipv4], carrier: true))
        var s = settings()
        s.pathDebounce = .milliseconds(100)
        let monitor = ReachabilityMonitor(
            probes: [spec("a", prober)], settings: s, path: SnapshotPathGate(path), clock: clock, wallClock: { 0 })
        let task = Task { await monitor.run() }
        #expect(await clock.waitForSleepers())
        #expect(prober.calls.count == 1)
        path.send(FakePathSource.snapshot(name: "eth0", type: .ethernet, families: [.ipv4], carrier: false))
        // The debounce sleeps on the clock too: wait for it, let it pass, and the round runs.
        #expect(await clock.waitForSleepers(2))
        clock.advance(by: .milliseconds(100))
        #expect(await until { monitor.current?.round == 2 })
        task.cancel()
        #expect(prober.calls.count == 1, "no carrier: the round decides from the path, without traffic")
        #expect(monitor.current?.overall.verdict == Verdict(.none, reason: .path(.noCarrier)))
        #expect(monitor.current?.round == 2)
    }

    /// Found by a hostile review: a loop of reloads ran 677 rounds in 10 s. Triggers in a row
    /// start one round at once, then at most one per `minimumRoundGap`.
    @Test func triggersInARowStartRoundsNoCloserThanTheLeastGap() async {
        let clock = ManualClock()
        let prober = ScriptedProber(type: .tcp, clock: clock)
        let probes = [spec("a", prober)]
        let monitor = ReachabilityMonitor(probes: probes, settings: settings(), clock: clock, wallClock: { 0 })
        let task = Task { await monitor.run() }
        #expect(await clock.waitForSleepers())
        await monitor.reconfigure(probes: probes, settings: settings())
        #expect(await until { prober.calls.count == 2 }, "the first trigger re-probes at once")
        for _ in 0..<50 { await monitor.reconfigure(probes: probes, settings: settings()) }
        #expect(await clock.waitForSleepers())
        #expect(prober.calls.count == 2, "the next waits for the gap")
        clock.advance(by: .seconds(1))
        #expect(await until { prober.calls.count == 3 })
        await step(clock, seconds: 3)
        task.cancel()
        // The first trigger at once; the 50 coalesced into at most one more round per gap.
        let offsets = prober.calls.map { Int($0.offset.seconds) }
        #expect(offsets.starts(with: [0, 0, 1]) && offsets.count <= 4, "\(offsets)")
        #expect(zip(offsets.dropFirst(2), offsets.dropFirst()).allSatisfy { $0 - $1 >= 1 }, "\(offsets)")
    }

    /// Found by the fault lab: a lost carrier waited for the round in flight to time out.
    @Test func aLostPathCutsTheRoundInFlightShort() async throws {
        let clock = ManualClock()
        let prober = ScriptedProber(type: .tcp, clock: clock, hold: .seconds(3))
        let path = FakePathSource(
            FakePathSource.snapshot(name: "eth0", type: .ethernet, families: [.ipv4], carrier: true))
        var s = settings(timeout: .seconds(4))
        s.pathDebounce = .milliseconds(100)
        let monitor = ReachabilityMonitor(
            probes: [spec("a", prober)], settings: s, path: SnapshotPathGate(path), clock: clock, wallClock: { 0 })
        let task = Task { await monitor.run() }
        #expect(await clock.waitForSleepers())  // the probe holds for 3 s
        path.send(FakePathSource.snapshot(name: "eth0", type: .ethernet, families: [.ipv4], carrier: false))
        #expect(await clock.waitForSleepers(2))  // and the debounce waits
        clock.advance(by: .milliseconds(100))
        #expect(await until { monitor.current?.overall.verdict == Verdict(.none, reason: .path(.noCarrier)) })
        task.cancel()
        #expect(clock.now.offset == .milliseconds(100), "decided without waiting for the probe's 3 s")
        #expect(prober.calls.count == 1)
    }

    @Test func startsAreStaggeredAcrossTheInterval() async {
        let clock = ManualClock()
        let probers = (0..<4).map { _ in ScriptedProber(type: .tcp, clock: clock) }
        let specs = probers.enumerated().map { spec("p\($0.offset)", $0.element) }
        let monitor = ReachabilityMonitor(
            probes: specs, settings: settings(interval: .seconds(5), timeout: .seconds(1)), clock: clock,
            wallClock: { 0 })
        let task = Task { await monitor.run() }
        // The first starts at once (no clock wait): let it, or a loaded machine stamps it after the
        // first advance below.
        #expect(await until { probers[0].calls.count == 1 })
        // Three starts wait on the clock; release them one second at a time.
        for k in 1...3 {
            #expect(await clock.waitForSleepers(4 - k))
            clock.advance(by: .seconds(1))
            #expect(await until { probers[k].calls.count == 1 })
        }
        task.cancel()
        // Spread over interval - timeout = 4 s.
        #expect(probers.map { $0.calls.first.map { Int($0.offset.seconds) } } == [0, 1, 2, 3])
    }

    @Test func aProbeNeverOverlapsItself() async {
        let clock = ManualClock()
        let prober = ScriptedProber(type: .tcp, clock: clock, hold: .seconds(3))
        let monitor = ReachabilityMonitor(
            probes: [spec("a", prober)], settings: settings(), clock: clock, wallClock: { 0 })
        let running = Task { await monitor.run() }
        #expect(await clock.waitForSleepers())
        let checks = Task { await monitor.check() }  // must wait for the running round
        await step(clock, seconds: 8)
        _ = await checks.value
        running.cancel()
        #expect(prober.maxConcurrent == 1)
        #expect(prober.calls.count >= 2)
    }

    @Test func hysteresisAcrossRounds() async {
        let clock = ManualClock()
        let prober = ScriptedProber(type: .tcp, clock: clock)
        let monitor = ReachabilityMonitor(
            probes: [spec("a", prober)], settings: settings(fastRecheck: .zero), clock: clock, wallClock: { 0 })
        #expect(await monitor.check().state == .full)
        prober.set(Self.failed)
        #expect(await monitor.check().state == .full)
        let third = await monitor.check()
        #expect(third.state == .limited)
        #expect(third.overall.verdict.reason == .probe(.timeout))
        #expect(third.transitions.map(\.scope).contains(.overall))
    }

    @Test func everySubscriberSeesEveryStatus() async {
        let clock = ManualClock()
        let prober = ScriptedProber(type: .tcp, clock: clock)
        let monitor = ReachabilityMonitor(
            probes: [spec("a", prober)], settings: settings(), clock: clock, wallClock: { 0 })
        let a = monitor.updates()
        let b = monitor.updates()
        _ = await monitor.check()
        var ia = a.makeAsyncIterator()
        var ib = b.makeAsyncIterator()
        #expect(await ia.next()?.round == 1)
        #expect(await ib.next()?.round == 1)
        _ = await monitor.check()
        #expect(await ia.next()?.round == 2)
        #expect(await ib.next()?.round == 2)
    }

    @Test func uplinksGetTheirOwnVerdict() async {
        let clock = ManualClock()
        let good = ScriptedProber(type: .tcp, clock: clock)
        let bad = ScriptedProber(type: .tcp, clock: clock)
        bad.set(Self.failed)
        var s = settings()
        s.uplinks = ["wan0", "wan1"]
        let probe = ProbeSpec(name: "a", type: .tcp, target: "a") { iface in iface == "wan0" ? bad : good }
        let monitor = ReachabilityMonitor(probes: [probe], settings: s, clock: clock, wallClock: { 0 })
        let status = await monitor.check()
        #expect(status.uplinks["wan0"]?.verdict == Verdict(.limited, reason: .probe(.timeout)))
        #expect(status.uplinks["wan1"]?.verdict.state == .full)
        #expect(status.state == .full)
        #expect(status.probes.count == 3)
    }

    /// Each outcome carries the probe's recent loss (of its last 20 runs) and its last success.
    @Test func outcomesCarryRecentLossAndLastSuccess() async {
        let clock = ManualClock()
        let prober = ScriptedProber(type: .tcp, clock: clock)
        let wall = Mutex(100.0)
        let monitor = ReachabilityMonitor(
            probes: [spec("a", prober)], settings: settings(), clock: clock, wallClock: { wall.withLock { $0 } })
        var last: ProbeOutcome?
        for (i, result) in [Self.ok, Self.failed, Self.ok, Self.failed, Self.failed].enumerated() {
            wall.withLock { $0 = 100 + Double(i) * 10 }
            prober.set(result)
            last = await monitor.check().probes.first
        }
        #expect(last?.recentRuns == 5)
        #expect(last?.recentFailures == 3)
        #expect(last?.lastSuccess == 120, "the third run (started at 120) was the last success")
        // The window slides: 20 successes later, no failure is left in it.
        prober.set(Self.ok)
        for _ in 0..<20 { last = await monitor.check().probes.first }
        #expect(last?.recentRuns == 20)
        #expect(last?.recentFailures == 0)
    }
}

/// Every instant the scheduler uses comes from the injected clock, so a probe's own interval
/// can be stepped through without sleeping.
@Suite struct PerProbeIntervalTests {
    @Test func aProbeWithItsOwnIntervalSkipsRoundsOnTheManualClock() async {
        let clock = ManualClock()
        let every = ScriptedProber(type: .tcp, clock: clock)
        let slow = ScriptedProber(type: .tcp, clock: clock)
        let specs = [
            ProbeSpec(name: "every", type: .tcp, target: "every") { _ in every },
            ProbeSpec(name: "slow", type: .tcp, target: "slow", interval: .seconds(10)) { _ in slow },
        ]
        var s = MonitorSettings()
        s.interval = .seconds(5)
        s.timeout = .seconds(1)
        s.stagger = false
        let monitor = ReachabilityMonitor(probes: specs, settings: s, clock: clock, wallClock: { 0 })
        let task = Task { await monitor.run() }
        for _ in 0..<4 {
            _ = await clock.waitForSleepers()
            clock.advance(by: .seconds(5))
        }
        _ = await clock.waitForSleepers()
        task.cancel()
        #expect(every.calls.map { Int($0.offset.seconds) } == [0, 5, 10, 15, 20])
        #expect(slow.calls.map { Int($0.offset.seconds) } == [0, 10, 20])
    }

    /// A metered uplink probed every 15 s while the rounds run every 5 s; every round again
    /// while the overall verdict is not full.
    @Test func anUplinkWithItsOwnIntervalRunsLessOftenUnlessTheHostIsDown() async {
        for healthy in [true, false] {
            let clock = ManualClock()
            let probers = [
                "": ScriptedProber(type: .tcp, clock: clock), "eth0": ScriptedProber(type: .tcp, clock: clock),
                "wwan0": ScriptedProber(type: .tcp, clock: clock),
            ]
            if !healthy { for p in probers.values { p.set(.failure(.timeout, "x", duration: .milliseconds(1))) } }
            let spec = ProbeSpec(name: "p", type: .tcp, target: "p", evidence: .internet) { probers[$0 ?? ""]! }
            var s = MonitorSettings()
            s.interval = .seconds(5)
            s.timeout = .seconds(1)
            s.stagger = false
            s.fastRecheck = .zero
            s.verdict = VerdictSettings(failAfter: 1, recoverAfter: 1)
            s.uplinks = ["eth0", "wwan0"]
            s.uplinkIntervals = ["wwan0": .seconds(15)]
            let monitor = ReachabilityMonitor(probes: [spec], settings: s, clock: clock, wallClock: { 0 })
            let task = Task { await monitor.run() }
            for _ in 0..<4 {
                _ = await clock.waitForSleepers()
                clock.advance(by: .seconds(5))
            }
            _ = await clock.waitForSleepers()
            task.cancel()
            #expect(monitor.current?.state == (healthy ? .full : .limited))
            #expect(probers["eth0"]!.calls.map { Int($0.offset.seconds) } == [0, 5, 10, 15, 20])
            #expect(
                probers["wwan0"]!.calls.map { Int($0.offset.seconds) } == (healthy ? [0, 15] : [0, 5, 10, 15, 20]),
                "healthy: \(healthy)")
        }
    }
}

/// `--passive.mode=prefer`: a full uplink whose own connections receive pauses its probes; they
/// run again as soon as the evidence stops vouching.
@Suite struct PassivePreferTests {
    @Test func aVouchedForUplinkPausesItsProbesUntilTheEvidenceGoes() async {
        let clock = ManualClock()
        let probers = ["": ScriptedProber(type: .tcp, clock: clock), "wwan0": ScriptedProber(type: .tcp, clock: clock)]
        let spec = ProbeSpec(name: "p", type: .tcp, target: "p", evidence: .internet) { probers[$0 ?? ""]! }
        var s = MonitorSettings()
        s.interval = .seconds(5)
        s.timeout = .seconds(1)
        s.stagger = false
        s.fastRecheck = .zero
        s.verdict = VerdictSettings(failAfter: 1, recoverAfter: 1)
        s.uplinks = ["wwan0"]
        let monitor = ReachabilityMonitor(probes: [spec], settings: s, clock: clock, wallClock: { 0 })
        let board = PassiveBoard()
        monitor.watch(board)
        board.update([.uplink("wwan0"): PassiveSummary(receiving: 3, freshestReceive: .seconds(1))])
        let task = Task { await monitor.run() }
        for round in 0..<4 {
            _ = await clock.waitForSleepers()
            // From 15 s the connections stop vouching (a stall): the probe runs again.
            if round == 2 { board.update([.uplink("wwan0"): PassiveSummary(stalled: 1)]) }
            clock.advance(by: .seconds(5))
        }
        _ = await clock.waitForSleepers()
        task.cancel()
        #expect(probers[""]!.calls.map { Int($0.offset.seconds) } == [0, 5, 10, 15, 20], "overall has no evidence")
        // 5 s: paused; 10 s: the pause's bound (two intervals) runs it although the evidence
        // still vouches (old flows may receive while new ones fail); 15 s on: stalled.
        #expect(probers["wwan0"]!.calls.map { Int($0.offset.seconds) } == [0, 10, 15, 20])
        #expect(monitor.current?.uplinks["wwan0"]?.verdict.state == .full)
    }
}

/// An uplink's probe set: only the named probes run bound to it, and only theirs have series.
@Suite struct UplinkProbeSetTests {
    @Test func onlyTheNamedProbesRunOnTheUplinkAndHaveSeries() async {
        let clock = ContinuousClock()
        let ran = Mutex<[String]>([])
        let specs = ["captive", "mtu"].map { name in
            ProbeSpec(name: name, type: .tcp, target: name, evidence: .internet) { iface in
                ran.withLock { $0.append("\(name)@\(iface ?? "-")") }
                return ScriptedProber(type: .tcp, clock: clock)
            }
        }
        var s = MonitorSettings()
        s.uplinks = ["eth0", "wwan0"]
        s.uplinkProbes = ["wwan0": ["captive"]]
        #expect(s.interfaces(of: specs[0]) == [nil, "eth0", "wwan0"])
        #expect(s.interfaces(of: specs[1]) == [nil, "eth0"])
        let registry = MetricsRegistry()
        let recorder = MetricsRecorder(
            registry: registry, probes: specs, uplinks: s.uplinks, uplinkProbes: s.uplinkProbes)
        let monitor = ReachabilityMonitor(probes: specs, settings: s, observers: [recorder])
        let status = await monitor.check()
        #expect(
            Set(status.probes.map { "\($0.name)@\($0.interface ?? "-")" }) == [
                "captive@-", "captive@eth0", "captive@wwan0", "mtu@-", "mtu@eth0",
            ])
        #expect(!ran.withLock { $0 }.contains("mtu@wwan0"), "never even made")
        let success = RecorderReloadTests.lines(registry, "reachability_probe_success{")
        #expect(success.contains { $0.contains("target=\"captive@wwan0\"") })
        #expect(!success.contains { $0.contains("mtu@wwan0") }, "\(success)")
        // A reload that names mtu too creates its series; one that drops captive removes them.
        s.uplinkProbes = ["wwan0": ["mtu"]]
        await monitor.reconfigure(probes: specs, settings: s)
        let after = RecorderReloadTests.lines(registry, "reachability_probe_success{")
        #expect(
            after.contains { $0.contains("target=\"mtu@wwan0\"") } && !after.contains { $0.contains("captive@wwan0") },
            "\(after)")
    }
}

@Suite struct StaggerBatchesTests {
    @Test func spacedProbesKeepTheirOwnOffsets() {
        let plan = StaggerBatches.plan(count: 4, window: .seconds(2))
        #expect(plan.map(\.0) == [.zero, .milliseconds(500), .seconds(1), .milliseconds(1500)])
        #expect(plan.map(\.1) == [[0], [1], [2], [3]])
    }

    @Test func denseProbesShareTenMillisecondSlots() {
        let plan = StaggerBatches.plan(count: 1000, window: .milliseconds(500))
        // 2 probes per millisecond: 50 slots of 10 ms, 20 probes each, every probe once, in order.
        #expect(plan.count == 50 && plan.allSatisfy { $0.1.count == 20 })
        #expect(plan.flatMap(\.1) == Array(0..<1000))
        #expect(plan.first?.0 == .zero && plan.last?.0 == .milliseconds(490))
        #expect(zip(plan, plan.dropFirst()).allSatisfy { $1.0 - $0.0 == .milliseconds(10) })
        #expect(StaggerBatches.plan(count: 3, window: .zero).map(\.1) == [[0, 1, 2]])
        #expect(StaggerBatches.plan(count: 0, window: .seconds(1)).isEmpty)
    }
}
