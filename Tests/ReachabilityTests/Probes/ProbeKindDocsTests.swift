import Foundation
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// docs/probes.md's table of kinds is a rendering of the kinds' table (`ProbeKind.all`): a kind
/// added or changed there changes the docs. Regenerate it with `RX_WRITE_GENERATED=1` set for
/// this test.
@Suite struct ProbeKindDocsTests {
    static let begin = "<!-- generated from ProbeKind.all by ProbeKindDocsTests (RX_WRITE_GENERATED=1 rewrites) -->"
    static let end = "<!-- end of generated table -->"

    /// One row a kind: its types, its file section, its flag, its target, the evidence its
    /// success gives when nothing else is known, and the `--probe.mode` policy that counts it alone.
    static func table() -> String {
        var lines = [
            "| `type` | file section | flag | target | evidence of a success (unless its settings say less) | `--probe.mode` of its own |",
            "|---|---|---|---|---|---|",
        ]
        for kind in ProbeKind.all {
            let types = kind.types.map { "`\($0.rawValue)`" }.joined(separator: ", ")
            let targets = Set(kind.types.map(kind.targetText)).sorted().joined(separator: " or ")
            let group = kind.policyGroup.map { "`\($0.rawValue)`" } ?? ""
            lines.append(
                "| \(types) | `\(kind.section)` | `--\(kind.flag.name)=\(kind.flag.placeholder)` | \(targets) | \(kind.typicalEvidence.rawValue) | \(group) |"
            )
        }
        return lines.joined(separator: "\n")
    }

    @Test func theDocsTableIsTheKindsTable() throws {
        let url = RepositoryRoot.url.appendingPathComponent("docs/probes.md")
        var text = try String(contentsOf: url, encoding: .utf8)
        let start = try #require(text.range(of: Self.begin), "docs/probes.md has no generated table")
        let stop = try #require(text.range(of: Self.end, range: start.upperBound..<text.endIndex))
        let current = text[start.upperBound..<stop.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
        if ProcessInfo.processInfo.environment["RX_WRITE_GENERATED"] == "1" {
            text.replaceSubrange(start.upperBound..<stop.lowerBound, with: "\n" + Self.table() + "\n")
            try Data(text.utf8).write(to: url)
            return
        }
        #expect(
            current == Self.table(),
            "docs/probes.md's table of kinds differs from ProbeKind.all; expected:\n\(Self.table())")
    }
}
