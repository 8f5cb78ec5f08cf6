import Foundation
import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// The README is the guide; the reference it links to is in docs/. These tests keep that
/// reference complete and true: every metric the exporter can register is in docs/metrics.md,
/// every flag of `--help` in docs/flags.md (and nothing else), the README links to both, its
/// configuration example loads, and no relative link of the README or docs/ dangles.
@Suite struct ReadmeTests {
    static var readme: String { document("README.md") }

    /// A file of the checkout as text ("" when it cannot be read).
    static func document(_ path: String) -> String {
        (try? String(contentsOf: RepositoryRoot.url.appendingPathComponent(path), encoding: .utf8)) ?? ""
    }

    /// docs/metrics.md names every metric of the catalog, and the README links to it.
    @Test func metricReferenceIsComplete() throws {
        let reference = Self.document("docs/metrics.md")
        try #require(!reference.isEmpty, "docs/metrics.md not found")
        let missing = MetricCatalog.all.map(\.name).filter { !reference.contains("`\($0)`") }
        #expect(missing.isEmpty, "not in the metric reference (docs/metrics.md): \(missing)")
        #expect(Self.readme.contains("](docs/metrics.md)"), "the README does not link to docs/metrics.md")
        #expect(Set(MetricCatalog.all.map(\.name)).count == MetricCatalog.all.count, "a name is in the catalog twice")
    }

    /// Everything the parts register comes from the catalog: nothing is served that it does not name.
    @Test func everyRegisteredMetricIsInTheCatalog() throws {
        let registry = MetricsRegistry()
        ProcessMetrics.register(in: registry)
        _ = ExporterMetrics(registry: registry)
        _ = ConfigMetrics(registry: registry)
        _ = HistoryMetrics(registry: registry)
        _ = PassiveMetrics(registry: registry)
        _ = CaptivePortalMetrics(registry: registry)
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
        registry.gauge(MetricCatalog.exporterBuildInfo).labels("a", "b", "c", "d", "linux", "amd64").set(1)
        var labelled = ProbeSpec(name: "a", type: .tcp, target: "a") { _ in UnusableProber(type: .tcp, problem: "x") }
        labelled.labels = [ProbeLabel("site", "x")]
        _ = ConfigMetrics(registry: registry)
        ProbeLabelsMetric(registry: registry).set([labelled], uplinks: [])
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

    /// docs/flags.md documents every flag of `--help`, its flag table shows no flag that
    /// `--help` lacks, and the README links to it.
    @Test func everyFlagIsDocumented() throws {
        let reference = Self.document("docs/flags.md")
        try #require(!reference.isEmpty, "docs/flags.md not found")
        let known = ExporterCommand.serveFlags.map(\.name)
        let missing = known.filter { $0 != "help" && $0 != "version" }.filter {
            !reference.contains("--\($0)") && !reference.contains("--[no-]\($0)")
        }
        #expect(missing.isEmpty, "flags missing from the flag reference (docs/flags.md): \(missing)")
        // The table's rows: "| `--name=VALUE` |", "| `--[no-]name` |", "| `--help`, `-h` |".
        let shown = reference.split(separator: "\n").filter { $0.hasPrefix("| `--") }.map { row -> String in
            var name = row.dropFirst("| `--".count)
            if name.hasPrefix("[no-]") { name = name.dropFirst("[no-]".count) }
            return String(name.prefix { $0 != "=" && $0 != "`" })
        }
        #expect(shown.count >= known.count, "docs/flags.md's table has \(shown.count) rows for \(known.count) flags")
        let unknown = shown.filter { !known.contains($0) }
        #expect(unknown.isEmpty, "docs/flags.md shows flags that --help does not have: \(unknown)")
        #expect(Self.readme.contains("](docs/flags.md)"), "the README does not link to docs/flags.md")
    }

    /// A flag whose setting the file also has names the file's key in `--help`, and that key is
    /// one docs/configuration.md documents (a global one in its "Flags and the file" table).
    @Test func flagsNameTheirFileKeys() throws {
        let reference = Self.document("docs/configuration.md")
        try #require(!reference.isEmpty)
        let help = FlagParser(ExporterCommand.serveFlags).helpText()
        let keyed = ExporterCommand.serveFlags.filter { $0.fileKey != nil }
        #expect(keyed.count >= 19, "\(keyed.map(\.name))")
        for spec in keyed {
            let key = spec.fileKey!
            #expect(help.contains("(file: \(key))"), "--help does not name \(key) for --\(spec.name)")
            let path = String(key.prefix { $0 != " " })
            for component in path.split(separator: ".") {
                #expect(
                    reference.contains("`\(component)`") || reference.contains("`\(component): "),
                    "docs/configuration.md has no key \(component) (--\(spec.name))")
            }
            if !key.hasSuffix("of a file probe") {
                #expect(reference.contains("`\(path)`"), "the flags-and-file table lacks \(path) (--\(spec.name))")
            }
        }
    }

