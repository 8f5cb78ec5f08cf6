import Foundation
import Testing

@testable import Reachability

/// The verdict's reasons: labels unique and stable, every label read back as the reason it was,
/// an unknown label kept as read, and where each reason locates.
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
        #expect(VerdictReason.rules.map(\.label) == ["no_probes", "partial", "quorum", "unproven", "portal"])
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
}
