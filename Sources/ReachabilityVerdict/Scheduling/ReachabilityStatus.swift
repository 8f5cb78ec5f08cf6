/// A probe's recent record: the outcome of its last `window` runs as bits, and its last success.
package struct ProbeRecent: Sendable {
    package static let window = 20
    private var bits: UInt32 = 0  // bit i set: the i-th most recent run failed
    private var runs = 0
    package var lastSuccess: Double?

    /// A run that did not happen (no path) is no run: it changes neither the loss nor the count.
    package mutating func record(_ outcome: ProbeOutcome) {
        guard outcome.ran else { return }
        let failed = outcome.result.status != .success
        bits = (bits << 1 | (failed ? 1 : 0)) & ((1 << UInt32(Self.window)) - 1)
        runs = min(runs + 1, Self.window)
        if !failed { lastSuccess = outcome.at }
    }

    /// `outcome` with this record's fields filled in.
    package func annotate(_ outcome: ProbeOutcome) -> ProbeOutcome {
        var o = outcome
        o.lastSuccess = lastSuccess
        o.recentRuns = runs
        o.recentFailures = bits.nonzeroBitCount
        return o
    }
}

/// The answer after a round: the overall verdict (`state`, `reason`, `isReachable`), the
/// connection type, the verdict per IP family and uplink, and every probe's latest result.
/// What `Reachability.check()` returns and `Reachability.statusStream` yields.
public struct ReachabilityStatus: Sendable, Equatable {
    /// The verdict of what the routing table gives applications.
    public var overall: ScopedVerdict
    /// The verdict of each IP family.
    public var families: [IPFamily: ScopedVerdict]
    /// The verdict of each uplink, by interface name.
    public var uplinks: [String: ScopedVerdict]
    /// Every probe's latest outcome.
    public var probes: [ProbeOutcome]
    /// Unix seconds when the round started.
    public var roundStarted: Double
    /// How long the round took.
    public var roundDuration: Duration
    /// Transitions this round caused: overall first, then the families, then the uplinks.
    public var transitions: [ScopeTransition]
    /// The round's number, counted from 1 by the monitor that ran it.
    public var round: Int
    /// The probe interval this round ran under (a reload may change it); nil when unknown
    /// (statuses built by hand), and observers then use the interval they were created with.
    public var interval: Duration? = nil
    /// The kind of the interface carrying the default route (the seed's connection type).
    public var connectionType: ConnectionType = .unknown
    /// Scopes `full` only by hysteresis: their latest decided round was not (`VerdictEngine.doubted`).
    package var doubted: Set<Scope> = []
    /// Where each scope's path breaks: `FaultLocation.none` when `full` with every probe
    /// succeeding; no entry while `unknown`.
    public var faults: [Scope: Fault] = [:]
    /// What this round put on each interface's wire (`RoundTraffic.charge`).
    public var traffic: [String: TrafficCount] = [:]
    /// Uplinks with their own interval or a budget: the interval their probes run at now, and
    /// where the budget's window stands.
    public var uplinkPaces: [String: UplinkPace] = [:]
    /// The NAT64 prefixes the monitor's DNS probes have learned (`NAT64Prefixes`) at the round's end.
    package var nat64Prefixes: [NAT64Prefix] = []
    /// What the network's captive-portal APIs said for the interfaces of the scopes (RFC 8908).
    package var captivePortals: [CaptivePortalState] = []
    /// Failed reads of those APIs since start, per kind.
    package var captivePortalErrors: [CaptivePortalProblem.Kind: Int] = [:]
    /// Hook files present but not believed (others could have written them).
    package var captivePortalIgnored: [String] = []

    /// Where the overall path breaks (nil before the first decided round).
    public var fault: Fault? { faults[.overall] }

    /// A scope's verdict, or nil when the status has none for it.
    public func verdict(of scope: Scope) -> ScopedVerdict? {
        switch scope {
        case .overall: overall
        case .family(let f): families[f]
        case .uplink(let name): uplinks[name]
        }
    }

    /// The overall five-state verdict.
    public var state: ConnectivityState { overall.verdict.state }
    /// Why the overall verdict is not `full` (nil when it is, or before the first round).
    public var reason: VerdictReason? { overall.verdict.reason }
    /// The internet is reachable: the overall verdict is `full`.
    public var isReachable: Bool { state == .full }
}

/// A scope's transition in a round.
public struct ScopeTransition: Sendable, Equatable {
    /// The scope whose verdict changed.
    public var scope: Scope
    /// The change: from which verdict to which, and when.
    public var transition: Transition

    /// `transition` of `scope`.
    public init(_ scope: Scope, _ transition: Transition) {
        self.scope = scope
        self.transition = transition
    }
}

/// Receives every finished round, synchronously, in order (the metrics recorder, the history
/// writer). Must not block.
package protocol RoundObserver: Sendable {
    func roundCompleted(_ status: ReachabilityStatus)
    /// Called by `ReachabilityMonitor.reconfigure` between rounds, before the first round with
    /// the new probes and settings (the metrics recorder drops and pre-creates series here).
    func probesChanged(_ probes: [ProbeSpec], settings: MonitorSettings)
    func uplinksAdopted(_ added: [String], uplinks: [String])
}

extension RoundObserver {
    package func probesChanged(_ probes: [ProbeSpec], settings: MonitorSettings) {}
    /// Under `uplinks: auto`, after interfaces that gained a default route became uplinks (after
    /// `probesChanged`).
    package func uplinksAdopted(_ added: [String], uplinks: [String]) {}
}

/// Which interface each part of a round's traffic is charged to: a probe bound to an uplink to
/// that uplink; a probe through the routing table to the interface of the overall default
/// route (where the main table sends it; a policy rule that sends it elsewhere is not seen);
/// the fault checks and traces to their route's interface.
package enum RoundTraffic {
    package static func charge(_ outcomes: [ProbeOutcome], locator: [String: TrafficCount], defaultRoute: String?)
        -> [String: TrafficCount]
    {
        var out = locator.filter { !$0.value.isZero }
        for o in outcomes {
            guard let t = o.traffic, !t.isZero, let interface = o.interface ?? defaultRoute else { continue }
            out[interface, default: TrafficCount()] += t
        }
        return out
    }

    /// The bytes each uplink's own probes (bound to it) used this round.
    package static func ownRounds(_ outcomes: [ProbeOutcome]) -> [String: UInt64] {
        var out: [String: UInt64] = [:]
        for o in outcomes { if let i = o.interface, let t = o.traffic { out[i, default: 0] += t.bytes } }
        return out
    }
}
