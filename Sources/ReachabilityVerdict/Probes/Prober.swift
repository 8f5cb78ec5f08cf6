/// Something that performs one probe round: the contract every kind's prober keeps (one per
/// folder: `HTTP/`, `ICMP/`, `DNS/`, `TCP/`; `ProberContractTests` holds each of them to it).
///
/// A conforming type:
/// - answers every round with a `ProbeResult` value: it never throws, never traps and never
///   hangs, whatever the network sends back (a malformed answer is a failure with a reason);
/// - ends by `deadline` (plus scheduling slack); a round not over by then is a `timeout`;
/// - ends at once when its task is cancelled, with a failure result;
/// - touches no metrics and keeps no state between rounds that could change a later round's
///   result, apart from its configuration;
/// - opens its sockets through the library's socket layer (`Posix/`, the ICMP engine), which
///   charges every packet to `TrafficMeter.current`, so budgets and traffic counters see it;
/// - reports `type`, the kind whose configuration built it.
///
/// The scheduler may run different rounds of different probers concurrently, but never overlaps
/// one prober with itself.
package protocol Prober: Sendable {
    /// The kind of probe (its `type` label), as its configuration says.
    var type: ProbeType { get }
    /// Runs one round and returns what it concluded, by `deadline`.
    func probe(deadline: ContinuousClock.Instant) async -> ProbeResult
}

/// A prober whose rounds can go out together with other rounds of its own type (ICMP echoes to
/// IP literals: one `sendmmsg` for a stagger slot). The scheduler groups a slot's batchable
/// rounds by type and hands each group to `batchRounds`; each result must be the one
/// `probe(deadline:)` would have given for the same outcome, with its own duration and traffic.
package protocol BatchingProber: Prober {
    /// Whether this round can join a batch (a configuration that cannot is run on its own).
    var isBatchable: Bool { get }

    /// Runs `rounds` together and returns their results in order, charging each round's traffic
    /// to its meter in `meters`; calls `roundEnded(i)` once for each round as soon as it is over.
    static func batchRounds(
        _ rounds: [ProberBatchRound<Self>], meters: [TrafficMeter], roundEnded: @escaping @Sendable (Int) -> Void
    ) async -> [ProbeResult]
}

/// One round of a batch: its prober, and when the round must end.
package struct ProberBatchRound<P: BatchingProber>: Sendable {
    /// The prober whose round this is.
    package var prober: P
    /// When the round must end.
    package var deadline: ContinuousClock.Instant

    /// A round of `prober` that must end by `deadline`.
    package init(prober: P, deadline: ContinuousClock.Instant) {
        self.prober = prober
        self.deadline = deadline
    }
}
