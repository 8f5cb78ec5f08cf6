import Glibc
import Synchronization

/// The scheduler and the verdict keeper: runs the probes in rounds on an interval (staggered,
/// bounded in concurrency, never overlapping themselves), re-probes at once when the path
/// changes, re-checks faster while not `full`, and turns each round into verdicts with
/// hysteresis — overall, per IP family and per uplink.
///
/// This is the library's embedding API: `run()` in a task for continuous monitoring, `check()`
/// for one round now, `updates()` for a stream of statuses that any number of subscribers can
/// iterate (each gets its own stream; slow ones see the latest).
public final class ReachabilityMonitor<C: Clock>: Sendable where C.Duration == Duration {
    private let specs: [ProbeSpec]
    private let settings: MonitorSettings
    private let path: any PathGate
    private let clock: C
    private let wallClock: @Sendable () -> Double
    private let observers: [any RoundObserver]
    private let trigger = Trigger()
    private let roundLock = AsyncLock()
    private let concurrency: AsyncSemaphore

    private struct State {
        var overall: VerdictTracker
        var families: [IPFamily: VerdictTracker]
        var uplinks: [String: VerdictTracker]
        var status: ReachabilityStatus?
        var subscribers: [UInt64: AsyncStream<ReachabilityStatus>.Continuation] = [:]
        var nextSubscriber: UInt64 = 0
        var round = 0
        var lastRun: [String: ContinuousClock.Instant] = [:]
        var lastOutcome: [String: ProbeOutcome] = [:]
    }
    private let state: Mutex<State>
    /// One prober per (probe, uplink), built once so probers may keep state (sockets, contexts).
    private let probers: [String: any Prober]

    public init(probes: [ProbeSpec], settings: MonitorSettings = MonitorSettings(), path: any PathGate = OpenPathGate(),
                observers: [any RoundObserver] = [], clock: C, wallClock: @escaping @Sendable () -> Double = { unixNow() }) {
        specs = probes
        self.settings = settings
        self.path = path
        self.clock = clock
        self.wallClock = wallClock
        self.observers = observers
        concurrency = AsyncSemaphore(max(1, settings.maxConcurrentProbes))
        let now = wallClock()
        state = Mutex(State(
            overall: VerdictTracker(settings: settings.verdict, now: now),
            families: Dictionary(uniqueKeysWithValues: IPFamily.allCases.map { ($0, VerdictTracker(settings: settings.verdict, now: now)) }),
            uplinks: Dictionary(uniqueKeysWithValues: settings.uplinks.map { ($0, VerdictTracker(settings: settings.verdict, now: now)) })))
        var made: [String: any Prober] = [:]
        for spec in probes {
            made[Self.key(spec.name, nil)] = spec.make(nil)
            for uplink in settings.uplinks { made[Self.key(spec.name, uplink)] = spec.make(uplink) }
        }
        probers = made
    }

    static func key(_ name: String, _ interface: String?) -> String { interface.map { "\(name)@\($0)" } ?? name }

    /// The latest status, or nil before the first round.
    public var current: ReachabilityStatus? { state.withLock { $0.status } }

