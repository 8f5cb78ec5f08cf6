/// The cross-checks that tell an answer from beyond the gateway from one a box on the path made
/// in its place, applied to each probe's result before anything reads it (verdict, metrics,
/// history, `check`): a result they void is a failure with a reason that names the imitation.
///
/// - **Hop distance** (`forged_reply`): an echo reply from a target beyond the gateway must
///   have crossed at least one router, the gateway, which lowers its TTL. A reply that arrives
///   with a full initial TTL (64, 128 or 255) may have come from a box on the local network (a
///   gateway that answers echo for every address while its uplink is down), or from a path
///   that lowers no TTL (a PPP peer, a rootless container's user-mode network, which re-sends
///   replies with TTL 255). The prober tells them apart with one echo to an address nobody
///   holds (`ICMPDetail.phantomReply`): only when that answered too are the replies voided.
///   Targets on the local network are exempt (0 hops by nature, local evidence anyway).
///
/// The other cross-checks live in their probers, where the evidence is: a TCP connection's
/// canary port or expected banner (`intercepted`, `banner_mismatch`, `TCPProber`), and the
/// HTTP probe's `Cache-Control: no-cache` (a compliant cache must ask the origin).
package enum OnPathCheck {
    package static func review(_ outcome: ProbeOutcome, isLocal: (String) -> Bool) -> ProbeOutcome {
        var o = outcome
        guard o.type == .icmp, o.result.succeeded, let icmp = o.result.icmp, let ttl = icmp.ttl,
            icmp.hops == 0, let phantom = icmp.phantomReply, !isLocal(phantom), let address = o.result.address,
            !isLocal(address)
        else { return o }
        o.result.status = .failure
        o.result.reason = .forgedReply
        o.result.detail +=
            ": the replies arrived with TTL \(ttl), 0 hops away, though \(address) is beyond the gateway,"
            + " and \(phantom), which nobody holds, answered too: a box on the local network answers in its place"
        return o
    }

    // A phantom on the local network (a lab that numbers its LAN in a documentation range)
    // answering proves nothing: its answer is real.

    /// Reasons that say the path answered in the target's place: they name a `limited`
    /// round before any timeout, and the fault is never the target's.
    package static let pathAnswered: Set<FailureReason> = [.forgedReply, .intercepted]
}
