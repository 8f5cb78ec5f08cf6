/// What the verdict engine needs to know of the path when a round ends.
package struct PathFacts {
    /// Why the scope has no usable path, or nil.
    package var unsatisfied: (Scope) -> PathUnsatisfiedReason?
    /// Whether an answer from the address may have come from the local network.
    package var isLocal: (String) -> Bool
    /// Whether the network's captive-portal API says the scope's interface is held captive.
    package var announcedCaptive: (Scope) -> Bool

    package init(
        unsatisfied: @escaping (Scope) -> PathUnsatisfiedReason?, isLocal: @escaping (String) -> Bool,
        announcedCaptive: @escaping (Scope) -> Bool = { _ in false }
    ) {
        self.unsatisfied = unsatisfied
        self.isLocal = isLocal
        self.announcedCaptive = announcedCaptive
    }
}

/// Turns a round's probe outcomes and the path into verdicts per scope, with hysteresis: the
/// evidence of each result (`Evidence`), the round's classification (`RoundClassifier`), the
/// agreement of the overall scope with the families, and one `VerdictTracker` per scope.
///
/// Pure: no clock, no I/O, no lock; the caller passes the time and keeps the value. Not for
/// deciding when rounds run (that is the scheduler, `ReachabilityMonitor`).
package struct VerdictEngine: Sendable {
    private(set) var settings: VerdictSettings
    private var overall: VerdictTracker
    private var families: [IPFamily: VerdictTracker]
    /// In configuration order (the order of their transitions).
    private var uplinkOrder: [String]
    private var uplinks: [String: VerdictTracker]
    /// The latest round's entries of each scope, with their evidence (for `FaultLocator`).
    package private(set) var lastEntries: [Scope: [RoundEntry]] = [:]

    package init(settings: VerdictSettings, uplinks: [String], now: Double) {
        self.settings = settings
        overall = VerdictTracker(settings: settings, now: now)
        families = Dictionary(
            uniqueKeysWithValues: IPFamily.allCases.map { ($0, VerdictTracker(settings: settings, now: now)) })
        uplinkOrder = uplinks
        self.uplinks = Dictionary(
            uniqueKeysWithValues: uplinks.map { ($0, VerdictTracker(settings: settings, now: now)) })
    }

    package var overallVerdict: ScopedVerdict { Self.scoped(overall) }
    /// Scopes that are `full` only because hysteresis holds it: their latest decided round was
    /// not full. Passive evidence does not pause their probes (the probes are deciding).
    package var doubted: Set<Scope> {
        var out: Set<Scope> = []
        if overall.isDoubted { out.insert(.overall) }
        for (f, t) in families where t.isDoubted { out.insert(.family(f)) }
        for (u, t) in uplinks where t.isDoubted { out.insert(.uplink(u)) }
        return out
    }
    package var familyVerdicts: [IPFamily: ScopedVerdict] { families.mapValues(Self.scoped) }
    package var uplinkVerdicts: [String: ScopedVerdict] { uplinks.mapValues(Self.scoped) }

    private static func scoped(_ t: VerdictTracker) -> ScopedVerdict {
        ScopedVerdict(verdict: t.current, since: t.since)
    }

    /// Decides one round from the latest outcome of every probe (`probes`, routed and bound);
    /// returns the transitions it caused: overall first, then the families, then the uplinks.
    ///
    /// `roundStart` (the round's start, as in `ProbeOutcome.at`) tells which outcomes this round
    /// produced: a scope none of whose probes ran in it (an uplink on a longer interval, a spent
    /// budget, probes paused by passive evidence) keeps its verdict and its streaks, so
    /// `failAfter` and `recoverAfter` count the scope's own rounds, not the rounds of others that
    /// re-read its last results. A scope whose path is gone is decided (`none`) all the same.
    /// Nil: every outcome is this round's (a one-shot check, tests).
    package mutating func decide(
        _ probes: [ProbeOutcome], specs: [String: ProbeSpec], path: PathFacts, now: Double, roundStart: Double? = nil,
        pending: Set<Scope> = []
    ) -> [(Scope, Transition)] {
        let policy = settings.policy
        /// Whether a scope with these outcomes is decided in this round. `pending`: scopes whose
        /// probes exist but have never run (an uplink whose budget was spent before a restart),
        /// kept as restored instead of decided from no probes.
        func decides(_ outcomes: [ProbeOutcome], _ scope: Scope) -> Bool {
            guard path.unsatisfied(scope) == nil, !path.announcedCaptive(scope) else { return true }
            if outcomes.isEmpty { return !pending.contains(scope) }
            guard let roundStart else { return true }
            // A probe that was due but had no path (not run) still decides: its scope cannot
            // reach what it probes now, as before.
            return outcomes.contains { $0.at >= roundStart }
        }
        let routed = probes.filter { $0.interface == nil }
        let routedEntries = routed.map { entry($0, spec: specs[$0.name], path: path) }
        lastEntries = [.overall: routedEntries]
        var familyTransitions: [(Scope, Transition)] = []
        var familyRounds: [Verdict] = []
        for family in IPFamily.allCases {
            let pairs = zip(routed, routedEntries).filter {
                (specs[$0.0.name]?.family ?? $0.0.result.family) == family
            }
            let entries = pairs.map(\.1)
            lastEntries[.family(family)] = entries
            let reason = path.unsatisfied(.family(family))
            // A family with no probe of its own follows the path alone.
            let round =
                entries.isEmpty && !path.announcedCaptive(.family(family))
                ? (reason.map { Verdict(.none, reason: .path($0)) } ?? Verdict(.unknown))
                : RoundClassifier.classify(
                    pathUnsatisfiedReason: reason, entries: entries, policy: policy, familyScope: true,
                    announcedCaptive: path.announcedCaptive(.family(family)))
            familyRounds.append(round)
            guard decides(pairs.map(\.0), .family(family)) else { continue }
            if let t = families[family]?.update(round, now: now) { familyTransitions.append((.family(family), t)) }
        }
        // Scopes agree: the overall verdict is never full while every family that was decided
        // is worse, neither in this round nor after hysteresis.
        var transitions: [(Scope, Transition)] = []
        var overallRound = RoundClassifier.classify(
            pathUnsatisfiedReason: path.unsatisfied(.overall), entries: routedEntries, policy: policy,
            announcedCaptive: path.announcedCaptive(.overall))
        if overallRound.state == .full, let best = Self.bestDecided(familyRounds), best.state != .full {
            overallRound = best
        }
        if decides(routed, .overall), let t = overall.update(overallRound, now: now) {
            transitions.append((.overall, t))
        }
        if let best = Self.bestDecided(IPFamily.allCases.compactMap { families[$0]?.current }), best.state != .full,
            let t = overall.cap(at: best, now: now)
        {
            transitions.append((.overall, t))
        }
        transitions += familyTransitions
        for uplink in uplinkOrder {
            let bound = probes.filter { $0.interface == uplink }
            let entries = bound.map { entry($0, spec: specs[$0.name], path: path) }
            lastEntries[.uplink(uplink)] = entries
            guard decides(bound, .uplink(uplink)) else { continue }
            let round = RoundClassifier.classify(
                pathUnsatisfiedReason: path.unsatisfied(.uplink(uplink)), entries: entries, policy: policy,
                announcedCaptive: path.announcedCaptive(.uplink(uplink)))
            if let t = uplinks[uplink]?.update(round, now: now) { transitions.append((.uplink(uplink), t)) }
        }
        return transitions
    }

    /// The round entry of an outcome, with its evidence: the probe's own (`ProbeSpec.evidence`),
    /// made `local` when the answer came from an address on the local network.
    private func entry(_ o: ProbeOutcome, spec: ProbeSpec?, path: PathFacts) -> RoundEntry {
        var evidence = spec?.evidence ?? Evidence.typical(of: o.type)
        if evidence == .internet, !settings.trustLocalTargets, let address = o.result.address, path.isLocal(address) {
            evidence = .local
        }
        return RoundEntry(name: o.name, type: o.type, result: o.result, evidence: evidence)
    }

    /// The best of the verdicts that are decided (not `unknown`); nil when none is.
    package static func bestDecided(_ verdicts: [Verdict]) -> Verdict? {
        var best: Verdict?
        for v in verdicts where v.state != .unknown && (best == nil || v.state > best!.state) { best = v }
        return best
    }

    /// Restores verdicts read back from history at start-up. Uplinks this configuration no
    /// longer has are not revived. Families always exist: one that no probe answers any more
    /// shows its restored verdict until `fail_after` rounds of `unknown` replace it.
    package mutating func restore(
        overall verdict: Verdict, since: Double, families restored: [IPFamily: ScopedVerdict],
        uplinks restoredUplinks: [String: ScopedVerdict]
    ) {
        overall.restore(verdict, since: since)
        for (family, v) in restored where v.verdict.state != .unknown {
            families[family]?.restore(v.verdict, since: v.since)
        }
        for (uplink, v) in restoredUplinks where v.verdict.state != .unknown {
            uplinks[uplink]?.restore(v.verdict, since: v.since)
        }
    }

    /// New settings and uplinks (a reload): with unchanged settings every tracker keeps its
    /// streaks; with changed ones each keeps its verdict and `since` and starts new streaks.
    /// Uplinks added start `unknown`; removed ones are dropped.
    package mutating func reconfigure(settings new: VerdictSettings, uplinks list: [String], now: Double) {
        if new != settings {
            overall = Self.carried(overall, new, now: now)
            families = families.mapValues { Self.carried($0, new, now: now) }
            uplinks = uplinks.mapValues { Self.carried($0, new, now: now) }
            settings = new
        }
        uplinks = uplinks.filter { list.contains($0.key) }
        for uplink in list where uplinks[uplink] == nil { uplinks[uplink] = VerdictTracker(settings: new, now: now) }
        uplinkOrder = list
    }

    /// A tracker under new settings that keeps the old one's verdict and its start.
    private static func carried(_ tracker: VerdictTracker, _ settings: VerdictSettings, now: Double) -> VerdictTracker {
        var t = VerdictTracker(settings: settings, now: now)
        t.restore(tracker.current, since: tracker.since)
        return t
    }
}
