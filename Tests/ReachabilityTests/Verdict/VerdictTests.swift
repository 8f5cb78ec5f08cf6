import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

@Suite struct VerdictTests {
    static func ok(_ type: ProbeType, _ name: String = "") -> RoundEntry {
        RoundEntry(
            name: name.isEmpty ? type.rawValue : name, type: type,
            result: ProbeResult(status: .success, duration: .milliseconds(5)))
    }
    static func fail(_ type: ProbeType, _ reason: FailureReason, _ name: String = "") -> RoundEntry {
        RoundEntry(
            name: name.isEmpty ? type.rawValue : name, type: type, result: .failure(reason, "x", duration: .seconds(1)))
    }
    static func portal(_ type: ProbeType, _ reason: FailureReason) -> RoundEntry {
        RoundEntry(
            name: type.rawValue, type: type,
            result: ProbeResult(status: .portal, reason: reason, duration: .milliseconds(5)))
    }

    struct Row: Sendable, CustomTestStringConvertible {
        let name: String
        let path: PathUnsatisfiedReason?
        let entries: [RoundEntry]
        let policy: VerdictPolicy
        let expected: Verdict
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(
            name: "path down wins over successes", path: .noCarrier, entries: [ok(.http), ok(.icmp)],
            policy: .parallel, expected: Verdict(.none, reason: .path(.noCarrier))),
        Row(
            name: "any success under parallel", path: nil, entries: [fail(.http, .timeout), ok(.icmp)],
            policy: .parallel, expected: Verdict(.full)),
        Row(
            name: "portal overrides ICMP success", path: nil, entries: [portal(.http, .redirect), ok(.icmp)],
            policy: .parallel, expected: Verdict(.portal, reason: .probe(.redirect))),
        Row(
            name: "DNS private answer is a portal", path: nil, entries: [ok(.icmp), portal(.dns, .privateAddress)],
            policy: .parallel, expected: Verdict(.portal, reason: .probe(.privateAddress))),
        Row(
            name: "all time out", path: nil, entries: [fail(.http, .timeout), fail(.icmp, .timeout)], policy: .parallel,
            expected: Verdict(.limited, reason: .probe(.timeout))),
        Row(
            name: "dominant reason", path: nil,
            entries: [fail(.http, .refused), fail(.icmp, .timeout), fail(.tcp, .timeout)], policy: .parallel,
            expected: Verdict(.limited, reason: .probe(.timeout))),
        Row(
            name: "ICMP blocked, HTTP fine, parallel", path: nil, entries: [ok(.http), fail(.icmp, .timeout)],
            policy: .parallel, expected: Verdict(.full)),
        Row(
            name: "ICMP blocked, HTTP fine, icmp policy", path: nil, entries: [ok(.http), fail(.icmp, .timeout)],
            policy: .icmp, expected: Verdict(.limited, reason: .probe(.timeout))),
        Row(
            name: "http policy ignores ICMP success", path: nil, entries: [fail(.http, .refused), ok(.icmp)],
            policy: .http, expected: Verdict(.limited, reason: .probe(.refused))),
        Row(
            name: "HTTPS intercepted, HTTP fine", path: nil, entries: [ok(.http), fail(.https, .tls), ok(.icmp)],
            policy: .parallel, expected: Verdict(.limited, reason: .partial)),
        Row(
            name: "DNS dead, IP fine", path: nil, entries: [ok(.icmp), fail(.dns, .timeout)], policy: .parallel,
            expected: Verdict(.limited, reason: .probe(.dns))),
        Row(
            name: "blackhole: DNS fails with everything else", path: nil,
            entries: [fail(.http, .timeout), fail(.dns, .timeout), fail(.icmp, .timeout)], policy: .parallel,
            expected: Verdict(.limited, reason: .probe(.timeout))),
        Row(
            name: "DNS dead ignored under icmp", path: nil, entries: [ok(.icmp), fail(.dns, .timeout)], policy: .icmp,
            expected: Verdict(.full)),
        Row(
            name: "quorum 2 of 3 met", path: nil, entries: [ok(.http), ok(.icmp), fail(.tcp, .refused)],
            policy: .quorum(minimum: 2, fraction: nil), expected: Verdict(.full)),
        Row(
            name: "quorum 2 not met", path: nil, entries: [ok(.http), fail(.icmp, .timeout), fail(.tcp, .refused)],
            policy: .quorum(minimum: 2, fraction: nil), expected: Verdict(.limited, reason: .probe(.timeout))),
        Row(
            name: "quorum majority of 4 needs 2", path: nil,
            entries: [ok(.http), ok(.icmp), fail(.tcp, .refused), fail(.icmp, .timeout, "b")],
            policy: .quorum(minimum: nil, fraction: 0.5), expected: Verdict(.full)),
        Row(
            name: "no probes", path: nil, entries: [], policy: .parallel,
            expected: Verdict(.limited, reason: .noProbes)),
        Row(
            name: "no counting probes", path: nil, entries: [ok(.tcp)], policy: .icmp,
            expected: Verdict(.limited, reason: .noProbes)),
    ]

