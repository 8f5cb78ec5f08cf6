import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// One home per setting: each default lives in its settings type (the scheduler's
/// `MonitorSettings`, the verdict's `VerdictSettings`, each prober's configuration, as
/// blackbox_exporter's `Default*Probe`), and the flags, their help, the configuration file and
/// the library render it from there.
@Suite struct DefaultsTests {
    static func flagDefault(_ name: String) -> String? {
        guard let spec = ExporterCommand.serveFlags.first(where: { $0.name == name }),
            case .value(let value) = spec.kind
        else { return nil }
        return value
    }

    @Test func flagDefaultsAreRenderedFromTheSettingsTypes() {
        let monitor = MonitorSettings()
        let verdict = VerdictSettings()
        let expected: [(String, String)] = [
            ("probe.interval", DurationParser.format(monitor.interval)),
            ("probe.timeout", DurationParser.format(monitor.timeout)),
            ("probe.fast-recheck", DurationParser.format(monitor.fastRecheck)),
            ("probe.mode", verdict.policy.description),
            ("probe.fail-after", String(verdict.failAfter)),
            ("probe.recover-after", String(verdict.recoverAfter)),
            ("probe.icmp.count", String(ICMPProber.Configuration.defaultCount)),
            ("probe.mtu.expect", String(MTUProber.Configuration.defaultExpect)),
            ("history.max-file-size", ByteSizeParser.format(HistoryConfig(directory: "").maxFileSize)),
            ("history.max-total-size", ByteSizeParser.format(HistoryConfig(directory: "").maxTotalSize)),
            ("history.retention", DurationParser.format(HistoryConfig(directory: "").retention)),
            ("web.max-connections", String(HTTPServer.Options().maxConnections)),
            ("web.max-connections-per-ip", String(HTTPServer.Options().maxConnectionsPerIP)),
        ]
        // What the help has always said, so a rendering that drifts is seen.
        #expect(
            ["5s", "3s", "1s", "parallel", "3", "2", "3", "1500", "64MiB", "1GiB", "30d", "1024", "256"]
                == expected.map(\.1))
        for (flag, value) in expected {
            #expect(Self.flagDefault(flag) == value, "--\(flag)")
        }
        // --help shows them so: "(default: 5s)".
        let help = FlagParser(ExporterCommand.serveFlags).helpText()
        #expect(help.contains("default: \(DurationParser.format(monitor.timeout))"))
    }

    /// Flags, the file and the library resolve to the same settings when nothing is given.
    @Test func flagsFileAndLibraryAgreeWithTheSettingsTypes() throws {
        let none = try ExporterOptions.resolve(
            flags: ConfigPrecedenceTests.flags(["--probe.icmp=127.0.0.1", "--probe.mtu=127.0.0.1"]), file: nil,
            environment: ConfigPrecedenceTests.refuse)
        #expect(none.settings.interval == MonitorSettings().interval)
        #expect(none.settings.timeout == MonitorSettings().timeout)
        #expect(none.settings.fastRecheck == MonitorSettings().fastRecheck)
        #expect(none.settings.verdict == VerdictSettings())
        #expect(Reachability.Configuration(probes: []).timeout == MonitorSettings().timeout)
        #expect(Reachability.Configuration(probes: []).interval == MonitorSettings().interval)
        // The file decodes each kind's section over the kind's own defaults.
        let decoded = try ConfigLoader.parse(
            "probes:\n  - {type: icmp, target: h}\n  - {type: mtu, target: h}\n", file: "t.yml")
        #expect(decoded.probes[0].configuration.isEqual(to: ICMPProber.Configuration(host: "h")))
        #expect(decoded.probes[1].configuration.isEqual(to: MTUProber.Configuration(host: "h")))
        #expect(ICMPProber.Configuration(host: "h").count == Probe.defaultICMPCount)
        #expect(MTUProber.Configuration(host: "h").expect == Probe.defaultMTUExpect)
        let file = try ConfigPrecedenceTests.setup(
            "probes:\n  - type: icmp\n    target: 127.0.0.1\n  - type: mtu\n    target: 127.0.0.1\n")
        #expect(file.settings == none.settings)
    }

    /// Every prober's configuration error names its field; the file's error points at its key.
    @Test func aConfigurationErrorNamesItsField() throws {
        let cases: [(String, ProbeField, () throws -> Void)] = [
            ("tcp family", .family, { _ = try TCPProbeConfig(target: "127.0.0.1:9", family: .ipv6) }),
            ("tcp expect", .tcpExpect, { _ = try TCPProbeConfig(target: "127.0.0.1:9", expect: "(") }),
            ("dns server", .dnsServer, { _ = try DNSProbeConfig(name: "example.com", server: "quic://192.0.2.1") }),
            ("http url", .target, { _ = try HTTPProbeConfig(url: "ftp://x/") }),
            ("icmp count", .icmpCount, { try ICMPProber.Configuration(host: "h", count: 0).validate() }),
            ("mtu expect", .mtuExpect, { try MTUProber.Configuration(host: "h", expect: 10).validate() }),
        ]
        for (what, field, make) in cases {
            do {
                try make()
                Issue.record("\(what) was accepted")
            } catch let error as ProbeConfigError {
                #expect(error.field == field, "\(what): \(error.field) \(error.message)")
            } catch {
                Issue.record("\(what): \(error) is not a ProbeConfigError")
            }
        }
        do {
            _ = try ConfigPrecedenceTests.setup(
                "probes:\n  - type: tcp\n    target: 127.0.0.1:9\n    tcp: {expect: \"(\"}\n")
            Issue.record("a bad tcp.expect was accepted")
        } catch {
            #expect("\(error)".contains("probes[0].tcp.expect: expected a regular expression"), "\(error)")
        }
    }
}
