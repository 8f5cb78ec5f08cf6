import Synchronization

/// The scheduler and the verdict keeper: runs the probes in rounds on an interval (staggered,
/// bounded in concurrency, never overlapping themselves), re-probes at once when the path
/// changes, re-checks faster while not `full`, and turns each round into verdicts with
/// hysteresis — overall, per IP family and per uplink.
///
/// This is the library's embedding API: `run()` in a task for continuous monitoring, `check()`
/// for one round now, `updates()` for a stream of statuses that any number of subscribers can
/// iterate (each gets its own stream; slow ones see the latest).
///
/// `reconfigure(probes:settings:)` swaps probes and settings between rounds (configuration
/// reload); `maxConcurrentProbes` and `pathDebounce` are fixed at creation.
package final class ReachabilityMonitor<C: Clock>: Sendable where C.Duration == Duration {
    /// What the rounds run: replaced as a whole by `reconfigure`, read once per round.
    private struct Plan: Sendable {
        var specs: [ProbeSpec]
        var settings: MonitorSettings
        /// One prober per (probe, uplink), built once per plan so probers may keep state (sockets, contexts).
        var probers: [String: any Prober]
    }
    private let plan: Mutex<Plan>
    private let path: any PathGate
    private let clock: C
    private let wallClock: @Sendable () -> Double
    private let observers: [any RoundObserver]
    private let trigger = Trigger()
    private let roundLock = AsyncLock()
    /// The running round's stagger gate, and how many `reconfigure` calls wait for the round lock
    /// (while any does, rounds start every probe at once).
    private let stagger = Mutex<(gate: StaggerGate?, pendingReconfigures: Int)>((nil, 0))
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
        var recent: [String: ProbeRecent] = [:]
    }
    private let state: Mutex<State>

    package init(
        probes: [ProbeSpec], settings: MonitorSettings = MonitorSettings(), path: any PathGate = OpenPathGate(),
        observers: [any RoundObserver] = [], clock: C, wallClock: @escaping @Sendable () -> Double = { unixNow() }
    ) {
        plan = Mutex(
            Plan(specs: probes, settings: settings, probers: Self.makeProbers(probes, uplinks: settings.uplinks)))
        self.path = path
        self.clock = clock
        self.wallClock = wallClock
        self.observers = observers
        concurrency = AsyncSemaphore(max(1, settings.maxConcurrentProbes))
        let now = wallClock()
        state = Mutex(
            State(
                overall: VerdictTracker(settings: settings.verdict, now: now),
                families: Dictionary(
                    uniqueKeysWithValues: IPFamily.allCases.map {
                        ($0, VerdictTracker(settings: settings.verdict, now: now))
                    }),
                uplinks: Dictionary(
                    uniqueKeysWithValues: settings.uplinks.map {
                        ($0, VerdictTracker(settings: settings.verdict, now: now))
                    })))
    }

    private static func makeProbers(_ specs: [ProbeSpec], uplinks: [String]) -> [String: any Prober] {
        var made: [String: any Prober] = [:]
        for spec in specs {
            for interface in spec.interfaces(uplinks) {
                made[key(spec.name, interface)] = spec.prober(bound: interface)
            }
        }
        return made
    }

    static func key(_ name: String, _ interface: String?) -> String { interface.map { "\(name)@\($0)" } ?? name }

    /// The latest status, or nil before the first round.
    package var current: ReachabilityStatus? { state.withLock { $0.status } }

    /// A stream of statuses, one per round, for as long as the caller iterates it.
    package func updates() -> AsyncStream<ReachabilityStatus> {
        let (stream, continuation) = AsyncStream<ReachabilityStatus>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id: UInt64 = state.withLock { s in
            let id = s.nextSubscriber
            s.nextSubscriber += 1
            s.subscribers[id] = continuation
            if let status = s.status { continuation.yield(status) }
            return id
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Runs one round now (every probe at once, no stagger) and returns the resulting status.
    package func check() async -> ReachabilityStatus {
        await runRound(periodic: false)
    }

    /// Runs rounds until the task is cancelled.
    package func run() async {
        let debounce = plan.withLock { $0.settings.pathDebounce }
        let inFlight = InFlightRound()
        let pathTask = Task { [path, trigger, clock] in
            for await _ in path.changes() {
                try? await clock.sleep(for: debounce)
                if path.unsatisfiedReason(for: nil) != nil { inFlight.cancel() }
                trigger.fire()
            }
        }
        defer { pathTask.cancel() }
        var backoff = plan.withLock { $0.settings.fastRecheck }
        var periodic = true
        var due: C.Instant?  // when the next periodic round should start (for the lateness histogram)
        while !Task.isCancelled {
            let status = await inFlight.run { [self, periodic, due] in await runRound(periodic: periodic, due: due) }
            let settings = plan.withLock { $0.settings }
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
            due = clock.now.advanced(by: remaining)
            let fired = await trigger.wait(for: remaining, clock: clock)
            // A path change re-probes at once, with no stagger; it also restarts the backoff.
            periodic = !fired
            if fired { backoff = settings.fastRecheck }
        }
    }

    /// One round: every due probe (per uplink too), then verdicts, observers and subscribers.
    @discardableResult
    func runRound(periodic: Bool, due roundDue: C.Instant? = nil) async -> ReachabilityStatus {
        await roundLock.lock()
        defer { roundLock.unlock() }
        let plan = self.plan.withLock { $0 }
        let settings = plan.settings
        let started = wallClock()
        let clockStart = clock.now
        let monotonicStart = ContinuousClock.now
        let jobs: [(spec: ProbeSpec, interface: String?)] = plan.specs.flatMap { spec in
            spec.interfaces(settings.uplinks).map { (spec, $0) }
        }
        let due = state.withLock { s in
            jobs.filter { job in
                guard let interval = job.spec.interval, periodic,
                    let last = s.lastRun[Self.key(job.spec.name, job.interface)]
                else { return true }
                return last.duration(to: monotonicStart) + .milliseconds(50) >= interval
            }
        }
        let gate = StaggerGate()
        let hurry = stagger.withLock { s in
            s.gate = gate
            return s.pendingReconfigures > 0
        }
        let staggerWindow =
            periodic && settings.stagger && due.count > 1 && !hurry
            ? max(.zero, settings.interval - settings.timeout) : .zero
        let outcomes: [ProbeOutcome] = await withTaskGroup(of: ProbeOutcome.self) { group in
            for (i, job) in due.enumerated() {
                let offset = staggerWindow * Double(i) / Double(due.count)
                group.addTask { [self] in
                    if offset > .zero { await gate.wait(for: offset, clock: clock) }
                    return await runProbe(
                        job.spec, interface: job.interface, plan: plan, at: started,
                        due: (periodic ? roundDue ?? clockStart : clockStart).advanced(by: offset))
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
                let key = Self.key(o.name, o.interface)
                s.recent[key, default: ProbeRecent()].record(o)
                s.lastOutcome[key] = s.recent[key]!.annotate(o)
                s.lastRun[key] = monotonicStart
            }
            s.round += 1
            // Latest result of every probe (those not due this round keep their last one), in config order.
            let all = jobs.compactMap { s.lastOutcome[Self.key($0.spec.name, $0.interface)] }
            var transitions: [(String, Transition)] = []
            let specs = Dictionary(plan.specs.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            let policy = settings.verdict.policy
            let routed = all.filter { $0.interface == nil }
            let routedEntries = routed.map { entry($0, spec: specs[$0.name], verdict: settings.verdict) }
            var familyRounds: [Verdict] = []
            for family in IPFamily.allCases {
                let entries = zip(routed, routedEntries).filter {
                    (specs[$0.0.name]?.family ?? $0.0.result.family) == family
                }.map(\.1)
                // A family with no probe of its own follows the path alone.
                let round =
                    entries.isEmpty
                    ? (path.unsatisfiedReason(for: family).map { Verdict(.none, reason: $0) } ?? Verdict(.unknown))
                    : RoundClassifier.classify(
                        pathUnsatisfiedReason: path.unsatisfiedReason(for: family), entries: entries, policy: policy,
                        familyScope: true)
                familyRounds.append(round)
                if let t = s.families[family]?.update(round, now: finished) { transitions.append((family.rawValue, t)) }
            }
            // Scopes agree: the overall verdict is never full while every family that was
            // decided is worse, neither in this round nor after hysteresis.
            var overallRound = RoundClassifier.classify(
                pathUnsatisfiedReason: path.unsatisfiedReason(for: nil), entries: routedEntries, policy: policy)
            if overallRound.state == .full, let best = Self.bestDecided(familyRounds), best.state != .full {
                overallRound = best
            }
            var overallTransitions: [(String, Transition)] = []
            if let t = s.overall.update(overallRound, now: finished) { overallTransitions.append(("overall", t)) }
            if let best = Self.bestDecided(IPFamily.allCases.compactMap { s.families[$0]?.current }),
                best.state != .full,
                let t = s.overall.cap(at: best, now: finished)
            {
                overallTransitions.append(("overall", t))
            }
            transitions.insert(contentsOf: overallTransitions, at: 0)
            for uplink in settings.uplinks {
                let entries = all.filter { $0.interface == uplink }.map {
                    entry($0, spec: specs[$0.name], verdict: settings.verdict)
                }
                let round = RoundClassifier.classify(
                    pathUnsatisfiedReason: path.unsatisfiedReason(interface: uplink), entries: entries, policy: policy)
                if let t = s.uplinks[uplink]?.update(round, now: finished) { transitions.append((uplink, t)) }
            }
            let status = ReachabilityStatus(
                overall: ScopedVerdict(verdict: s.overall.current, since: s.overall.since),
                families: s.families.mapValues { ScopedVerdict(verdict: $0.current, since: $0.since) },
                uplinks: s.uplinks.mapValues { ScopedVerdict(verdict: $0.current, since: $0.since) },
                probes: all, roundStarted: started, roundDuration: roundDuration,
                transitions: transitions, round: s.round, interval: settings.interval,
                connectionType: path.connectionType)
            s.status = status
            return status
        }
        for o in observers { o.roundCompleted(status) }
        for c in state.withLock({ Array($0.subscribers.values) }) { c.yield(status) }
        return status
    }

    private func runProbe(_ spec: ProbeSpec, interface: String?, plan: Plan, at started: Double, due: C.Instant) async
        -> ProbeOutcome
    {
        let timeout = spec.timeout ?? plan.settings.timeout
        let prober = plan.probers[Self.key(spec.name, interface)]!
        let result: ProbeResult
        var lateness: Duration?
        // No usable path for this probe: fail at once, without traffic.
        if let reason = interface.flatMap({ path.unsatisfiedReason(interface: $0) }) ?? spec.family.flatMap({
            path.unsatisfiedReason(for: $0)
        }) ?? path.unsatisfiedReason(for: nil) {
            result = .failure(.unreachable, "no path: \(reason)", duration: .zero)
        } else {
            await concurrency.acquire()
            lateness = max(.zero, due.duration(to: clock.now))
            result = await prober.probe(deadline: .now + timeout)
            concurrency.release()
        }
        return ProbeOutcome(
            name: spec.name, type: spec.type, target: spec.target, interface: interface, result: result, at: started,
            startLateness: lateness)
    }

    /// The round entry of an outcome, with its evidence: the probe's own (`ProbeSpec.evidence`),
    /// made `local` when the answer came from an address on the local network.
    private func entry(_ o: ProbeOutcome, spec: ProbeSpec?, verdict: VerdictSettings) -> RoundEntry {
        var evidence = spec?.evidence ?? Evidence.typical(of: o.type)
        if evidence == .internet, !verdict.trustLocalTargets, let address = o.result.address,
            path.isLocal(address: address)
        {
            evidence = .local
        }
        return RoundEntry(name: o.name, type: o.type, result: o.result, evidence: evidence)
    }

    /// The best of the verdicts that are decided (not `unknown`); nil when none is.
    static func bestDecided(_ verdicts: [Verdict]) -> Verdict? {
        var best: Verdict?
        for v in verdicts where v.state != .unknown && (best == nil || v.state > best!.state) { best = v }
        return best
    }

    /// Restores verdicts read back from history at start-up.
    package func restore(
        overall: Verdict, since: Double, families: [IPFamily: ScopedVerdict] = [:],
        uplinks: [String: ScopedVerdict] = [:]
    ) {
        state.withLock { s in
            s.overall.restore(overall, since: since)
            // Uplinks this configuration no longer has are not revived. Families always exist: one
            // that no probe answers any more (the configuration changed across the restart) shows its
            // restored verdict until `fail_after` rounds of `unknown` replace it.
            for (family, v) in families where v.verdict.state != .unknown {
                s.families[family]?.restore(v.verdict, since: v.since)
            }
            for (uplink, v) in uplinks where v.verdict.state != .unknown {
                s.uplinks[uplink]?.restore(v.verdict, since: v.since)
            }
        }
    }

    /// Replaces the probes and settings between rounds (a configuration reload): waits for a
    /// running round to finish (its staggered starts begin at once), swaps, tells the observers
    /// (`RoundObserver.probesChanged`), and wakes the scheduler so a round with the new probes
    /// runs at once.
    ///
    /// - Probers are built afresh for every probe (the specs carry no identity to compare).
    /// - Verdict trackers (overall, per family, per kept uplink) keep their state and streaks when
    ///   the hysteresis settings are unchanged; when they change, each keeps its verdict and
    ///   `since` but starts new streaks under the new settings.
    /// - Uplinks added get a tracker (`unknown` until their first round); removed ones are dropped.
    /// - Remembered results of removed probes, and of probes whose type, target or family changed,
    ///   are dropped, so no round mixes in an answer from the old configuration.
    /// - `maxConcurrentProbes` and `pathDebounce` keep their values from creation.
    package func reconfigure(probes: [ProbeSpec], settings: MonitorSettings) async {
        // Probes in flight finish; staggered starts still waiting begin now.
        stagger.withLock { s in
            s.pendingReconfigures += 1
            s.gate?.open()
        }
        await roundLock.lock()
        defer {
            stagger.withLock { $0.pendingReconfigures -= 1 }
            roundLock.unlock()
        }
        let old = plan.withLock { $0 }
        let probers = Self.makeProbers(probes, uplinks: settings.uplinks)
        let now = wallClock()
        state.withLock { s in
            if settings.verdict != old.settings.verdict {
                s.overall = Self.carried(s.overall, settings.verdict, now: now)
                for family in IPFamily.allCases {
                    s.families[family] = s.families[family].map { Self.carried($0, settings.verdict, now: now) }
                }
                for (uplink, tracker) in s.uplinks {
                    s.uplinks[uplink] = Self.carried(tracker, settings.verdict, now: now)
                }
            }
            for uplink in s.uplinks.keys where !settings.uplinks.contains(uplink) {
                s.uplinks.removeValue(forKey: uplink)
            }
            for uplink in settings.uplinks where s.uplinks[uplink] == nil {
                s.uplinks[uplink] = VerdictTracker(settings: settings.verdict, now: now)
            }
            let kept = Set(
                probes.compactMap { spec -> String? in
                    guard let before = old.specs.first(where: { $0.name == spec.name }),
                        before.type == spec.type, before.target == spec.target, before.family == spec.family
                    else { return nil }
                    return spec.name
                })
            let keys = Set(
                probes.filter { kept.contains($0.name) }.flatMap { spec in
                    spec.interfaces(settings.uplinks).map { Self.key(spec.name, $0) }
                })
            s.lastOutcome = s.lastOutcome.filter { keys.contains($0.key) }
            s.lastRun = s.lastRun.filter { keys.contains($0.key) }
            s.recent = s.recent.filter { keys.contains($0.key) }
        }
        plan.withLock { $0 = Plan(specs: probes, settings: settings, probers: probers) }
        for o in observers { o.probesChanged(probes, settings: settings) }
        trigger.fire()
    }

    /// A tracker under new settings that keeps the old one's verdict and its start.
    private static func carried(_ tracker: VerdictTracker, _ settings: VerdictSettings, now: Double) -> VerdictTracker {
        var t = VerdictTracker(settings: settings, now: now)
        t.restore(tracker.current, since: tracker.since)
        return t
    }
}

extension ReachabilityMonitor where C == ContinuousClock {
    package convenience init(
        probes: [ProbeSpec], settings: MonitorSettings = MonitorSettings(), path: any PathGate = OpenPathGate(),
        observers: [any RoundObserver] = []
    ) {
        self.init(probes: probes, settings: settings, path: path, observers: observers, clock: ContinuousClock())
    }
}

/// A FIFO async mutex: rounds never overlap (a `check()` waits for a running round).
final class AsyncLock: Sendable {
    private let state = Mutex<(locked: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func lock() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let acquired: Bool = state.withLock { s in
                if !s.locked {
                    s.locked = true
                    return true
                }
                s.waiters.append(c)
                return false
            }
            if acquired { c.resume() }
        }
    }

    func unlock() {
        let next: CheckedContinuation<Void, Never>? = state.withLock { s in
            if s.waiters.isEmpty {
                s.locked = false
                return nil
            }
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
                if s.available > 0 {
                    s.available -= 1
                    return true
                }
                s.waiters.append(c)
                return false
            }
            if got { c.resume() }
        }
    }

    func release() {
        let next: CheckedContinuation<Void, Never>? = state.withLock { s in
            if s.waiters.isEmpty {
                s.available += 1
                return nil
            }
            return s.waiters.removeFirst()
        }
        next?.resume()
    }
}
