import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// The engine alone: outcomes and path facts in, scoped verdicts and transitions out.
@Suite struct VerdictEngineTests {
    static func outcome(
        _ name: String, _ status: ProbeStatus, _ address: String, _ family: IPFamily, interface: String? = nil
    )
        -> ProbeOutcome
    {
        var r =
            status == .success
            ? ProbeResult(status: .success, duration: .milliseconds(1)) : .failure(.timeout, "x", duration: .seconds(1))
        r.address = address
        r.family = family
        return ProbeOutcome(name: name, type: .icmp, target: name, interface: interface, result: r, at: 0)
    }

    static var openPath: PathFacts {
        PathFacts(unsatisfied: { _ in nil }, isLocal: { AddressLocality.isIntrinsicallyLocal($0) })
    }

    @Test func transitionsComeOverallFirstThenFamiliesThenUplinks() {
        var engine = VerdictEngine(settings: VerdictSettings(failAfter: 1, recoverAfter: 1), uplinks: ["wan1"], now: 0)
        let round = [
            Self.outcome("v4", .success, "198.51.100.1", .ipv4), Self.outcome("v6", .failure, "2001:db8::1", .ipv6),
            Self.outcome("v4", .failure, "198.51.100.1", .ipv4, interface: "wan1"),
        ]
        let t = engine.decide(round, specs: [:], path: Self.openPath, now: 1)
        #expect(t.map(\.0.description) == ["overall", "ipv4", "ipv6", "wan1"])
        #expect(engine.overallVerdict.verdict == Verdict(.full))
        #expect(engine.familyVerdicts[.ipv6]?.verdict == Verdict(.limited, reason: .probe(.timeout)))
        #expect(engine.uplinkVerdicts["wan1"]?.verdict == Verdict(.limited, reason: .probe(.timeout)))
    }

    @Test func aPathlessScopeIsNoneWithoutLookingAtProbes() {
        var engine = VerdictEngine(settings: VerdictSettings(), uplinks: [], now: 0)
        let down = PathFacts(unsatisfied: { _ in .noCarrier }, isLocal: { _ in false })
        _ = engine.decide([Self.outcome("v4", .success, "198.51.100.1", .ipv4)], specs: [:], path: down, now: 1)
        #expect(engine.overallVerdict.verdict == Verdict(.none, reason: .path(.noCarrier)))
    }

    @Test func reconfigureKeepsVerdictsAndDropsRemovedUplinks() {
        var engine = VerdictEngine(settings: VerdictSettings(failAfter: 1), uplinks: ["a", "b"], now: 0)
        _ = engine.decide(
            [Self.outcome("v4", .success, "198.51.100.1", .ipv4)], specs: [:], path: Self.openPath, now: 1)
        engine.reconfigure(settings: VerdictSettings(failAfter: 5), uplinks: ["b", "c"], now: 2)
        #expect(engine.overallVerdict == ScopedVerdict(verdict: Verdict(.full), since: 1))
        #expect(Set(engine.uplinkVerdicts.keys) == ["b", "c"])
        #expect(engine.uplinkVerdicts["c"]?.verdict == .unknown)
    }
}
