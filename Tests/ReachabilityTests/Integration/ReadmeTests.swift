import Foundation
import ReachabilityTestSupport
import Testing

@testable import Reachability

/// The README's metric reference must name every metric the exporter can register.
@Suite struct ReadmeTests {
    static var readme: String {
        let root = RepositoryRoot.url
        return (try? String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)) ?? ""
    }

    /// The README names every metric of the catalog.
    @Test func metricReferenceIsComplete() throws {
        let readme = Self.readme
        try #require(!readme.isEmpty, "README.md not found")
        let missing = MetricCatalog.all.map(\.name).filter { !readme.contains("`\($0)`") }
        #expect(missing.isEmpty, "not in the README's metric reference: \(missing)")
        #expect(Set(MetricCatalog.all.map(\.name)).count == MetricCatalog.all.count, "a name is in the catalog twice")
    }

    /// Everything the parts register comes from the catalog: nothing is served that it does not name.
    @Test func everyRegisteredMetricIsInTheCatalog() throws {
        let registry = MetricsRegistry()
        ProcessMetrics.register(in: registry)
        _ = ExporterMetrics(registry: registry)
        _ = ConfigMetrics(registry: registry)
        _ = HistoryMetrics(registry: registry)
        PathMetrics.register(
            in: registry,
            source: FakePathSource(
                FakePathSource.snapshot(name: "eth0", type: .ethernet, families: [.ipv4], carrier: true)))
        _ = try HTTPServer(listen: ListenAddress(host: "127.0.0.1", port: 0), registry: registry) { _ in
            HTTPResponse(status: 200, text: "")
        }
        let webConfig = ScratchDirectory()
        let webConfigFile = webConfig.path + "/web.yml"
        _ = FileManager.default.createFile(atPath: webConfigFile, contents: Data("http_server_config: {}\n".utf8))
        _ = try WebSecurity(path: webConfigFile, logger: Logger(level: .error), registry: registry)
        registry.gauge(MetricCatalog.exporterBuildInfo).labels("a", "b", "c").set(1)
        ConfigMetrics(registry: registry).setProbeLabels([(target: "a", labels: [ProbeLabel("site", "x")])])
        let names = registry.renderString().split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.map {
            String($0.split(separator: " ")[2])
        }
        #expect(names.count > 40)
        let catalog = Set(MetricCatalog.all.map(\.name))
        #expect(
            names.filter { !catalog.contains($0) }.isEmpty,
            "registered outside the catalog: \(names.filter { !catalog.contains($0) })")
        #expect(
            catalog.subtracting(names).isEmpty, "in the catalog but never registered: \(catalog.subtracting(names))")
    }

    @Test func theMetricsCommandPrintsTheCatalog() throws {
        let json = MetricsCommand.json(MetricCatalog.all)
        #expect(json.contains("{\"name\":\"reachability_internet_reachable\",\"type\":\"gauge\",\"labels\":[],"))
        #expect(json.split(separator: "\n").count == MetricCatalog.all.count + 2)
        #expect(MetricsCommand.table(MetricCatalog.all).contains("reachability_probe_failures_total"))
    }

    @Test func everyFlagIsDocumented() {
        let readme = Self.readme
        let missing = ExporterCommand.serveFlags.map(\.name).filter { $0 != "help" && $0 != "version" }.filter {
            !readme.contains("--\($0)") && !readme.contains("--[no-]\($0)")
        }
        #expect(missing.isEmpty, "flags missing from the README: \(missing)")
    }
}

/// Every YAML example in docs/configuration.md loads and builds its probes, so the
/// documentation cannot drift from the parser and the schema.
@Suite struct ConfigurationDocTests {
    @Test func everyYAMLExampleLoads() throws {
        let path = RepositoryRoot.url.appendingPathComponent("docs/configuration.md")
        let text = try String(contentsOf: path, encoding: .utf8)
        let blocks = text.components(separatedBy: "```yaml\n").dropFirst().compactMap {
            $0.components(separatedBy: "```").first
        }
        try #require(blocks.count >= 2, "no yaml examples found")
        for (i, block) in blocks.enumerated() {
            do throws(ConfigError) {
                _ = try CheckConfigCommand.check(ConfigLoader.parse(block, file: "example-\(i + 1).yml"))
            } catch {
                Issue.record("docs/configuration.md example \(i + 1): \(error)")
            }
        }
    }
}
