import ReachabilityExporter
import ReachabilityVerdict
import Synchronization

/// A clock that only moves when a test says so, so the scheduler is tested without sleeping.
package final class ManualClock: Clock, Sendable {
    package struct Instant: InstantProtocol {
        package var offset: Duration
        package func advanced(by d: Duration) -> Instant { Instant(offset: offset + d) }
        package func duration(to other: Instant) -> Duration { other.offset - offset }
        package static func < (a: Instant, b: Instant) -> Bool { a.offset < b.offset }
    }

    private struct Sleeper {
        let deadline: Instant
        let continuation: CheckedContinuation<Void, Never>
    }
    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [UInt64: Sleeper] = [:]
        var next: UInt64 = 0
    }
    private let state = Mutex(State())

    package init() {}

    package var now: Instant { state.withLock { $0.now } }
    package var minimumResolution: Duration { .nanoseconds(1) }
    /// Tasks currently sleeping on this clock.
    package var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    package func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = Mutex<UInt64?>(nil)
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let ready: Bool = state.withLock { s in
                    if deadline <= s.now || Task.isCancelled { return true }
                    let n = s.next
                    s.next += 1
                    s.sleepers[n] = Sleeper(deadline: deadline, continuation: c)
                    id.withLock { $0 = n }
                    return false
                }
                if ready { c.resume() }
            }
        } onCancel: {
            let sleeper: Sleeper? = state.withLock { s in
                id.withLock { $0 }.flatMap { s.sleepers.removeValue(forKey: $0) }
            }
            sleeper?.continuation.resume()
        }
        try Task.checkCancellation()
    }

    /// Moves time forward and wakes every sleeper whose deadline has come.
    package func advance(by d: Duration) {
        let due: [Sleeper] = state.withLock { s in
            s.now = s.now.advanced(by: d)
            let ids = s.sleepers.filter { $0.value.deadline <= s.now }.keys
            return ids.compactMap { s.sleepers.removeValue(forKey: $0) }
        }
        for s in due { s.continuation.resume() }
    }

    /// Waits (yielding, bounded) until at least `count` tasks sleep on this clock.
    package func waitForSleepers(_ count: Int = 1, iterations: Int = 200_000) async -> Bool {
        for _ in 0..<iterations {
            if sleeperCount >= count { return true }
            await Task.yield()
        }
        return false
    }
}

/// A prober whose results a test scripts, recording when (on a manual clock) and how
/// concurrently it was called.
package final class ScriptedProber<C: Clock>: Prober, Sendable {
    package let type: ProbeType
    private let clock: C
    private let state = Mutex<(calls: [C.Instant], active: Int, maxActive: Int, next: ProbeResult)>(
        ([], 0, 0, ProbeResult(status: .success, duration: .milliseconds(1))))
    private let hold: Duration

    /// `hold`: how long each call sleeps on the clock before answering.
    package init(type: ProbeType, clock: C, hold: Duration = .zero) where C.Duration == Duration {
        self.type = type
        self.clock = clock
        self.hold = hold
    }

    package func set(_ result: ProbeResult) { state.withLock { $0.next = result } }
    /// What each call puts on the (imagined) wire, counted into the running probe's meter.
    private let cost = Mutex<TrafficCount?>(nil)
    package func costs(_ traffic: TrafficCount) { cost.withLock { $0 = traffic } }
    package var calls: [C.Instant] { state.withLock { $0.calls } }
    package var maxConcurrent: Int { state.withLock { $0.maxActive } }

    package func probe(deadline: ContinuousClock.Instant) async -> ProbeResult {
        state.withLock { s in
            s.calls.append(clock.now)
            s.active += 1
            s.maxActive = max(s.maxActive, s.active)
        }
        if hold > .zero { try? await clock.sleep(until: clock.now.advanced(by: hold as! C.Duration), tolerance: nil) }
        if let traffic = cost.withLock({ $0 }) { TrafficMeter.current?.add(traffic) }
        return state.withLock { s in
            s.active -= 1
            return s.next
        }
    }
}
