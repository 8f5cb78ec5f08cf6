/// A state change, for `reachability_state_transitions_total{from,to}` and the history.
public struct Transition: Sendable, Equatable {
    /// The verdict before.
    public var from: Verdict
    /// The verdict after.
    public var to: Verdict
    /// Unix seconds (wall clock) when it happened.
    public var at: Double
}

/// Applies hysteresis to round verdicts: one tracker per scope (overall, a family, an uplink).
///
/// - `unknown` and `none` are left at once for whatever the next round says (they were not
///   decided by failing probes, so there is nothing to damp).
/// - Losing the path (`none`) is immediate.
/// - Leaving `full` takes `failAfter` consecutive non-full rounds; the state then becomes the
///   latest round's verdict.
/// - Returning to `full` takes `recoverAfter` consecutive full rounds.
/// - Between non-full states (`limited` ↔ `portal`, a new reason) the change is immediate.
/// - The network's own word (`captive_portal_api`) is immediate both ways: entering it, and
///   leaving it for whatever the round says once the API no longer says `captive` (it was not
///   decided by failing probes, so there is nothing to damp; a login shows within one round).
package struct VerdictTracker: Sendable {
    package private(set) var current = Verdict.unknown
    /// Unix seconds of the last transition (or of creation).
    package private(set) var since: Double
    package let settings: VerdictSettings
    private var badStreak = 0
    private var goodStreak = 0

    /// `full` held by hysteresis while the latest decided round said otherwise.
    package var isDoubted: Bool { current.state == .full && badStreak > 0 }

    package init(settings: VerdictSettings, now: Double) {
        self.settings = settings
        since = now
    }

    /// Restores a state read back from history (keeps its original transition time).
    package mutating func restore(_ verdict: Verdict, since: Double) {
        current = verdict
        self.since = since
    }

    /// Leaves `full` at once for `verdict` (not full), with no hysteresis: the overall scope when
    /// every family it is made of has already left `full` under its own hysteresis. Nil when
    /// the state is not `full`.
    package mutating func cap(at verdict: Verdict, now: Double) -> Transition? {
        guard current.state == .full, verdict.state != .full else { return nil }
        badStreak = 0
        goodStreak = 0
        let t = Transition(from: current, to: verdict, at: now)
        current = verdict
        since = now
        return t
    }

    /// Feeds one round's verdict; returns the transition if the state (or its reason) changed.
    package mutating func update(_ round: Verdict, now: Double) -> Transition? {
        let next: Verdict?
        switch (current.state, round.state) {
        case (_, .none):
            badStreak = 0
            goodStreak = 0
            next = round
        case (.unknown, _), (.none, _),
            (_, _) where round.reason == .captivePortalAPI,
            (_, _) where current.reason == .captivePortalAPI:
            badStreak = 0
            goodStreak = 0
            next = round
        case (.full, .full):
            badStreak = 0
            next = nil
        case (.full, _):
            badStreak += 1
            next = badStreak >= settings.failAfter ? round : nil
        case (_, .full):
            goodStreak += 1
            next = goodStreak >= settings.recoverAfter ? round : nil
        default:
            goodStreak = 0
            next = round
        }
        guard let next, next != current else { return nil }
        if next.state == .full || current.state == .full {
            badStreak = 0
            goodStreak = 0
        }
        let t = Transition(from: current, to: next, at: now)
        current = next
        since = now
        return t
    }
}
