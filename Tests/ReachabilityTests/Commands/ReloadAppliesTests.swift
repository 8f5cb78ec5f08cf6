import Foundation
import ReachabilityTestSupport
import Synchronization
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// What a reload of the file does to a running monitor and recorder, wired as the exporter
/// wires them (`ConfigReloader` hands the file's probes and settings to the monitor): a removed
/// probe leaves no series in any family, and the uplinks' policy routing of the new file is the
/// one the next round's sockets get.
@Suite struct ReloadAppliesTests {
    /// A file on disk, its reloader, and the monitor and recorder it reconfigures; the file's
    /// probes are answered by `probers` (by name) instead of the network.
    final class Running {
        let path = NSTemporaryDirectory() + "rx-reload-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).yml"
        let registry = MetricsRegistry()
        let monitor: ReachabilityMonitor<ManualClock>
        let reloader: ConfigReloader

        init(_ text: String, probers: [String: any Prober]) throws {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            let env = [ProbeFlags.refuseDefaultsVariable: "1"]
            let flags = try FlagParser(ExporterCommand.serveFlags).parse([])
            let setup = try ExporterOptions.resolve(
                flags: flags, file: ConfigLoader.load(path: path), environment: env)
            let scripted: @Sendable ([ProbeSpec]) -> [ProbeSpec] = { specs in
                specs.map { spec in
                    var spec = spec
                    let prober = probers[spec.name]!
                    spec.make = { _ in prober }
                    return spec
                }
            }
            let recorder = MetricsRecorder(
                registry: registry, probes: setup.specs, uplinks: setup.settings.uplinks,
                uplinkProbes: setup.settings.uplinkProbes)
            let monitor = ReachabilityMonitor(
                probes: scripted(setup.specs), settings: setup.settings, observers: [recorder], clock: ManualClock(),
                wallClock: { 10 })
            self.monitor = monitor
            reloader = ConfigReloader(
                path: path, flags: flags, environment: env, initial: setup, registry: registry,
                logger: Logger(level: .error, fd: -1)
            ) { await monitor.reconfigure(probes: scripted($0), settings: $1, runRound: $2) }
        }

        /// Writes `text` and reloads it.
        func reload(_ text: String) async throws -> ConfigReloader.Summary {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return try await reloader.reload(trigger: "test").get()
        }

        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    static let kept = "  - {name: kept, type: tcp, target: 127.0.0.1:9}\n"
    static let gone = "  - {name: gone, type: mtu, target: 127.0.0.1, labels: {site: lab}}\n"
    static func file(_ probes: String, uplinks: String = "uplinks: [wan0]\n") -> String {
        "global:\n  path_monitor: false\n" + uplinks + "probes:\n" + probes
    }

    /// A success that carries every detail a result can have (echoes, HTTP, DNS, path MTU,
    /// phases), so the probe has a series in every family that has a `target` label.
    static var everyDetail: ProbeResult {
        var http = HTTPDetail(statusCode: 200)
        http.certificateNotAfter = 2_000_000_000
        var r = ProbeResult(
            status: .success, duration: .milliseconds(3), phases: [.connect: .milliseconds(1)],
            icmp: ICMPDetail(sent: 2, received: 2, rtts: [.milliseconds(1)], ttl: 64), http: http,
            dns: DNSDetail(rcode: 0, answers: 1, addresses: ["127.0.0.1"]))
        r.mtu = 1500
        return r
    }

    /// The families (by `# TYPE` line) with a series whose target label is `name` or `name@…`.
    static func families(of name: String, in text: String) -> Set<String> {
        var family = ""
        var found: Set<String> = []
        for line in text.split(separator: "\n") {
            if line.hasPrefix("# TYPE ") {
                family = String(line.split(separator: " ")[2])
            } else if !line.hasPrefix("#"), line.contains("target=\"\(name)\"") || line.contains("target=\"\(name)@") {
                found.insert(family)
            }
        }
        return found
    }

    @Test func aRemovedProbeLeavesNoSeriesInAnyFamily() async throws {
        let clock = ManualClock()
        let gone = ScriptedProber(type: .mtu, clock: clock)
        let running = try Running(
            Self.file(Self.kept + Self.gone),
            probers: ["kept": ScriptedProber(type: .tcp, clock: clock), "gone": gone])
        // A failure, a portal signal, then a success with every detail: each family gets its series.
        for result in [
            ProbeResult.failure(.mtu, "scripted", duration: .milliseconds(2)),
            ProbeResult(status: .portal, reason: .redirect, duration: .milliseconds(2)), Self.everyDetail,
        ] {
            gone.set(result)
            _ = await running.monitor.check()
        }
        let everyFamily = Set(MetricCatalog.all.filter { $0.labels.contains("target") }.map(\.name))
        let before = running.registry.renderString()
        #expect(Self.families(of: "gone", in: before) == everyFamily, "the probe must reach every family")
        #expect(before.contains("target=\"gone@wan0\""))

        #expect(try await running.reload(Self.file(Self.kept)).removed == ["gone"])
        _ = await running.monitor.check()
        let after = running.registry.renderString()
        #expect(Self.families(of: "gone", in: after).isEmpty, "\(after)")
        #expect(Self.families(of: "kept", in: after).contains("reachability_probes_total"))
    }

    /// Answers success, keeping the uplink routing in force for each call it gets.
    final class RoutingWitness: Prober {
        let type = ProbeType.tcp
        let seen = Mutex<[[String: UplinkRouting]]>([])
        func probe(deadline: ContinuousClock.Instant) async -> ProbeResult {
            seen.withLock { $0.append(UplinkRouting.table) }
            return ProbeResult(status: .success, duration: .milliseconds(1))
        }
    }

    @Test func theNextRoundRunsUnderTheReloadedUplinkRouting() async throws {
        let witness = RoutingWitness()
        let uplinks = { (mark: Int) in "uplinks: [wan0]\nuplink_settings:\n  wan0: {mark: \(mark)}\n" }
        let running = try Running(Self.file(Self.kept, uplinks: uplinks(2)), probers: ["kept": witness])
        _ = await running.monitor.check()
        _ = try await running.reload(Self.file(Self.kept, uplinks: uplinks(7)))
        _ = await running.monitor.check()
        _ = try await running.reload(Self.file(Self.kept))
        _ = await running.monitor.check()
        // Each round: the probe through the routing table and the one bound to wan0.
        #expect(
            witness.seen.withLock { $0 } == [
                ["wan0": UplinkRouting(mark: 2)], ["wan0": UplinkRouting(mark: 2)],
                ["wan0": UplinkRouting(mark: 7)], ["wan0": UplinkRouting(mark: 7)], [:], [:],
            ])
        #expect(UplinkRouting.table.isEmpty, "nothing process-wide")
    }
}
