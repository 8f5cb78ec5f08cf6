import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// Issue #43: the network's own word in the verdict. `captive: true` makes the scope of its
/// interface `portal` (`captive_portal_api`) at once, whatever the probes say; its end shows
/// within one round; `captive: false` decides nothing.
@Suite struct AnnouncedPortalTests {
    static func facts(captive: Set<Scope>) -> PathFacts {
        PathFacts(unsatisfied: { _ in nil }, isLocal: { _ in false }, announcedCaptive: { captive.contains($0) })
    }

    static let round = [
        VerdictEngineTests.outcome("v4", .success, "198.51.100.1", .ipv4),
        VerdictEngineTests.outcome("v6", .success, "2001:db8::1", .ipv6),
        VerdictEngineTests.outcome("b", .success, "198.51.100.1", .ipv4, interface: "wwan0"),
    ]

    @Test func theClassifierBelievesCaptiveOverEverySuccess() {
        let entries = [
            RoundEntry(name: "h", type: .https, result: ProbeResult(status: .success, duration: .milliseconds(1)))
        ]
        #expect(
            RoundClassifier.classify(
                pathUnsatisfiedReason: nil, entries: entries, policy: .parallel, announcedCaptive: true)
                == Verdict(.portal, reason: .captivePortalAPI))
        #expect(
            RoundClassifier.classify(
                pathUnsatisfiedReason: .noCarrier, entries: [], policy: .parallel, announcedCaptive: true)
                == Verdict(.none, reason: .path(.noCarrier)), "no path is no path")
        #expect(VerdictReason(label: "captive_portal_api") == .captivePortalAPI)
    }

    @Test func entersAtOnceAndLeavesWithinOneRoundUnderDefaultHysteresis() {
        var engine = VerdictEngine(settings: VerdictSettings(failAfter: 3, recoverAfter: 2), uplinks: ["wwan0"], now: 0)
        _ = engine.decide(Self.round, specs: [:], path: Self.facts(captive: []), now: 1)
        #expect(engine.overallVerdict.verdict == Verdict(.full))
        let all: Set<Scope> = [.overall, .family(.ipv4), .family(.ipv6)]
        _ = engine.decide(Self.round, specs: [:], path: Self.facts(captive: all), now: 2)
        #expect(
            engine.overallVerdict.verdict == Verdict(.portal, reason: .captivePortalAPI), "not after 3 rounds: at once")
        #expect(engine.familyVerdicts[.ipv6]?.verdict.state == .portal)
        #expect(engine.uplinkVerdicts["wwan0"]?.verdict == Verdict(.full), "the backup's own interface is not captive")
        _ = engine.decide(Self.round, specs: [:], path: Self.facts(captive: []), now: 3)
        #expect(engine.overallVerdict.verdict == Verdict(.full), "logged in: full in the next round, not after 2")
    }

    @Test func leavingItForAFailureIsImmediateToo() {
        var engine = VerdictEngine(settings: VerdictSettings(failAfter: 3, recoverAfter: 2), uplinks: [], now: 0)
        _ = engine.decide(Self.round, specs: [:], path: Self.facts(captive: [.overall]), now: 1)
        let failing = [VerdictEngineTests.outcome("v4", .failure, "198.51.100.1", .ipv4)]
        _ = engine.decide(failing, specs: [:], path: Self.facts(captive: []), now: 2)
        #expect(engine.overallVerdict.verdict == Verdict(.limited, reason: .probe(.timeout)))
    }

    @Test func anUplinksPortalIsThatUplinks() {
        var engine = VerdictEngine(settings: VerdictSettings(failAfter: 1, recoverAfter: 1), uplinks: ["wwan0"], now: 0)
        _ = engine.decide(Self.round, specs: [:], path: Self.facts(captive: [.uplink("wwan0")]), now: 1)
        #expect(engine.overallVerdict.verdict == Verdict(.full))
        #expect(engine.uplinkVerdicts["wwan0"]?.verdict == Verdict(.portal, reason: .captivePortalAPI))
    }
}
