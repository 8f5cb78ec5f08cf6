import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// How `--config.file` and the command line combine (docs/configuration.md, "Flags and the file").
@Suite struct ConfigPrecedenceTests {
    static let refuse = [ProbeFlags.refuseDefaultsVariable: "1"]

    static func flags(_ args: [String]) throws -> ParsedFlags {
        try FlagParser(ExporterCommand.serveFlags).parse(args)
    }

    static func setup(_ file: String, _ args: [String] = []) throws -> ExporterOptions {
        let config = try ConfigLoader.parse(file, file: "rx.yml")
        return try ExporterOptions.resolve(
            flags: flags(args), file: config, environment: refuse)
    }

    static func failure(_ file: String, _ args: [String] = []) throws -> String {
        let config = try ConfigLoader.parse(file, file: "rx.yml")
        let parsed = try flags(args)
        do throws(ExporterOptions.Failure) {
            _ = try ExporterOptions.resolve(
                flags: parsed, file: config, environment: refuse)
            return "accepted"
        } catch {
            switch error {
            case .usage(let e): return "usage: \(e.message)"
            case .config(let e): return "config: \(e)"
            }
        }
    }

    static let file = """
        global:
          interval: 30s
          timeout: 4s
          policy: http
          fail_after: 5
          recover_after: 4
          fast_recheck: 2s
        probes:
          - name: file-tcp
            type: tcp
            target: 127.0.0.1:9
        """

    @Test func theFileSetsWhatNoFlagGives() throws {
        let s = try Self.setup(Self.file).settings
        #expect(s.interval == .seconds(30) && s.timeout == .seconds(4))
        #expect(s.verdict == VerdictSettings(policy: .http, failAfter: 5, recoverAfter: 4))
        #expect(s.fastRecheck == .seconds(2))
        #expect(s.uplinks == [])
    }

    @Test func explicitFlagsOverrideTheFile() throws {
        let s = try Self.setup(
            Self.file,
            ["--probe.interval=10s", "--probe.mode=quorum:2", "--probe.fail-after=1", "--probe.fast-recheck=0"]
        ).settings
        #expect(s.interval == .seconds(10))
        #expect(s.timeout == .seconds(4), "not given on the command line: the file's")
        #expect(s.verdict == VerdictSettings(policy: .quorum(minimum: 2, fraction: nil), failAfter: 1, recoverAfter: 4))
        #expect(s.fastRecheck == .zero)
    }

    @Test func flagDefaultsApplyWhereTheFileIsSilent() throws {
        let s = try Self.setup("probes:\n  - type: tcp\n    target: 127.0.0.1:9\n").settings
        #expect(s.interval == .seconds(5) && s.timeout == .seconds(3))
        #expect(s.verdict == VerdictSettings())
    }

    @Test func probeFlagsAreAddedAfterTheFileProbes() throws {
        let s = try Self.setup(Self.file, ["--probe.tcp=127.0.0.1:10", "--probe.dns=localhost"])
        #expect(s.specs.map(\.name) == ["file-tcp", "localhost", "127.0.0.1:10"])
    }

    @Test func aNameInBothIsAnError() throws {
        let file = "probes:\n  - type: tcp\n    target: 127.0.0.1:9\n"
        #expect(
            try Self.failure(file, ["--probe.tcp=127.0.0.1:9"])
                == "config: rx.yml:3:13: probes[0].name: expected a name no probe flag gives, found \"127.0.0.1:9\" (a --probe.tcp flag names a probe the same)"
        )
    }

    @Test func noProbesAnywhereFallsBackToTheDefaultsWhichTheHarnessRefuses() throws {
        #expect(
            try Self.failure("global:\n  interval: 10s\n").hasPrefix(
                "usage: no probe targets given and REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS is set"))
    }

    @Test func uplinks() throws {
        let probes = "probes:\n  - type: tcp\n    target: 127.0.0.1:9\n"
        #expect(try Self.setup("uplinks: [eth1]\n" + probes).settings.uplinks == ["eth1"])
        #expect(
            try Self.setup("uplinks: [eth1]\n" + probes, ["--probe.uplink=wan0", "--probe.uplink=wan1"]).settings
                .uplinks == ["wan0", "wan1"])
        // auto is the monitor's to resolve: the options need no path.
        let auto = try Self.setup("uplinks: auto\n" + probes)
        #expect(auto.settings.autoUplinks && auto.settings.uplinks.isEmpty)
        #expect(try !Self.setup("uplinks: [eth1]\n" + probes).settings.autoUplinks)
    }

    @Test func pathMonitor() throws {
        let on = try ConfigLoader.parse("global:\n  path_monitor: true\n", file: "rx.yml")
        let off = try ConfigLoader.parse("global:\n  path_monitor: false\n", file: "rx.yml")
        #expect(ExporterOptions.pathMonitorEnabled(try Self.flags([]), file: off) == false)
        #expect(ExporterOptions.pathMonitorEnabled(try Self.flags([]), file: on) == true)
        #expect(ExporterOptions.pathMonitorEnabled(try Self.flags(["--path.monitor"]), file: off) == true)
        #expect(ExporterOptions.pathMonitorEnabled(try Self.flags(["--no-path.monitor"]), file: on) == false)
        #expect(ExporterOptions.pathMonitorEnabled(try Self.flags([]), file: nil) == true)
    }

    @Test func timesAreCheckedAfterCombining() throws {
        #expect(
            try Self.failure(Self.file, ["--probe.timeout=40s"])
                == "config: rx.yml:2:13: global.interval: expected an interval above the timeout (40s given by --probe.timeout), found 30s"
        )
        #expect(
            try Self.failure(Self.file, ["--probe.interval=3s"])
                == "config: rx.yml:3:12: global.timeout: expected a timeout below the interval (3s given by --probe.interval), found 4s"
        )
        #expect(
            try Self.failure(Self.file, ["--probe.interval=3s", "--probe.timeout=3s"])
                == "usage: invalid value for flag '--probe.timeout': must be above 0 and below --probe.interval (3s)")
        let probe = "probes:\n  - type: tcp\n    target: 127.0.0.1:9\n    timeout: 8s\n"
        #expect(
            try Self.failure(probe, ["--probe.interval=8s"])
                == "config: rx.yml:4:14: probes[0].timeout: expected a timeout below the probe's interval (8s), found 8s"
        )
        #expect(try Self.failure(probe, ["--probe.interval=9s"]) == "accepted")
        // Found by an audit: longer than the history keeps (and near the stagger's range).
        #expect(
            try Self.failure(Self.file, ["--probe.interval=11d"])
                == "usage: invalid value for flag '--probe.interval': must be at most 10d")
        #expect(
            try Self.failure("global:\n  interval: 30d\n", [])
                == "config: rx.yml:2:13: global.interval: expected at most 10d, found 30d")
        #expect(
            try Self.failure(probe.replacingOccurrences(of: "timeout: 8s", with: "interval: 11d"), [])
                == "config: rx.yml:4:15: probes[0].interval: expected at most 10d, found 11d")
    }

    @Test func badFlagsAreUsageErrors() throws {
        #expect(
            try Self.failure(Self.file, ["--probe.mode=sometimes"])
                == "usage: invalid value \"sometimes\" for flag '--probe.mode': expected parallel, http, icmp, quorum, quorum:N or quorum:N%"
        )
        #expect(
            try Self.failure(Self.file, ["--probe.tcp=nonsense"]).hasPrefix(
                "usage: invalid value \"nonsense\" for flag '--probe.tcp'"))
    }

    @Test func labelsAreKeptByProbeName() throws {
        let s = try Self.setup(
            "probes:\n  - name: a\n    type: tcp\n    target: 127.0.0.1:9\n    labels:\n      site: home\n  - name: b\n    type: tcp\n    target: 127.0.0.1:10\n"
        )
        #expect(s.specs.map(\.labels) == [[ProbeLabel("site", "home")], []])
    }
}