    /// The README's configuration example (its yaml block with `probes:`) loads and builds its
    /// probes, as docs/configuration.md's examples do.
    @Test func theReadmeConfigurationExampleLoads() throws {
        let blocks = Self.readme.components(separatedBy: "```yaml\n").dropFirst().compactMap {
            $0.components(separatedBy: "```").first
        }.filter { $0.contains("\nprobes:\n") }
        try #require(blocks.count == 1, "expected one configuration example in the README, found \(blocks.count)")
        do throws(ConfigError) {
            _ = try CheckConfigCommand.check(ConfigLoader.parse(blocks[0], file: "README.yml"))
        } catch {
            Issue.record("the README's configuration example: \(error)")
        }
    }

    /// Every relative link of the README and of docs/*.md names a file or folder of the
    /// checkout, and every `#anchor` into a Markdown file names one of its headings (GitHub's
    /// rule: lower case, punctuation dropped, spaces to hyphens): moving a section cannot leave
    /// a link dangling.
    @Test func relativeLinksResolve() throws {
        let root = RepositoryRoot.url
        let docs = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
        try #require(docs.contains("docs/README.md"), "docs/README.md (the index) not found")
        var checked = 0
        var broken: [String] = []
        for file in ["README.md"] + docs {
            let folder = root.appendingPathComponent(file).deletingLastPathComponent()
            for link in Self.links(in: Self.document(file)) where !link.contains("://") && !link.hasPrefix("mailto:") {
                checked += 1
                let parts = link.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                let path = String(parts[0])
                let target =
                    path.isEmpty
                    ? root.appendingPathComponent(file) : folder.appendingPathComponent(path).standardizedFileURL
                guard FileManager.default.fileExists(atPath: target.path) else {
                    broken.append("\(file): \(link) (no such file)")
                    continue
                }
                if parts.count == 2, target.pathExtension == "md" {
                    let text = (try? String(contentsOf: target, encoding: .utf8)) ?? ""
                    if !Self.headingAnchors(in: text).contains(String(parts[1])) {
                        broken.append("\(file): \(link) (no such heading)")
                    }
                }
            }
        }
        #expect(checked > 50, "only \(checked) relative links found")
        #expect(broken.isEmpty, "broken links: \(broken)")
    }

    /// The targets of the inline links `[text](target)` outside fenced code blocks.
    static func links(in markdown: String) -> [String] {
        outsideCodeBlocks(markdown).flatMap { part in
            part.components(separatedBy: "](").dropFirst().compactMap { rest -> String? in
                guard let end = rest.firstIndex(of: ")") else { return nil }
                let target = String(rest[..<end])
                return target.isEmpty || target.contains(" ") ? nil : target
            }
        }
    }

    /// The anchors GitHub gives the headings of a Markdown file.
    static func headingAnchors(in markdown: String) -> Set<String> {
        var anchors = Set<String>()
        for part in outsideCodeBlocks(markdown) {
            for line in part.split(separator: "\n") where line.hasPrefix("#") {
                let title = line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces).lowercased()
                let kept = title.filter { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == " " }
                anchors.insert(kept.replacingOccurrences(of: " ", with: "-"))
            }
        }
        return anchors
    }

    /// The text between fenced code blocks (the even pieces between ``` fences).
    static func outsideCodeBlocks(_ markdown: String) -> [String] {
        markdown.components(separatedBy: "```").enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
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
