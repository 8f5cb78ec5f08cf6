/// One probe's result in a round, with what the classifier needs to know about the probe.
public struct RoundEntry: Sendable, Equatable {
    public var name: String
    public var type: ProbeType
    public var result: ProbeResult

    public init(name: String, type: ProbeType, result: ProbeResult) {
        self.name = name
        self.type = type
        self.result = result
    }
}

/// Decides one round's verdict from the path and the probe results, before hysteresis. Pure.
///
/// The rules, in order:
/// 1. No usable path ⇒ `none`, with the path's reason. No probe result can override it.
/// 2. Any portal signal (HTTP redirect / unexpected answer / body mismatch, DNS private answer)
///    ⇒ `portal`. It overrides successes of other probes: ICMP passing through must not hide a
///    portal (a known weakness of the seed library).
/// 3. No counting probes ran ⇒ `limited`, `no_probes`.
/// 4. HTTP succeeds while every HTTPS probe fails ⇒ `limited`, `partial` (Android's PARTIAL).
/// 5. Every DNS probe fails while others succeed ⇒ `limited`, `dns` (except under `icmp`).
/// 6. The policy: `parallel`/`http`/`icmp` need one counting success, `quorum` its minimum.
///    Met ⇒ `full`; otherwise `limited` with the most common failure reason among counting
///    probes (ties: the first in probe order).
public enum RoundClassifier {
    public static func classify(pathUnsatisfiedReason: String?, entries: [RoundEntry], policy: VerdictPolicy) -> Verdict {
        if let reason = pathUnsatisfiedReason { return Verdict(.none, reason: reason) }
        if let portal = entries.first(where: { $0.result.status == .portal }) {
            return Verdict(.portal, reason: portal.result.reason?.rawValue ?? "portal")
        }
        let counting = entries.filter { policy.counts($0.type) }
        guard !counting.isEmpty else { return Verdict(.limited, reason: "no_probes") }
        let https = entries.filter { $0.type == .https }
        let httpOK = entries.contains { $0.type == .http && $0.result.succeeded }
        if !https.isEmpty, httpOK, https.allSatisfy({ !$0.result.succeeded }), policy != .icmp {
            return Verdict(.limited, reason: "partial")
        }
        let dns = entries.filter { $0.type == .dns }
        // "While others succeed": when everything fails (a blackhole), the cause is not DNS.
        let othersOK = entries.contains { $0.type != .dns && $0.result.succeeded }
        if !dns.isEmpty, othersOK, dns.allSatisfy({ !$0.result.succeeded }), policy != .icmp {
            return Verdict(.limited, reason: "dns")
        }
        let successes = counting.filter { $0.result.succeeded }.count
        let met: Bool
        switch policy {
        case .parallel, .http, .icmp:
            met = successes >= 1
        case .quorum(let minimum, let fraction):
            var needed = minimum ?? 1
            if let fraction { needed = max(needed, Int((Double(counting.count) * fraction).rounded(.up))) }
            met = successes >= max(1, needed)
        }
        if met { return Verdict(.full) }
        return Verdict(.limited, reason: dominantReason(counting.filter { !$0.result.succeeded }))
    }

    static func dominantReason(_ failures: [RoundEntry]) -> String {
        var counts: [String: Int] = [:]
        var order: [String] = []
        for f in failures {
            let r = f.result.reason?.rawValue ?? "error"
            if counts[r] == nil { order.append(r) }
            counts[r, default: 0] += 1
        }
        return order.max { counts[$0]! < counts[$1]! || (counts[$0]! == counts[$1]! && order.firstIndex(of: $0)! > order.firstIndex(of: $1)!) } ?? "error"
    }
}
