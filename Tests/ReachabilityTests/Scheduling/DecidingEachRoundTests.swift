import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// `check`'s one-round settings are the configured ones with only the hysteresis changed:
/// every other field, including one added later, reaches the one-round monitor.
@Suite struct DecidingEachRoundTests {
    /// The fields `decidingEachRound` sets; every other one must come through unchanged.
    static let decided: Set<String> = ["failAfter", "recoverAfter"]

    static func fields(_ settings: VerdictSettings) -> [String: String] {
        Dictionary(
            uniqueKeysWithValues: Mirror(reflecting: settings).children.map {
                ($0.label ?? "?", String(describing: $0.value))
            })
    }

    @Test func everyOtherFieldSurvives() {
        // Not a default anywhere: a field added to VerdictSettings fails here until it is set.
        var configured = VerdictSettings(failAfter: 5, recoverAfter: 4)
        configured.policy = .quorum(minimum: 2, fraction: nil)
        configured.trustLocalTargets = true
        let defaults = Self.fields(VerdictSettings())
        let before = Self.fields(configured)
        for (name, value) in before {
            #expect(value != defaults[name], "set \(name) to a value other than its default in this test")
        }
        let after = Self.fields(configured.decidingEachRound)
        #expect(after.keys.sorted() == before.keys.sorted())
        for (name, value) in before where !Self.decided.contains(name) {
            #expect(after[name] == value, "decidingEachRound dropped \(name)")
        }
        #expect(configured.decidingEachRound.failAfter == 1 && configured.decidingEachRound.recoverAfter == 1)
    }
}
