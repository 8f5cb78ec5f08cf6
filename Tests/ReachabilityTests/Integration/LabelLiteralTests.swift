import Foundation
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// Scopes and verdict reasons are types (`Scope`, `VerdictReason`); their text is written only
/// by their `label`. This test reads the sources as `ArchitectureTests` does and fails, with the
/// file and line, where a label comes back as a string literal: one of the scope, path or
/// classifier labels outside its type's file, or any literal turned into a reason or scope
/// (`VerdictReason(label: "…")`, `.unrecognized("…")`, `Scope(label: "…")`) or compared with a
/// label (`.label == "…"`).
@Suite struct LabelLiteralTests {
    /// The words only a scope or a reason means, and the files that may spell them.
    static var guarded: [String: Set<String>] {
        var out: [String: Set<String>] = [Scope.overall.label: ["Path/Scope.swift"]]
        for f in IPFamily.allCases { out[Scope.family(f).label] = [] }
        for r in VerdictReason.rules { out[r.label] = ["Verdict/VerdictReason.swift"] }
        for r in PathUnsatisfiedReason.allCases { out[r.rawValue] = ["Path/PathStatus.swift"] }
        return out
    }

    /// Where a guarded word means something else, and what.
    static let otherMeanings: [String: Set<String>] = [
        // The policy's name, and the file's key for it.
        "quorum": ["Verdict/VerdictPolicy.swift", "Config/ConfigSchema.swift"],
        // A probe row's CSS class on the status page.
        "portal": ["Web/Status/StatusPage.swift"],
    ]

    static let roots = [
        "Sources/ReachabilityVerdict", "Sources/ReachabilityExporter", "Sources/reachability_exporter",
        "Sources/ReachabilityTestSupport",
    ]

    /// `file:line: "literal"` for each literal that spells a guarded label where it may not.
    static func findings(in text: String, file: String) -> [String] {
        var out: [String] = []
        for (n, line) in code(text).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(line)
            for literal in literals(line) {
                if let allowed = guarded[literal], !allowed.contains(file),
                    otherMeanings[literal]?.contains(file) != true
                {
                    out.append("\(file):\(n + 1): \"\(literal)\"")
                }
            }
            for construct in [
                "VerdictReason(label: \"", ".unrecognized(\"", "Scope(label: \"", ".label == \"", ".label != \"",
            ]
            where line.contains(construct) {
                out.append("\(file):\(n + 1): \(construct)…")
            }
        }
        return out
    }

    /// The text with comments blanked (a line keeps its number).
    static func code(_ text: String) -> String {
        var out = ""
        var inString = false
        var inBlock = false
        var chars = text.makeIterator()
        var pending = chars.next()
        while let c = pending {
            let next = chars.next()
            if inBlock {
                if c == "*" && next == "/" {
                    inBlock = false
                    pending = chars.next()
                    continue
                }
                if c == "\n" { out.append(c) }
            } else if !inString && c == "/" && next == "/" {
                var skip = next
                while let s = skip, s != "\n" { skip = chars.next() }
                pending = skip
                continue
            } else if !inString && c == "/" && next == "*" {
                inBlock = true
                pending = chars.next()
                continue
            } else {
                if c == "\"" { inString.toggle() }
                if c == "\\" && inString, let escaped = next {
                    out.append(c)
                    out.append(escaped)
                    pending = chars.next()
                    continue
                }
                if c == "\n" { inString = false }
                out.append(c)
            }
            pending = next
        }
        return out
    }

    /// The contents of the line's one-line string literals.
    static func literals(_ line: String) -> [String] {
        var out: [String] = []
        var current: String?
        var escaped = false
        for c in line {
            if var s = current {
                if escaped {
                    escaped = false
                    s.append(c)
                } else if c == "\\" {
                    escaped = true
                    s.append(c)
                } else if c == "\"" {
                    out.append(s)
                    current = nil
                    continue
                } else {
                    s.append(c)
                }
                current = s
            } else if c == "\"" {
                current = ""
            }
        }
        return out
    }

    @Test func noLabelIsALiteralOutsideItsType() throws {
        var findings: [String] = []
        var files = 0
        for root in Self.roots {
            let url = RepositoryRoot.url.appendingPathComponent(root)
            let enumerator = FileManager.default.enumerator(atPath: url.path)
            while let relative = enumerator?.nextObject() as? String {
                guard relative.hasSuffix(".swift") else { continue }
                files += 1
                let text = try String(contentsOf: url.appendingPathComponent(relative), encoding: .utf8)
                findings += Self.findings(in: text, file: relative)
            }
        }
        #expect(files > 200)
        #expect(findings.isEmpty, "labels spelled outside their type:\n\(findings.joined(separator: "\n"))")
    }

    /// The scan sees what it is for, and not comments or other words.
    @Test func theScanFindsAReintroducedLiteral() {
        let source = """
            /// A round is "partial" when HTTPS fails.
            func f(_ v: Verdict) -> Bool {
                if v.reason?.label == "dns" { return true }  // "overall"
                let r = VerdictReason(label: "partial")
                return v.reason == .unrecognized("mtu") || "unproven" == "quorum" || "\\"ipv6" == ""
            }
            """
        #expect(
            Self.findings(in: source, file: "Verdict/X.swift") == [
                "Verdict/X.swift:3: .label == \"…", "Verdict/X.swift:4: \"partial\"",
                "Verdict/X.swift:4: VerdictReason(label: \"…", "Verdict/X.swift:5: \"unproven\"",
                "Verdict/X.swift:5: \"quorum\"", "Verdict/X.swift:5: .unrecognized(\"…",
            ])
        #expect(Self.findings(in: #"let q = "quorum""#, file: "Verdict/VerdictPolicy.swift").isEmpty)
        #expect(Self.findings(in: #"case .overall: "overall""#, file: "Path/Scope.swift").isEmpty)
        #expect(Self.findings(in: #"x["ipv4"] = 1"#, file: "Web/Y.swift") == [#"Web/Y.swift:1: "ipv4""#])
    }
}
