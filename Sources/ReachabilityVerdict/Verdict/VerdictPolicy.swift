/// How probe results combine into a verdict (`--probe.mode`, `policy:` in the config file).
package enum VerdictPolicy: Sendable, Equatable, CustomStringConvertible {
    /// The seed design's default: any success means full.
    case parallel
    /// Only HTTP and HTTPS probes count.
    case http
    /// Only ICMP probes (echo and MTU) count.
    case icmp
    /// At least `minimum` probes must succeed (or a `fraction` of those that ran, rounded up).
    case quorum(minimum: Int?, fraction: Double?)

    package var name: String {
        switch self {
        case .parallel: "parallel"
        case .http: "http"
        case .icmp: "icmp"
        case .quorum: "quorum"
        }
    }

    package var description: String {
        switch self {
        case .quorum(let m, let f): "quorum(\(m.map(String.init) ?? "-"), \(f.map { String($0) } ?? "-"))"
        default: name
        }
    }

    /// Whether results of this probe type take part in the decision.
    package func counts(_ type: ProbeType) -> Bool {
        switch self {
        case .parallel, .quorum: true
        case .http: type.kind.policyGroup == .http
        case .icmp: type.kind.policyGroup == .icmp
        }
    }

    /// Parses `parallel`, `http`, `icmp`, `quorum` (a majority), `quorum:2`, `quorum:50%`.
    package static func parse(_ text: String) -> VerdictPolicy? {
        switch text {
        case "parallel": return .parallel
        case "http": return .http
        case "icmp": return .icmp
        case "quorum": return .quorum(minimum: nil, fraction: 0.5)
        default: break
        }
        guard text.hasPrefix("quorum:") else { return nil }
        let arg = text.dropFirst("quorum:".count)
        if arg.hasSuffix("%"), let pct = Double(arg.dropLast()), pct > 0, pct <= 100 {
            return .quorum(minimum: nil, fraction: pct / 100)
        }
        if let n = Int(arg), n >= 1 { return .quorum(minimum: n, fraction: nil) }
        return nil
    }
}

/// Hysteresis and re-check settings.
package struct VerdictSettings: Sendable, Equatable {
    /// Consecutive failed rounds before leaving `full` (`--probe.fail-after`, `fail_after`).
    package static let defaultFailAfter = 3
    /// Consecutive good rounds before returning to `full` (`--probe.recover-after`, `recover_after`).
    package static let defaultRecoverAfter = 2

    package var policy: VerdictPolicy = .parallel
    package var failAfter = defaultFailAfter
    package var recoverAfter = defaultRecoverAfter
    /// Let answers from targets on the local network (loopback, on-link, the gateway) be
    /// internet evidence (`--probe.trust-local-targets`). Only for labs and tests whose
    /// "internet" is on this host or its own link; the probe-kind rules of `Evidence` (system
    /// resolver, plain DNS, intercepted ports, plain-HTTP web checks) still apply.
    package var trustLocalTargets = false

    package init(
        policy: VerdictPolicy = .parallel, failAfter: Int = defaultFailAfter, recoverAfter: Int = defaultRecoverAfter,
        trustLocalTargets: Bool = false
    ) {
        self.policy = policy
        self.failAfter = max(1, failAfter)
        self.recoverAfter = max(1, recoverAfter)
        self.trustLocalTargets = trustLocalTargets
    }
}

extension ProbeSpec {
    /// The warning for a probe set in which no probe that counts under `policy` can prove the
    /// internet (a DNS-only configuration, say): its verdict is never `full`, at best
    /// `limited (unproven)`. Nil when some probe can.
    package static func evidenceWarning(_ specs: [ProbeSpec], policy: VerdictPolicy) -> String? {
        let counting = specs.filter { policy.counts($0.type) }
        guard !counting.isEmpty, !counting.contains(where: { $0.evidence == .internet }) else { return nil }
        return "no probe can prove that the internet is reachable (answers of DNS probes, DNS over HTTPS without a "
            + "verified certificate, plain-HTTP web checks and "
            + "TCP connects to ports 53, 80 and 443 can come from the local network): the verdict will never be full, "
            + "at best limited (unproven); add a captive HTTP(S) check, an ICMP probe or a TCP probe to another port"
    }
}
