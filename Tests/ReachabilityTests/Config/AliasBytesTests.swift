import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// Found by a hostile review (#41): aliases were bounded in count, not bytes. A 552 KB file whose
/// 2,000 probes alias one 400 KB label value became an 806 MB `/metrics` (2.4 GB peak).
@Suite struct AliasBytesTests {
    static func probes(_ count: Int, value: String) -> String {
        var text = "probes:\n  - {name: p0, type: tcp, target: \"127.0.0.1:1\", labels: {big: &big \(value)}}\n"
        for i in 1..<count { text += "  - {name: p\(i), type: tcp, target: \"127.0.0.1:1\", labels: {big: *big}}\n" }
        return text
    }

    @Test func twoThousandAliasesOfA400KBValueAreRefusedQuickly() throws {
        let text = Self.probes(2_000, value: String(repeating: "x", count: 400_000))
        #expect(text.utf8.count < ConfigLoader.maximumSize)
        let clock = ContinuousClock()
        let start = clock.now
        let error = ConfigSchemaTests.error(text) ?? "accepted"
        #expect(clock.now - start < .seconds(2))
        // 16 x the file's 0.54 MB is 8.3 MiB: the 22nd alias passes it, at its line and key.
        #expect(
            error
                == "t.yml:24:65: probes[22].labels.big: expected at most 8514 KiB of text repeated by aliases, found more (400000 bytes at each *big) (an alias copies its anchor's text; write large values once)",
            "\(error.prefix(300))")
    }

    /// Aliases of small values still load: what templating tools write.
    @Test func smallAliasesStillLoad() {
        #expect(ConfigSchemaTests.error(Self.probes(2_000, value: "edge")) == nil)
    }

    @Test func aLabelValueOrTargetPastOneKiBIsRefusedWithItsKey() {
        let value = String(repeating: "v", count: 1_025)
        #expect(
            ConfigSchemaTests.error(Self.probes(1, value: value))
                == "t.yml:2:64: probes[0].labels.big: expected a label name and value of at most 1024 bytes each, found 3 and 1025 bytes"
        )
        #expect(ConfigSchemaTests.error(Self.probes(1, value: String(value.dropFirst()))) == nil)
        let target = "probes:\n  - {type: http, target: \"http://127.0.0.1/\(String(repeating: "a", count: 1_100))\"}\n"
        #expect(
            ConfigSchemaTests.error(target)?.hasPrefix(
                "t.yml:2:26: probes[0].target: expected a target of at most 1024 bytes (it is a label value), found 1117 bytes"
            ) == true, "\(ConfigSchemaTests.error(target) ?? "accepted")")
    }
}