    /// A stream of statuses, one per round, for as long as the caller iterates it.
    public func updates() -> AsyncStream<ReachabilityStatus> {
        let (stream, continuation) = AsyncStream<ReachabilityStatus>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id: UInt64 = state.withLock { s in
            let id = s.nextSubscriber
            s.nextSubscriber += 1
            s.subscribers[id] = continuation
            if let status = s.status { continuation.yield(status) }
            return id
        }
        continuation.onTermination = { [weak self] _ in self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) } }
        return stream
    }

    /// Runs one round now (every probe at once, no stagger) and returns the resulting status.
    public func check() async -> ReachabilityStatus {
        await runRound(periodic: false)
    }

    /// Runs rounds until the task is cancelled.
    public func run() async {
        let inFlight = InFlightRound()
        let pathTask = Task { [path, trigger, clock, settings] in
            for await _ in path.changes() {
                try? await clock.sleep(for: settings.pathDebounce)
                if path.unsatisfiedReason(for: nil) != nil { inFlight.cancel() }
                trigger.fire()
            }
        }
        defer { pathTask.cancel() }
        var backoff = settings.fastRecheck
        var periodic = true
        while !Task.isCancelled {
            let status = await inFlight.run { [self, periodic] in await runRound(periodic: periodic) }
            if Task.isCancelled { break }
            var wait = settings.interval
            if status.state != .full && settings.fastRecheck > .zero {
                wait = min(backoff, settings.interval)
                backoff = min(backoff * 2, settings.interval)
            } else {
                backoff = settings.fastRecheck
            }
            let elapsed = status.roundDuration
            let remaining = wait > elapsed ? wait - elapsed : .zero
            let fired = await trigger.wait(for: remaining, clock: clock)
            // A path change re-probes at once, with no stagger; it also restarts the backoff.
            periodic = !fired
            if fired { backoff = settings.fastRecheck }
        }
    }

    /// One round: every due probe (per uplink too), then verdicts, observers and subscribers.
    @discardableResult
    func runRound(periodic: Bool) async -> ReachabilityStatus {
        await roundLock.lock()
        defer { roundLock.unlock() }
        let started = wallClock()
        let clockStart = clock.now
        let monotonicStart = ContinuousClock.now
        let jobs: [(spec: ProbeSpec, interface: String?)] = specs.flatMap { spec in
            [(spec, nil)] + settings.uplinks.map { (spec, $0) }
        }
        let due = state.withLock { s in
            jobs.filter { job in
                guard let interval = job.spec.interval, periodic, let last = s.lastRun[Self.key(job.spec.name, job.interface)] else { return true }
                return last.duration(to: monotonicStart) + .milliseconds(50) >= interval
            }
        }
        let staggerWindow = periodic && settings.stagger && due.count > 1
            ? max(.zero, settings.interval - settings.timeout) : .zero
        let outcomes: [ProbeOutcome] = await withTaskGroup(of: ProbeOutcome.self) { group in
            for (i, job) in due.enumerated() {
                let offset = staggerWindow * Double(i) / Double(due.count)
                group.addTask { [self] in
                    if offset > .zero { try? await clock.sleep(for: offset) }
                    return await runProbe(job.spec, interface: job.interface, at: started, due: clockStart.advanced(by: offset))
                }
            }
            var out: [ProbeOutcome] = []
            for await o in group { out.append(o) }
            return out
        }
        let roundDuration = clockStart.duration(to: clock.now)
        let finished = wallClock()
        let status: ReachabilityStatus = state.withLock { s in
            for o in outcomes {
                s.lastOutcome[Self.key(o.name, o.interface)] = o
                s.lastRun[Self.key(o.name, o.interface)] = monotonicStart
            }
            s.round += 1
            // Latest result of every probe (those not due this round keep their last one), in config order.
            let all = jobs.compactMap { s.lastOutcome[Self.key($0.spec.name, $0.interface)] }
            var transitions: [(String, Transition)] = []
            let routed = all.filter { $0.interface == nil }
            let overallRound = RoundClassifier.classify(pathUnsatisfiedReason: path.unsatisfiedReason(for: nil), entries: routed.map(Self.entry), policy: settings.verdict.policy)
            if let t = s.overall.update(overallRound, now: finished) { transitions.append(("overall", t)) }
            for family in IPFamily.allCases {
                let entries = routed.filter { self.family(of: $0) == family }.map(Self.entry)
                // A family with no probe of its own follows the path alone.
                let round = entries.isEmpty
                    ? (path.unsatisfiedReason(for: family).map { Verdict(.none, reason: $0) } ?? Verdict(.unknown))
                    : RoundClassifier.classify(pathUnsatisfiedReason: path.unsatisfiedReason(for: family), entries: entries, policy: settings.verdict.policy)
                if let t = s.families[family]?.update(round, now: finished) { transitions.append((family.rawValue, t)) }
            }
            for uplink in settings.uplinks {
                let entries = all.filter { $0.interface == uplink }.map(Self.entry)
                let round = RoundClassifier.classify(pathUnsatisfiedReason: path.unsatisfiedReason(interface: uplink), entries: entries, policy: settings.verdict.policy)
                if let t = s.uplinks[uplink]?.update(round, now: finished) { transitions.append((uplink, t)) }
            }
            let status = ReachabilityStatus(
                overall: ScopedVerdict(verdict: s.overall.current, since: s.overall.since),
                families: s.families.mapValues { ScopedVerdict(verdict: $0.current, since: $0.since) },
                uplinks: s.uplinks.mapValues { ScopedVerdict(verdict: $0.current, since: $0.since) },
                probes: all, roundStarted: started, roundDuration: roundDuration,
                transitions: transitions, round: s.round)
            s.status = status
            return status
        }
        for o in observers { o.roundCompleted(status) }
        for c in state.withLock({ Array($0.subscribers.values) }) { c.yield(status) }
        return status
    }

    private func runProbe(_ spec: ProbeSpec, interface: String?, at started: Double, due: C.Instant) async -> ProbeOutcome {
        let timeout = spec.timeout ?? settings.timeout
        let prober = probers[Self.key(spec.name, interface)]!
        let result: ProbeResult
        var lateness: Duration?
        // No usable path for this probe: fail at once, without traffic.
        if let reason = interface.flatMap({ path.unsatisfiedReason(interface: $0) }) ?? spec.family.flatMap({ path.unsatisfiedReason(for: $0) }) ?? path.unsatisfiedReason(for: nil) {
            result = .failure(.unreachable, "no path: \(reason)", duration: .zero)
        } else {
            await concurrency.acquire()
            lateness = max(.zero, due.duration(to: clock.now))
            result = await prober.probe(deadline: .now + timeout)
            concurrency.release()
        }
        return ProbeOutcome(name: spec.name, type: spec.type, target: spec.target, interface: interface, result: result, at: started, startLateness: lateness)
    }

    private func family(of o: ProbeOutcome) -> IPFamily? {
        specs.first { $0.name == o.name }?.family ?? o.result.family
    }

    private static func entry(_ o: ProbeOutcome) -> RoundEntry { RoundEntry(name: o.name, type: o.type, result: o.result) }

    /// Restores verdicts read back from history at start-up.
    public func restore(overall: Verdict, since: Double) {
        state.withLock { $0.overall.restore(overall, since: since) }
    }
}

