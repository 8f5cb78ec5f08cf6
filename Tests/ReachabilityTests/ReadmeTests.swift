import Foundation
import ReachabilityTestSupport
import Testing
@testable import Reachability

/// The README's metric reference must name every metric the exporter can register.
@Suite struct ReadmeTests {
    static var readme: String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return (try? String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)) ?? ""
    }

    @Test func metricReferenceIsComplete() throws {
        let registry = MetricsRegistry()
        ProcessMetrics.register(in: registry)
        _ = ExporterMetrics(registry: registry)
        _ = ConfigMetrics(registry: registry)
        _ = HistoryMetrics(registry: registry)
        PathMetrics.register(in: registry, source: FakePathSource(FakePathSource.snapshot(name: "eth0", type: .ethernet, families: [.ipv4], carrier: true)))
        _ = try HTTPServer(listen: ListenAddress(host: "127.0.0.1", port: 0), registry: registry) { _ in HTTPResponse(status: 200, text: "") }
        registry.gauge("reachability_exporter_build_info", help: "x", labels: ["version", "revision", "swiftversion"]).labels("a", "b", "c").set(1)
        let names = registry.renderString().split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.map { String($0.split(separator: " ")[2]) }
        #expect(names.count > 40)
        let readme = Self.readme
        try #require(!readme.isEmpty, "README.md not found")
        let missing = names.filter { !readme.contains("`\($0)`") }
        #expect(missing.isEmpty, "not in the README's metric reference: \(missing)")
    }

    @Test func everyFlagIsDocumented() {
        let readme = Self.readme
        let missing = ExporterCommand.serveFlags.map(\.name).filter { $0 != "help" && $0 != "version" }.filter { !readme.contains("--\($0)") && !readme.contains("--[no-]\($0)") }
        #expect(missing.isEmpty, "flags missing from the README: \(missing)")
    }
}
