import Foundation
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// The verdict's reasons: labels unique and stable, every label read back as the reason it was,
/// an unknown label kept as read, where each reason locates, and the mixin's generated list of
/// scope and reason labels agreeing with the types.
@Suite struct VerdictReasonTests {
    @Test func labelsAreUnique() {
        let labels = VerdictReason.known.map(\.label)
        let repeated = Dictionary(grouping: labels, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
        #expect(repeated.isEmpty, "labels of two reasons: \(repeated)")
        #expect(
            labels.count == VerdictReason.rules.count + PathUnsatisfiedReason.allCases.count
                + FailureReason.allCases.count)
    }

    /// Labels are series and history: a renamed one breaks dashboards, alerts and old files.
    @Test func labelsAreStable() {
        #expect(
            VerdictReason.rules.map(\.label) == [
                "no_probes", "partial", "quorum", "unproven", "portal", "captive_portal_api",
            ])
        #expect(
            PathUnsatisfiedReason.allCases.map { VerdictReason.path($0).label } == [
                "no_interface", "no_carrier", "no_address", "no_default_route",
            ])
        #expect(FailureReason.allCases.allSatisfy { VerdictReason.probe($0).label == $0.rawValue })
        #expect(VerdictReason.probe(.dns).label == "dns" && VerdictReason.probe(.mtu).label == "mtu")
        #expect(VerdictReason.probe(.noAnswer).label == "no_answer")
    }

    @Test(arguments: VerdictReason.known) func labelReadsBackAsTheReason(_ reason: VerdictReason) throws {
        #expect(VerdictReason(label: reason.label) == reason)
        #expect(reason.description == reason.label)
        let verdict = Verdict(.limited, reason: reason)
        let json = try JSONEncoder().encode(verdict)
        #expect(String(decoding: json, as: UTF8.self).contains("\"reason\":\"\(reason.label)\""))
        #expect(try JSONDecoder().decode(Verdict.self, from: json) == verdict)
    }

    /// A label this build does not know (another version's history, a damaged file) is kept as
    /// read, never dropped or fatal: it decodes and is written back byte for byte.
    @Test func anUnknownLabelIsKeptAsRead() throws {
        #expect(VerdictReason(label: "bored") == .unrecognized("bored"))
        #expect(VerdictReason(label: "bored").label == "bored")
        #expect(VerdictReason(label: "") == .unrecognized(""))
        let line =
            #"{"v":1,"type":"round","time":100,"duration":0.5,"interval":5,"round":1,"state":"limited","reason":"bored","since":90,"families":{"ipv4":{"state":"none","reason":"no_ether"}},"probes":[]}"#
        let record = try HistoryRecord.decode(Array(line.utf8))
        guard case .round(let round) = record else {
            Issue.record("not a round: \(record)")
            return
        }
        #expect(round.overall == Verdict(.limited, reason: .unrecognized("bored")))
        #expect(round.families["ipv4"] == Verdict(.none, reason: .unrecognized("no_ether")))
        #expect(String(decoding: record.encoded(), as: UTF8.self) == line + "\n")
        #expect(try HistoryLineScanner.scan(Array(line.utf8)) == .round(RoundSummary(round)))
        let verdict = try JSONDecoder().decode(Verdict.self, from: Data(#"{"state":"limited","reason":"bored"}"#.utf8))
        #expect(verdict.reason == .unrecognized("bored"))
    }

    /// What `FaultLocator` reads of a `limited` reason: the ones that say where by themselves
    /// need no gateway check; the rest leave it to the probes and the gateway.
    @Test func whereEachReasonLocates() {
        let expected: [VerdictReason: FaultLocation] = [
            .probe(.dns): .dns, .probe(.mtu): .upstream, .partial: .upstream, .probe(.forgedReply): .upstream,
            .probe(.intercepted): .upstream, .quorum: .none, .unproven: .none, .noProbes: .none,
        ]
        for reason in VerdictReason.known + [.unrecognized("bored")] {
            #expect(reason.limitedLocation == expected[reason], "\(reason)")
            #expect(reason.explainsItself == (expected[reason] != nil), "\(reason)")
        }
    }

    /// The mixin reads scope and reason labels from mixin/lib/verdict_labels.json, which is this
    /// rendering of the types. Regenerate it with `RX_WRITE_GENERATED=1` set for this test.
    @Test func theMixinListIsTheType() throws {
        let url = RepositoryRoot.url.appendingPathComponent("mixin/lib/verdict_labels.json")
        let expected = Self.mixinList()
        if ProcessInfo.processInfo.environment["RX_WRITE_GENERATED"] == "1" {
            try Data(expected.utf8).write(to: url)
        }
        let shipped = try String(contentsOf: url, encoding: .utf8)
        #expect(
            shipped == expected,
            "mixin/lib/verdict_labels.json differs from Scope and VerdictReason; expected:\n\(expected)")
    }

    /// The classifier's own reasons by case name, each group in declaration order.
    static let ruleNames: [(String, VerdictReason)] = [
        ("noProbes", .noProbes), ("partial", .partial), ("quorum", .quorum), ("unproven", .unproven),
        ("portal", .portal), ("captivePortalAPI", .captivePortalAPI),
    ]

    /// `{"scope": {label: label}, "rule": {case: label}, "path": {…}, "probe": {…}}`, one key a line.
    static func mixinList() -> String {
        #expect(ruleNames.map(\.1) == VerdictReason.rules, "a rule of VerdictReason is missing from ruleNames")
        func group(_ name: String, _ pairs: [(String, String)]) -> String {
            "  \"\(name)\": {\n" + pairs.map { "    \"\($0.0)\": \"\($0.1)\"" }.joined(separator: ",\n") + "\n  }"
        }
        let groups = [
            group("scope", ([.overall] + IPFamily.allCases.map(Scope.family)).map { ($0.label, $0.label) }),
            group("rule", ruleNames.map { ($0.0, $0.1.label) }),
            group("path", PathUnsatisfiedReason.allCases.map { ("\($0)", VerdictReason.path($0).label) }),
            group("probe", FailureReason.allCases.map { ("\($0)", VerdictReason.probe($0).label) }),
        ]
        return "{\n"
            + "  \"//\": \"Generated from Scope and VerdictReason (Sources/ReachabilityVerdict/Verdict/VerdictReason.swift)"
            + " by VerdictReasonTests, which fails when they differ: do not edit.\",\n"
            + groups.joined(separator: ",\n") + "\n}\n"
    }
}