extension ReachabilityMonitor where C == ContinuousClock {
    public convenience init(probes: [ProbeSpec], settings: MonitorSettings = MonitorSettings(), path: any PathGate = OpenPathGate(), observers: [any RoundObserver] = []) {
        self.init(probes: probes, settings: settings, path: path, observers: observers, clock: ContinuousClock())
    }
}

/// Wall-clock Unix seconds (CLOCK_REALTIME), for timestamps people and Prometheus read.
public func unixNow() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// A FIFO async mutex: rounds never overlap (a `check()` waits for a running round).
final class AsyncLock: Sendable {
    private let state = Mutex<(locked: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func lock() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let acquired: Bool = state.withLock { s in
                if !s.locked { s.locked = true; return true }
                s.waiters.append(c)
                return false
            }
            if acquired { c.resume() }
        }
    }

    func unlock() {
        let next: CheckedContinuation<Void, Never>? = state.withLock { s in
            if s.waiters.isEmpty { s.locked = false; return nil }
            return s.waiters.removeFirst()
        }
        next?.resume()
    }
}

/// Bounds how many probes run at once.
final class AsyncSemaphore: Sendable {
    private let state: Mutex<(available: Int, waiters: [CheckedContinuation<Void, Never>])>

    init(_ count: Int) { state = Mutex((count, [])) }

    func acquire() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let got: Bool = state.withLock { s in
                if s.available > 0 { s.available -= 1; return true }
                s.waiters.append(c)
                return false
            }
            if got { c.resume() }
        }
    }

    func release() {
        let next: CheckedContinuation<Void, Never>? = state.withLock { s in
            if s.waiters.isEmpty { s.available += 1; return nil }
            return s.waiters.removeFirst()
        }
        next?.resume()
    }
}
