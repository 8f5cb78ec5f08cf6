import ReachabilityTestSupport
import Synchronization
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// `ReachabilityMonitor.reconfigure(probes:settings:)`: probes and settings swapped between
/// rounds, verdict state kept, uplinks added and removed, on a manual clock (no sleeps).
@Suite struct MonitorReconfigureTests {
    static let failed = ProbeResult.failure(.timeout, "scripted", duration: .seconds(1))

    func spec(_ name: String, _ prober: any Prober, interval: Duration? = nil) -> ProbeSpec {
        ProbeSpec(name: name, type: .tcp, target: name, interval: interval) { _ in prober }
    }

    func settings(interval: Duration = .seconds(5), failAfter: Int = 2, uplinks: [String] = []) -> MonitorSettings {
        var s = MonitorSettings()
        s.interval = interval
        s.timeout = .seconds(1)
        s.fastRecheck = .zero
        s.verdict = VerdictSettings(failAfter: failAfter, recoverAfter: 2)
        s.uplinks = uplinks
        return s
    }

    /// Records what the monitor tells its observers, in order.
    final class Journal: RoundObserver {
        let events = Mutex<[String]>([])
        func roundCompleted(_ status: ReachabilityStatus) {
            events.withLock {
                $0.append(
                    "round "
                        + status.probes.map { MetricsRecorder.targetLabel($0.name, $0.interface) }.joined(
                            separator: ","))
            }
        }
        func probesChanged(_ probes: [ProbeSpec], settings: MonitorSettings) {
            events.withLock {
                $0.append(
                    "changed " + probes.map(\.name).joined(separator: ",") + " uplinks "
                        + settings.uplinks.joined(separator: ","))
            }
        }
        var all: [String] { events.withLock { $0 } }
    }

    func until(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<200_000 {
            if condition() { return true }
            await Task.yield()
        }
        return false
    }

    @Test func addedProbesRunAndRemovedOnesStop() async {
        let clock = ManualClock()
        let a = ScriptedProber(type: .tcp, clock: clock)
        let b = ScriptedProber(type: .tcp, clock: clock)
        let c = ScriptedProber(type: .tcp, clock: clock)
        let journal = Journal()
        let monitor = ReachabilityMonitor(
            probes: [spec("a", a), spec("b", b)], settings: settings(), observers: [journal], clock: clock,
            wallClock: { 0 })
        _ = await monitor.check()
        await monitor.reconfigure(probes: [spec("b", b), spec("c", c)], settings: settings())
        let status = await monitor.check()
        #expect(status.probes.map(\.name) == ["b", "c"])
        #expect(a.calls.count == 1 && b.calls.count == 2 && c.calls.count == 1)
        #expect(journal.all == ["round a,b", "changed b,c uplinks ", "round b,c"])
    }

    @Test func verdictStreaksSurviveAReloadWithTheSameHysteresis() async {
        let clock = ManualClock()
        let a = ScriptedProber(type: .tcp, clock: clock)
        let monitor = ReachabilityMonitor(
            probes: [spec("a", a)], settings: settings(failAfter: 2), clock: clock, wallClock: { 0 })
        let first = await monitor.check()
        #expect(first.state == .full)
        a.set(Self.failed)
        #expect(await monitor.check().state == .full, "one failed round of two")
        let b = ScriptedProber(type: .tcp, clock: clock)
        b.set(Self.failed)
        await monitor.reconfigure(probes: [spec("a", a), spec("b", b)], settings: settings(failAfter: 2))
        let third = await monitor.check()
        #expect(third.state == .limited, "the streak counted across the reload")
        #expect(third.transitions.map(\.scope).contains(.overall))
    }

    @Test func newHysteresisKeepsTheVerdictButRestartsTheStreak() async {
        let clock = ManualClock()
        let wall = Mutex(100.0)
        let a = ScriptedProber(type: .tcp, clock: clock)
        let monitor = ReachabilityMonitor(
            probes: [spec("a", a)], settings: settings(failAfter: 2), clock: clock, wallClock: { wall.withLock { $0 } })
        let first = await monitor.check()
        #expect(first.state == .full)
        a.set(Self.failed)
        _ = await monitor.check()
        wall.withLock { $0 = 200 }
        await monitor.reconfigure(probes: [spec("a", a)], settings: settings(failAfter: 3))
        let afterReload = await monitor.check()
        #expect(afterReload.state == .full, "a new streak under fail_after 3")
        #expect(afterReload.overall.since == first.overall.since, "the verdict and its start are kept")
        #expect(await monitor.check().state == .full)
        #expect(await monitor.check().state == .limited)
    }

