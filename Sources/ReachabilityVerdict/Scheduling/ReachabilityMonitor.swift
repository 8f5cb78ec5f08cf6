import Synchronization

/// The scheduler: decides *when* probes run — in rounds on an interval (staggered, bounded in
/// concurrency, never overlapping themselves, each probe on its own interval if it has one),
/// at once when the path changes, faster while not `full` — with every instant from the
/// injected clock. Each round's outcomes go to the `VerdictEngine` (the verdicts), then to the
/// observers and to the subscribers (`updates()`, a `Broadcaster`).
///
/// `run()` in a task for continuous monitoring, `check()` for one round now.
///
/// `reconfigure(probes:settings:)` swaps probes and settings between rounds (configuration
/// reload); `maxConcurrentProbes` and `pathDebounce` are fixed at creation.
package final class ReachabilityMonitor<C: Clock>: Sendable where C.Duration == Duration {
    /// What the rounds run: replaced as a whole by `reconfigure`, read once per round.
    package struct Plan: Sendable {
        package var specs: [ProbeSpec]
        package var settings: MonitorSettings
        /// One prober per (probe, uplink), built once per plan so probers may keep state (sockets, contexts).
        package var probers: [ProbeKey: any Prober]
    }
    package let plan: Mutex<Plan>
    package let path: any PathGate
    package let clock: C
    private let wallClock: @Sendable () -> Double
    private let observers: [any RoundObserver]
    private let trigger = Trigger()
    package let roundLock = AsyncLock()
    /// The running round's stagger gate, and how many `reconfigure` calls wait for the round lock
    /// (while any does, rounds start every probe at once).
    private let stagger = Mutex<(gate: StaggerGate?, pendingReconfigures: Int)>((nil, 0))
    /// When the loop's latest round started (after it took the round lock), for its interval.
    private let latestRoundStart = Mutex<C.Instant?>(nil)
    package let concurrency: AsyncSemaphore
    /// Checks the gateway of a scope that is not full (nil: faults are located without it).
    package let gateways: (any GatewayProber)?
    /// The NAT64 prefixes its DNS probes learn (`NAT64Prefixes.round` in its rounds).
    package let nat64: NAT64Prefixes
    /// The captive-portal APIs of its scopes' interfaces (`ReachabilityMonitor+Captive`).
    package let captive: CaptivePortalWatch
    /// Passive evidence (`watch`): pauses a scope's probes while it vouches (`prefer`), tells
    /// which uplinks carry traffic.
    package let passive = Mutex<PassiveBoard?>(nil)
    /// What each uplink with a budget has used in its window.
    package let budgets: BudgetBook
    /// The last trace of each route and destination while its scope stays limited: traced again
    /// at most once per `traceInterval` (on `clock`), forgotten as soon as no scope needs the
    /// route. Each with whether the gateway answered echoes when it was made (nil: not checked).
    package let lastTraces = Mutex<[LastHopTraceKey: (at: C.Instant, trace: LastHopTrace?, gatewayAnswered: Bool?)]>([:]
    )

    private struct State {
        package var verdicts: VerdictEngine
        package var round = 0
        package var lastRun: [ProbeKey: C.Instant] = [:]
        package var lastOutcome: [ProbeKey: ProbeOutcome] = [:]
        package var recent: [ProbeKey: ProbeRecent] = [:]
    }
    private let state: Mutex<State>
    private let statuses = Broadcaster<ReachabilityStatus>()

    package init(
        probes: [ProbeSpec], settings: MonitorSettings = MonitorSettings(), path: any PathGate = OpenPathGate(),
        observers: [any RoundObserver] = [], clock: C, wallClock: @escaping @Sendable () -> Double = { unixNow() },
        gateways: (any GatewayProber)? = nil, budgets: BudgetBook = BudgetBook(),
        nat64: NAT64Prefixes = NAT64Prefixes(),
        captive: CaptivePortalWatch = CaptivePortalWatch()
    ) {
        let given = settings
        self.captive = captive
        self.budgets = budgets
        let settings = settings.adoptingRouteUplinks(path)
        self.gateways = gateways
        self.nat64 = nat64
        plan = Mutex(
            Plan(specs: probes, settings: settings, probers: Self.makeProbers(probes, settings: settings)))
        self.path = path
        self.clock = clock
        self.wallClock = wallClock
        self.observers = observers
        concurrency = AsyncSemaphore(max(1, settings.maxConcurrentProbes))
        state = Mutex(
            State(verdicts: VerdictEngine(settings: settings.verdict, uplinks: settings.uplinks, now: wallClock())))
        // Uplinks adopted from the path (`uplinks: auto`): the observers were made with the
        // configured list, so they hear of the adopted one before the first round.
        if settings.uplinks != given.uplinks {
            for o in observers { o.probesChanged(probes, settings: settings) }
        }
    }

    /// The probes and settings the next round runs with.
    package var configuration: (probes: [ProbeSpec], settings: MonitorSettings) {
        plan.withLock { ($0.specs, $0.settings) }
    }

    /// The latest status, or nil before the first round.
    package var current: ReachabilityStatus? { statuses.latest }

    /// A stream of statuses, one per round (the latest first), for as long as the caller
    /// iterates it; any number of subscribers, slow ones see the latest.
    package func updates() -> AsyncStream<ReachabilityStatus> { statuses.updates() }

    /// Runs one round now (every probe at once, no stagger) and returns the resulting status.
    package func check() async -> ReachabilityStatus {
        await runRound(periodic: false)
    }

    /// Starts a round now (as a path change does), unless one ran within the least gap.
    package func recheckNow() { trigger.fire() }

    /// Reads the host's own traffic from `board`: under `prefer` a scope's probes pause while
    /// its connections receive; an uplink carrying traffic runs at the global pace.
    package func watch(_ board: PassiveBoard) { passive.withLock { $0 = board } }

    /// Runs rounds until the task is cancelled.
    package func run() async {
        let debounce = plan.withLock { $0.settings.pathDebounce }
        let inFlight = InFlightRound()
        let pathTask = Task { [self, path, trigger, clock] in
            for await _ in path.changes() {
                try? await clock.sleep(for: debounce)
                if path.unsatisfiedReason(for: nil) != nil { inFlight.cancel() }
                await adoptRouteUplinks()
                trigger.fire()
            }
        }
        defer {
            pathTask.cancel()
            // A clean stop saves the budgets' counts (a restart then loses none of them).
            budgets.saveNow()
        }
        var backoff = plan.withLock { $0.settings.fastRecheck }
        var periodic = true
        var due: C.Instant?  // when the next periodic round should start (for the lateness histogram)
        while !Task.isCancelled {
            let loopStart = clock.now
            let status = await inFlight.run { [self, periodic, due] in
                await runRound(periodic: periodic, due: due, fromLoop: true)
            }
            let settings = plan.withLock { $0.settings }
            if Task.isCancelled { break }
            var wait = settings.interval
            if status.state != .full && settings.fastRecheck > .zero {
                wait = min(backoff, settings.interval)
                backoff = min(backoff * 2, settings.interval)
            } else {
                backoff = settings.fastRecheck
            }
            // From this round's start to now: the probes and also the verdicts, metrics, history
            // and subscribers after them, so rounds start on the interval however many probes
            // there are (not interval + that work: 10,000 probes lost 13 % of their rounds so).
            // Measured from the round's own start (`lastRun`), not from before it waited for the
            // round lock, so a probe with its own interval is not judged early after a reload.
            let roundStart = latestRoundStart.withLock { $0 } ?? loopStart
            let elapsed = (roundStart > loopStart ? roundStart : loopStart).duration(to: clock.now)
            let remaining = wait > elapsed ? wait - elapsed : .zero
            due = clock.now.advanced(by: remaining)
            let fired = await trigger.wait(for: remaining, clock: clock)
            let followsATriggeredRound = !periodic
            // A path change re-probes at once, with no stagger; it also restarts the backoff.
            periodic = !fired
            if fired {
                backoff = settings.fastRecheck
                // Triggers in a row (a flapping link, a reload loop) start rounds no closer than
                // the least gap: one at once, then at most one per gap.
                let gap = min(settings.minimumRoundGap, settings.interval)
                let since = roundStart.duration(to: clock.now)
                if followsATriggeredRound, since < gap, (try? await clock.sleep(for: gap - since)) == nil { break }
            }
        }
    }

    /// One round with `plan`, under the round lock (`runRound(periodic:due:fromLoop:)`).
    package func runRound(_ plan: Plan, periodic: Bool, due roundDue: C.Instant?, fromLoop: Bool) async
        -> ReachabilityStatus
    {
        let settings = plan.settings
        let started = wallClock()
        let clockStart = clock.now
        if fromLoop { latestRoundStart.withLock { $0 = clockStart } }
        let jobs: [(spec: ProbeSpec, interface: String?)] = plan.specs.flatMap { spec in
            settings.interfaces(of: spec).map { (spec, $0) }
        }
        let board = passive.withLock { $0 }
        let last = current
        let paces = UplinkPace.all(settings, book: budgets, last: last, passive: board, now: started)
        let due = state.withLock { s in
            DueJobs.select(
                jobs, lastRun: s.lastRun, now: clockStart, periodic: periodic, paces: paces, last: last,
                passive: board,
                maxPause: { scope in
                    // Two of the scope's own intervals: an uplink's longer one if it has one.
                    guard case .uplink(let u) = scope, let own = settings.uplinkIntervals[u] else {
                        return PassiveBoard.maxPause(interval: settings.interval)
                    }
                    return PassiveBoard.maxPause(interval: max(own, settings.interval))
                })
        }
        let gate = StaggerGate()
        let hurry = stagger.withLock { s in
            s.gate = gate
            return s.pendingReconfigures > 0
        }
        let staggerWindow =
            periodic && settings.stagger && due.count > 1 && !hurry
            ? max(.zero, settings.interval - settings.timeout) : .zero
        let batches = StaggerBatches.plan(count: due.count, window: staggerWindow)
        let width = max(1, settings.maxConcurrentProbes)
        // The network's captive-portal APIs are read beside the probes, within their timeout.
        async let portals = refreshCaptivePortals(settings, now: started)
        let raw: [ProbeOutcome] = await withTaskGroup(of: [ProbeOutcome].self) { group in
            for (offset, indices) in batches {
                group.addTask { [self] in
                    if offset > .zero { await gate.wait(for: offset, clock: clock) }
                    return await runSlot(
                        indices.map { due[$0] }, plan: plan, at: started,
                        due: (periodic ? roundDue ?? clockStart : clockStart).advanced(by: offset), width: width)
                }
            }
            var out: [ProbeOutcome] = []
            for await o in group { out.append(contentsOf: o) }
            return out
        }
        let roundDuration = clockStart.duration(to: clock.now)
        let finished = wallClock()
        let specs = Dictionary(plan.specs.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let captivePortals = await portals
        let facts = PathFacts(path, captive: Set(captivePortals.filter(\.captive).map(\.interface)))
        let outcomes = raw.map { OnPathCheck.review($0, isLocal: facts.isLocal) }
        let (decided, scopeEntries): (ReachabilityStatus, [Scope: [RoundEntry]]) = state.withLock { s in
            for o in outcomes {
                let key = ProbeKey(o.name, o.interface)
                s.recent[key, default: ProbeRecent()].record(o)
                s.lastOutcome[key] = s.recent[key]!.annotate(o)
                s.lastRun[key] = clockStart
            }
            s.round += 1
            // Latest result of every probe (those not due this round keep their last one), in config order.
            let all = jobs.compactMap { s.lastOutcome[ProbeKey($0.spec.name, $0.interface)] }
            let pending = Set(
                settings.uplinks.filter { u in
                    jobs.contains { $0.interface == u } && !all.contains { $0.interface == u }
                }.map(Scope.uplink))
            let transitions = s.verdicts.decide(
                all, specs: specs, path: facts, now: finished, roundStart: started, pending: pending)
            var status = ReachabilityStatus(
                overall: s.verdicts.overallVerdict, families: s.verdicts.familyVerdicts,
                uplinks: s.verdicts.uplinkVerdicts,
                probes: all, roundStarted: started, roundDuration: roundDuration,
                transitions: transitions.map { ScopeTransition($0.0, $0.1) }, round: s.round,
                interval: settings.interval, connectionType: path.connectionType)
            status.doubted = s.verdicts.doubted
            return (status, s.verdicts.lastEntries)
        }
        var status = decided
        status.nat64Prefixes = nat64.current
        status.captivePortals = captivePortals
        status.captivePortalErrors = captive.errors
        status.captivePortalIgnored = captive.ignoredHookFiles
        var meters: [String: TrafficMeter] = [:]
        status.faults = await locateFaults(
            status, entries: scopeEntries, uplinks: settings.uplinks, timeout: settings.timeout, meters: &meters,
            spent: Set(paces.filter { $0.value.cause == "exhausted" }.keys))
        status.traffic = RoundTraffic.charge(
            outcomes, locator: meters.mapValues(\.total), defaultRoute: path.gatewayRoute(for: .overall)?.interface)
        budgets.charge(
            status.traffic, ownRounds: RoundTraffic.ownRounds(outcomes), budgets: settings.uplinkBudgets, now: finished)
        status.uplinkPaces = UplinkPace.all(settings, book: budgets, last: status, passive: board, now: finished)
        for o in observers { o.roundCompleted(status) }
        statuses.publish(status)
        return status
    }

    /// Restores verdicts read back from history at start-up.
    package func restore(
        overall: Verdict, since: Double, families: [IPFamily: ScopedVerdict] = [:],
        uplinks: [String: ScopedVerdict] = [:]
    ) {
        state.withLock { $0.verdicts.restore(overall: overall, since: since, families: families, uplinks: uplinks) }
    }

    /// Replaces the probes and settings between rounds (a configuration reload): waits for a
    /// running round to finish (its staggered starts begin at once), swaps, tells the observers
    /// (`RoundObserver.probesChanged`), and wakes the scheduler so a round with the new probes
    /// runs at once (unless `runRound` is false: a reload that changed nothing).
    ///
    /// - Probers are built afresh for every probe (the specs carry no identity to compare).
    /// - Verdict trackers (overall, per family, per kept uplink) keep their state and streaks when
    ///   the hysteresis settings are unchanged; when they change, each keeps its verdict and
    ///   `since` but starts new streaks under the new settings.
    /// - Uplinks added get a tracker (`unknown` until their first round); removed ones are dropped.
    /// - Remembered results of removed probes, and of probes whose type, target or family changed,
    ///   are dropped, so no round mixes in an answer from the old configuration.
    /// - `maxConcurrentProbes` and `pathDebounce` keep their values from creation.
    /// Returns the settings applied (under `uplinks: auto`, with the uplinks adopted then); a
    /// round also runs when the uplinks changed.
    @discardableResult
    package func reconfigure(probes: [ProbeSpec], settings: MonitorSettings, runRound: Bool = true) async
        -> MonitorSettings
    {
        await withRoundLock { old in
            let next = settings.adoptingRouteUplinks(path)
            replacePlan(old: old, probes: probes, settings: next)
            if runRound || next.uplinks != old.settings.uplinks { trigger.fire() }
            return next
        }
    }

    /// Under `uplinks: auto`, adds the interfaces that gained a default route to the plan as it
    /// is once the running round ends (so a reload waiting for that round is never undone), and
    /// tells the observers which; none is dropped here.
    package func adoptRouteUplinks() async {
        let adopted: (added: [String], uplinks: [String])? = await withRoundLock { old in
            let next = old.settings.adoptingRouteUplinks(path)
            guard next.uplinks != old.settings.uplinks else { return nil }
            replacePlan(old: old, probes: old.specs, settings: next)
            return (next.uplinks.filter { !old.settings.uplinks.contains($0) }, next.uplinks)
        }
        guard let adopted else { return }
        for o in observers { o.uplinksAdopted(adopted.added, uplinks: adopted.uplinks) }
    }

    /// Runs `body` with the plan as it is once the running round has ended and no other change
    /// is being made (probes in flight finish; staggered starts still waiting begin now).
    private func withRoundLock<T>(_ body: (Plan) -> T) async -> T {
        stagger.withLock { s in
            s.pendingReconfigures += 1
            s.gate?.open()
        }
        await roundLock.lock()
        defer {
            stagger.withLock { $0.pendingReconfigures -= 1 }
            roundLock.unlock()
        }
        return body(plan.withLock { $0 })
    }

    /// Swaps the plan (the caller holds the round lock) and tells the observers.
    private func replacePlan(old: Plan, probes: [ProbeSpec], settings: MonitorSettings) {
        let probers = Self.makeProbers(probes, settings: settings)
        let now = wallClock()
        state.withLock { s in
            s.verdicts.reconfigure(settings: settings.verdict, uplinks: settings.uplinks, now: now)
            let kept = Set(
                probes.compactMap { spec -> String? in
                    guard let before = old.specs.first(where: { $0.name == spec.name }),
                        before.type == spec.type, before.target == spec.target, before.family == spec.family
                    else { return nil }
                    return spec.name
                })
            let keys = Set(
                probes.filter { kept.contains($0.name) }.flatMap { spec in
                    settings.interfaces(of: spec).map { ProbeKey(spec.name, $0) }
                })
            s.lastOutcome = s.lastOutcome.filter { keys.contains($0.key) }
            s.lastRun = s.lastRun.filter { keys.contains($0.key) }
            s.recent = s.recent.filter { keys.contains($0.key) }
        }
        plan.withLock { $0 = Plan(specs: probes, settings: settings, probers: probers) }
        for o in observers { o.probesChanged(probes, settings: settings) }
    }
}

/// One probe on one interface (nil: the routing table's choice): what probers, results and
/// schedules are kept by.
package struct ProbeKey: Hashable, Sendable {
    package var name: String
    package var interface: String?
    package init(_ name: String, _ interface: String?) {
        self.name = name
        self.interface = interface
    }
}

extension ReachabilityMonitor where C == ContinuousClock {
    package convenience init(
        probes: [ProbeSpec], settings: MonitorSettings = MonitorSettings(), path: any PathGate = OpenPathGate(),
        observers: [any RoundObserver] = [], gateways: (any GatewayProber)? = nil, budgets: BudgetBook = BudgetBook(),
        nat64: NAT64Prefixes = NAT64Prefixes(), captive: CaptivePortalWatch = CaptivePortalWatch()
    ) {
        self.init(
            probes: probes, settings: settings, path: path, observers: observers, clock: ContinuousClock(),
            gateways: gateways, budgets: budgets, nat64: nat64, captive: captive)
    }
}

/// The monitor's rounds as a `Service` (`scheduler`): `run()` until cancelled.
extension ReachabilityMonitor: Service {
    package var name: String { "scheduler" }
}
