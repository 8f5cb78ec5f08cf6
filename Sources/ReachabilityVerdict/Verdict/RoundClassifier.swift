/// One probe's result in a round, with what the classifier needs to know about the probe.
package struct RoundEntry: Sendable, Equatable {
    package var name: String
    package var type: ProbeType
    package var result: ProbeResult
    /// What a success of this probe shows (see `Evidence`): decided by the scheduler from the
    /// probe's kind and configuration and from where the answer came from.
    package var evidence: Evidence

    package init(name: String, type: ProbeType, result: ProbeResult, evidence: Evidence? = nil) {
        self.name = name
        self.type = type
        self.result = result
        self.evidence = evidence ?? Evidence.typical(of: type)
    }

    /// A success that shows the internet answered.
    package var provesInternet: Bool { result.succeeded && evidence == .internet }
}

/// Decides one round's verdict from the path and the probe results, before hysteresis. Pure.
///
/// The rules, in order:
/// 1. No usable path ⇒ `none`, with the path's reason. No probe result can override it.
/// 2. The network's captive-portal API says `captive: true` for the scope's interface
///    (`announcedCaptive`) ⇒ `portal`, `captive_portal_api`: even when everything else is
///    dropped. (Its `captive: false` proves nothing: the rules below decide.)
/// 3. Any portal signal (HTTP redirect, 511, unexpected answer, body mismatch, a trusted
///    certificate for another name; DNS private answer) ⇒ `portal`. It overrides successes of
///    other probes: ICMP passing through must not hide a portal (a known weakness of the seed
///    library).
/// 4. No counting probes ran ⇒ `limited`, `no_probes`.
/// 5. HTTP succeeds while every HTTPS probe fails ⇒ `limited`, `partial` (Android's PARTIAL).
/// 6. An `mtu` probe fails with `mtu` (small echoes come back, the expected size does not), or a
///    don't-fragment ICMP probe fails with `mtu` while another probe proves the internet ⇒
///    `limited`, `mtu`.
/// 7. Every DNS probe fails while others succeed ⇒ `limited`, `dns` (except under `icmp`).
/// 8. The policy: `parallel`/`http`/`icmp` need one counting success, `quorum` its minimum (in a
///    family's scope at most as many as the family has counting probes, so a family with one
///    probe can be full).
/// 9. The evidence rule (`Evidence`): the policy met is `full` only when at least one counting
///    success is internet evidence. Successes that could have come from the local network (the
///    system resolver, a gateway, an on-link target) never make a round `full` by themselves.
///
/// Not `full` ⇒ `limited` with the reason of a probe the path answered in place of its target
/// (`forged_reply`, `intercepted`: what was faked names the round), else the most common
/// failure reason (ties: the first in probe order)
/// among the failed counting probes that could have proved the internet, else among all failed
/// counting probes; when none failed, `quorum` (fewer probes than the quorum needs) or
/// `unproven` (every success could have come from the local network: a DNS-only configuration,
/// or every target on the local network).
package enum RoundClassifier {
    package static func classify(
        pathUnsatisfiedReason: PathUnsatisfiedReason?, entries: [RoundEntry], policy: VerdictPolicy,
        familyScope: Bool = false, announcedCaptive: Bool = false
    ) -> Verdict {
        if let reason = pathUnsatisfiedReason { return Verdict(.none, reason: .path(reason)) }
        if announcedCaptive { return Verdict(.portal, reason: .captivePortalAPI) }
        if let portal = entries.first(where: { $0.result.status == .portal }) {
            return Verdict(.portal, reason: portal.result.reason.map(VerdictReason.probe) ?? .portal)
        }
        let counting = entries.filter { policy.counts($0.type) }
        guard !counting.isEmpty else { return Verdict(.limited, reason: .noProbes) }
        let https = entries.filter { $0.type == .https }
        let httpOK = entries.contains { $0.type == .http && $0.result.succeeded }
        if !https.isEmpty, httpOK, https.allSatisfy({ !$0.result.succeeded }), policy != .icmp {
            return Verdict(.limited, reason: .partial)
        }
        // An MTU probe whose small echoes came back but not the expected size, or a
        // don't-fragment echo too big for a link while other probes succeed: the internet works
        // for small packets only.
        let othersSucceed = { (e: RoundEntry) in entries.contains { $0.name != e.name && $0.provesInternet } }
        if entries.contains(where: { $0.result.reason == .mtu && ($0.type == .mtu || othersSucceed($0)) }) {
            return Verdict(.limited, reason: .probe(.mtu))
        }
        let dns = entries.filter { $0.type == .dns }
        // "While others succeed": when everything fails (a blackhole), the cause is not DNS.
        let othersOK = entries.contains { $0.type != .dns && $0.result.succeeded }
        if !dns.isEmpty, othersOK, dns.allSatisfy({ !$0.result.succeeded }), policy != .icmp {
            return Verdict(.limited, reason: .probe(.dns))
        }
        let successes = counting.filter { $0.result.succeeded }.count
        let needed = neededSuccesses(policy, counting: counting.count, familyScope: familyScope)
        if successes >= needed, counting.contains(where: \.provesInternet) { return Verdict(.full) }
        let failed = counting.filter { !$0.result.succeeded }
        if let faked = failed.first(where: { $0.result.reason.map(OnPathCheck.pathAnswered.contains) ?? false }) {
            return Verdict(.limited, reason: .probe(faked.result.reason!))
        }
        let capableFailed = failed.filter { $0.evidence == .internet }
        if !capableFailed.isEmpty { return Verdict(.limited, reason: .probe(dominantReason(capableFailed))) }
        if !failed.isEmpty { return Verdict(.limited, reason: .probe(dominantReason(failed))) }
        // Nothing failed: too few probes for the quorum, or nothing could prove.
        return Verdict(.limited, reason: successes < needed ? .quorum : .unproven)
    }

    package static func neededSuccesses(_ policy: VerdictPolicy, counting: Int, familyScope: Bool) -> Int {
        switch policy {
        case .parallel, .http, .icmp:
            return 1
        case .quorum(let minimum, let fraction):
            var needed = minimum ?? 1
            if let fraction { needed = max(needed, Int((Double(counting) * fraction).rounded(.up))) }
            if familyScope { needed = min(needed, counting) }
            return max(1, needed)
        }
    }

    package static func dominantReason(_ failures: [RoundEntry]) -> FailureReason {
        var counts: [FailureReason: Int] = [:]
        var order: [FailureReason] = []
        for f in failures {
            let r = f.result.reason ?? .error
            if counts[r] == nil { order.append(r) }
            counts[r, default: 0] += 1
        }
        // The most common; among equals, the first seen.
        var best: FailureReason?
        for r in order where best == nil || counts[r]! > counts[best!]! { best = r }
        return best ?? .error
    }
}