    @Test func uplinksAreAddedAndRemoved() async {
        let clock = ManualClock()
        let built = Mutex<[String]>([])
        let good = ScriptedProber(type: .tcp, clock: clock)
        let probe = ProbeSpec(name: "a", type: .tcp, target: "a") { iface in
            built.withLock { $0.append(iface ?? "-") }
            return good
        }
        let monitor = ReachabilityMonitor(
            probes: [probe], settings: settings(uplinks: ["wan0"]), clock: clock, wallClock: { 0 })
        #expect(Set(await monitor.check().uplinks.keys) == ["wan0"])
        await monitor.reconfigure(probes: [probe], settings: settings(uplinks: ["wan1", "wan2"]))
        let status = await monitor.check()
        #expect(Set(status.uplinks.keys) == ["wan1", "wan2"])
        #expect(status.uplinks["wan1"]?.verdict.state == .full)
        #expect(status.probes.map { MetricsRecorder.targetLabel($0.name, $0.interface) } == ["a", "a@wan1", "a@wan2"])
        #expect(built.withLock { $0 } == ["-", "wan0", "-", "wan1", "wan2"])
    }

    @Test func resultsOfChangedProbesAreNotCarriedOver() async {
        let clock = ManualClock()
        let slow = ScriptedProber(type: .tcp, clock: clock)
        slow.set(Self.failed)
        let monitor = ReachabilityMonitor(
            probes: [spec("a", slow, interval: .seconds(60))], settings: settings(), clock: clock, wallClock: { 0 })
        #expect(await monitor.check().probes.first?.result == Self.failed)
        // Same name, new target: the old failure must not stand in for the new probe.
        let fresh = ScriptedProber(type: .tcp, clock: clock)
        await monitor.reconfigure(
            probes: [ProbeSpec(name: "a", type: .tcp, target: "elsewhere", interval: .seconds(60)) { _ in fresh }],
            settings: settings())
        let status = await monitor.check()
        #expect(
            status.probes.count == 1 && status.probes.first?.target == "elsewhere"
                && status.probes.first?.result.succeeded == true)
    }

    @Test func aReloadCutsTheStaggerShortAndRunsTheNewProbesAtOnce() async {
        let clock = ManualClock()
        let old = (0..<3).map { _ in ScriptedProber(type: .tcp, clock: clock) }
        let new = ScriptedProber(type: .tcp, clock: clock)
        let journal = Journal()
        let monitor = ReachabilityMonitor(
            probes: old.enumerated().map { spec("p\($0.offset)", $0.element) }, settings: settings(),
            observers: [journal], clock: clock, wallClock: { 0 })
        let running = Task { await monitor.run() }
        // The first periodic round: p0 starts at once, p1 and p2 wait on the stagger.
        #expect(await clock.waitForSleepers(2))
        // p0's task may be scheduled after the two gates began to wait.
        #expect(await until { old[0].calls.count == 1 })
        #expect(old[1].calls.isEmpty && old[2].calls.isEmpty)
        let reload = Task { await monitor.reconfigure(probes: [spec("n", new)], settings: settings()) }
        let swappedWithoutTime = await until { journal.all.count >= 2 }
        #expect(swappedWithoutTime, "the reload waited for the stagger")
        if !swappedWithoutTime { clock.advance(by: .seconds(10)) }
        _ = await reload.value
        // Without moving the clock: the staggered starts ran, then the swap, then a round of the new probe.
        #expect(old.map { $0.calls.map(\.offset) } == [[.zero], [.zero], [.zero]])
        #expect(await until { new.calls.count == 1 })
        #expect(await until { journal.all.count == 3 })
        running.cancel()
        #expect(journal.all == ["round p0,p1,p2", "changed n uplinks ", "round n"])
        #expect(new.calls.map(\.offset) == [.zero])
    }

    @Test func aNewIntervalTakesEffect() async {
        let clock = ManualClock()
        let a = ScriptedProber(type: .tcp, clock: clock)
        let monitor = ReachabilityMonitor(
            probes: [spec("a", a)], settings: settings(interval: .seconds(5)), clock: clock, wallClock: { 0 })
        let running = Task { await monitor.run() }
        #expect(await clock.waitForSleepers())
        await monitor.reconfigure(probes: [spec("a", a)], settings: settings(interval: .seconds(2)))
        #expect(await until { a.calls.count == 2 })
        for _ in 0..<4 {
            #expect(await clock.waitForSleepers())
            clock.advance(by: .seconds(1))
        }
        #expect(await until { a.calls.count == 4 })
        running.cancel()
        #expect(a.calls.map { Int($0.offset.seconds) } == [0, 0, 2, 4])
    }
}