/// One rule for interface names wherever one is given; a probe that cannot be bound to an
/// uplink never runs unbound under that uplink's name.
@Suite struct UplinkBindingTests {
    static func flags(_ args: [String]) throws -> ParsedFlags { try FlagParser(ExporterCommand.serveFlags).parse(args) }
    static let refuse = [ProbeFlags.refuseDefaultsVariable: "1"]

    @Test(arguments: ["eth0:1", "a b", "1234567890123456", "..", "a/b"])
    func theFlagRefusesWhatTheProbesWouldRefuse(_ name: String) throws {
        let flags = try Self.flags(["--probe.tcp=192.0.2.1:22", "--probe.uplink=\(name)"])
        #expect(throws: ExporterOptions.Failure.self) {
            _ = try ExporterOptions.resolve(
                flags: flags, file: nil, environment: Self.refuse)
        }
        // The probes' own rule agrees.
        #expect(throws: ProbeConfigError.self) { _ = try TCPProbeConfig(target: "192.0.2.1:22", interface: name) }
    }

    @Test func aBindingThatCannotBeBuiltFailsLoudlyInsteadOfRunningUnbound() async throws {
        let spec = ProbeSpec(name: "t", type: .tcp, target: "192.0.2.1:22") { iface throws(ProbeConfigError) in
            guard iface == nil else { throw ProbeConfigError(.interface, "interface \"x\": refused") }
            return UnusableProber(type: .tcp, problem: "unbound ran")
        }
        let result = await spec.prober(bound: "eth9").probe(deadline: .now + .seconds(1))
        #expect(result.status == .failure)
        #expect(result.detail == "cannot bind t to eth9: interface \"x\": refused")
    }

    @Test func theSystemResolverRunsOnTheRoutingTableOnly() throws {
        let flags = try Self.flags([
            "--probe.dns=example.com", "--probe.dns=example.com@192.0.2.53", "--probe.uplink=eth1",
        ])
        let o = try ExporterOptions.resolve(
            flags: flags, file: nil, environment: Self.refuse)
        #expect(o.specs.map { $0.interfaces(o.settings.uplinks) } == [[nil], [nil, "eth1"]])
    }

    @Test func historySettingsComeFromTheFlagsElseTheFile() throws {
        let file = try ConfigLoader.parse(
            "history:\n  dir: /var/lib/rx\n  retention: 7d\n  max_total_size: 200MiB\n", file: "t.yml")
        let fromFile = try ExporterOptions.resolve(
            flags: try Self.flags(["--probe.tcp=192.0.2.1:22"]), file: file,
            environment: Self.refuse)
        #expect(fromFile.history?.directory == "/var/lib/rx")
        #expect(fromFile.history?.retention == .seconds(7 * 86_400))
        #expect(fromFile.history?.maxTotalSize == 200 << 20)
        let fromFlag = try ExporterOptions.resolve(
            flags: try Self.flags(["--probe.tcp=192.0.2.1:22", "--history.dir=/tmp/h"]), file: file,
            environment: Self.refuse)
        #expect(fromFlag.history?.directory == "/tmp/h")
    }
}