    @Test(arguments: rows)
    func classification(_ row: Row) {
        #expect(
            RoundClassifier.classify(pathUnsatisfiedReason: row.path, entries: row.entries, policy: row.policy)
                == row.expected)
    }

    @Test(arguments: [
        ("parallel", "parallel"), ("http", "http"), ("icmp", "icmp"), ("quorum", "quorum(-, 0.5)"),
        ("quorum:2", "quorum(2, -)"), ("quorum:75%", "quorum(-, 0.75)"),
    ])
    func policyParsing(text: String, expected: String) throws {
        #expect(try #require(VerdictPolicy.parse(text)).description == expected)
    }

    @Test(arguments: ["", "quorum:0", "quorum:x", "quorum:150%", "any"])
    func badPolicies(text: String) { #expect(VerdictPolicy.parse(text) == nil) }

    static let full = Verdict(.full)
    static let timeout = Verdict(.limited, reason: .probe(.timeout))
    static let portalV = Verdict(.portal, reason: .probe(.redirect))
    static let noPath = Verdict(.none, reason: .path(.noDefaultRoute))

    /// Feeds rounds one per second; returns the state after each round and the transitions.
    func run(_ rounds: [Verdict], failAfter: Int = 3, recoverAfter: Int = 2) -> ([ConnectivityState], [Transition]) {
        var t = VerdictTracker(settings: VerdictSettings(failAfter: failAfter, recoverAfter: recoverAfter), now: 0)
        var states: [ConnectivityState] = []
        var transitions: [Transition] = []
        for (i, r) in rounds.enumerated() {
            if let tr = t.update(r, now: Double(i + 1)) { transitions.append(tr) }
            states.append(t.current.state)
        }
        return (states, transitions)
    }

    @Test func firstRoundDecidesAtOnce() {
        let (states, tr) = run([Self.timeout])
        #expect(states == [.limited])
        #expect(tr == [Transition(from: .unknown, to: Self.timeout, at: 1)])
    }

    @Test func leavingFullNeedsFailAfterRounds() {
        let (states, tr) = run([Self.full, Self.timeout, Self.timeout, Self.timeout, Self.timeout])
        #expect(states == [.full, .full, .full, .limited, .limited])
        #expect(tr.map(\.at) == [1, 4])
    }

    @Test func aGoodRoundResetsTheFailStreak() {
        let (states, _) = run([
            Self.full, Self.timeout, Self.timeout, Self.full, Self.timeout, Self.timeout, Self.timeout,
        ])
        #expect(states == [.full, .full, .full, .full, .full, .full, .limited])
    }

    @Test func recoveryNeedsRecoverAfterRounds() {
        let (states, _) = run([Self.timeout, Self.full, Self.timeout, Self.full, Self.full])
        #expect(states == [.limited, .limited, .limited, .limited, .full])
    }

    @Test func pathLossIsImmediateAndRecoveryFromNoneIsToo() {
        let (states, tr) = run([Self.full, Self.noPath, Self.full])
        #expect(states == [.full, .none, .full])
        #expect(tr.map(\.to.state) == [.full, .none, .full])
    }

    @Test func portalAfterLimitedIsImmediateButFullToPortalIsDamped() {
        let (a, _) = run([Self.timeout, Self.portalV])
        #expect(a == [.limited, .portal])
        let (b, _) = run([Self.full, Self.portalV, Self.portalV, Self.portalV])
        #expect(b == [.full, .full, .full, .portal])
    }

    @Test func flappingIsBoundedByHysteresis() {
        // Alternating good and bad rounds never satisfy either streak: no transitions after the first.
        let rounds = (0..<40).map { $0 % 2 == 0 ? Self.full : Self.timeout }
        let (_, tr) = run(rounds)
        #expect(tr.count == 1)
    }

    @Test func reasonChangeWhileLimitedIsATransition() {
        let (_, tr) = run([Self.timeout, Verdict(.limited, reason: .probe(.dns))])
        #expect(tr.count == 2)
        #expect(tr.last?.to.reason == .probe(.dns))
    }
}
