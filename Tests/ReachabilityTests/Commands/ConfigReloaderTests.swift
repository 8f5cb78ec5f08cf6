import Foundation
import ReachabilityTestSupport
import Synchronization
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// The reload coordinator in-process: a reload hands `uplinks: auto` to the monitor, and a
/// failed reload applies nothing. The monitor's adoption of route uplinks, with a fake path
/// source, is here too, since a reload is what drops them.
@Suite struct ConfigReloaderTests {
    /// Loopback, plus one interface per name, each up with an IPv4 address and a default route.
    static func snapshot(_ names: [String]) -> PathSnapshot {
        var interfaces = [
            NetworkInterface(
                index: 1, name: "lo", type: .loopback, hardwareType: 772, isUp: true, hasCarrier: true,
                operState: .unknown, mtu: 65536)
        ]
        var addresses: [InterfaceAddress] = []
        var routes: [DefaultRoute] = []
        for (i, name) in names.enumerated() {
            let index = i + 2
            interfaces.append(
                NetworkInterface(
                    index: index, name: name, type: .ethernet, hardwareType: 1, isUp: true, hasCarrier: true,
                    operState: .up))
            addresses.append(
                InterfaceAddress(
                    family: .ipv4, address: "192.0.2.\(index)", prefixLength: 24, interfaceIndex: index,
                    interfaceName: name))
            routes.append(
                DefaultRoute(
                    family: .ipv4, gateway: "192.0.2.1", interfaceIndex: index, interfaceName: name,
                    metric: UInt32(100 + index)))
        }
        return PathSnapshot(interfaces: interfaces, addresses: addresses, defaultRoutes: routes)
    }

    final class Fixture {
        let path = NSTemporaryDirectory() + "rx-reloader-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).yml"
        let source = FakePathSource(ConfigReloaderTests.snapshot(["eth0"]))
        final class Log: Sendable { let uplinks = Mutex<[[String]]>([]) }
        let applied = Log()
        let registry = MetricsRegistry()
        var reloader: ConfigReloader!

        init(
            _ text: String, environment env: [String: String] = [ProbeFlags.refuseDefaultsVariable: "1"],
            autoReload: Duration? = nil, loaded: String? = nil
        ) throws {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            let flags = try FlagParser(ExporterCommand.serveFlags).parse([])
            let setup = try ExporterOptions.resolve(
                flags: flags, file: ConfigLoader.load(path: path), environment: env)
            reloader = ConfigReloader(
                path: path, flags: flags, environment: env, initial: setup, registry: registry,
                logger: Logger(level: .error, fd: -1), autoReloadInterval: autoReload,
                loadedDigest: loaded.map { PasswordHash.sha256(Array($0.utf8)) }
            ) { [applied, source] _, settings, _ in
                // As the monitor does: `uplinks: auto` adopts the interfaces holding a default route.
                let adopted = settings.adoptingRouteUplinks(SnapshotPathGate(source))
                applied.uplinks.withLock { $0.append(adopted.uplinks) }
                return adopted
            }
        }

        var uplinksApplied: [[String]] { applied.uplinks.withLock { $0 } }

        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    static let file = "global:\n  path_monitor: false\nuplinks: auto\nprobes:\n  - type: tcp\n    target: 127.0.0.1:9\n"

    func until(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<200_000 {
            if condition() { return true }
            await Task.yield()
        }
        return false
    }

    final class Adoptions: RoundObserver {
        let log = Mutex<[[String]]>([])
        func roundCompleted(_ status: ReachabilityStatus) {}
        func uplinksAdopted(_ added: [String], uplinks: [String]) { log.withLock { $0.append(uplinks) } }
    }

    @Test func autoUplinksGrowWithTheDefaultRoutesAndShrinkOnlyOnReload() async throws {
        let f = try Fixture(Self.file)
        let reloaded = await f.reloader.reload(trigger: "test")
        #expect(try reloaded.get().uplinks == ["eth0"], "what the monitor applied")
        #expect(f.uplinksApplied == [["eth0"]])
        let applied = f.reloader.currentOptions.settings
        #expect(applied.autoUplinks && applied.uplinks.isEmpty)

        let source = FakePathSource(Self.snapshot(["eth0"]))
        let adoptions = Adoptions()
        let spec = ProbeSpec(name: "t", type: .tcp, target: "t") { _ in UnusableProber(type: .tcp, problem: "fake") }
        let monitor = ReachabilityMonitor(
            probes: [spec], settings: applied, path: SnapshotPathGate(source), observers: [adoptions],
            clock: ContinuousClock())
        #expect(monitor.configuration.settings.uplinks == ["eth0"], "adopted at start")
        source.send(Self.snapshot(["eth0", "wlan0"]))
        await monitor.adoptRouteUplinks()
        // eth0 loses its route, then wwan0 gains one: eth0 stays an uplink until the next reload.
        source.send(Self.snapshot(["wlan0"]))
        await monitor.adoptRouteUplinks()
        source.send(Self.snapshot(["wlan0", "wwan0"]))
        await monitor.adoptRouteUplinks()
        #expect(adoptions.log.withLock { $0 } == [["eth0", "wlan0"], ["eth0", "wlan0", "wwan0"]])
        #expect(monitor.configuration.settings.uplinks == ["eth0", "wlan0", "wwan0"])
        // A reload hands over auto again: the routes of now, eth0 dropped.
        await monitor.reconfigure(probes: [spec], settings: applied, runRound: false)
        #expect(monitor.configuration.settings.uplinks == ["wlan0", "wwan0"])
        #expect(f.registry.renderString().contains("reachability_exporter_config_last_reload_successful 1"))
    }

    /// Found by review: the recorder, made with the configured (empty) list, must hear of the
    /// uplinks the monitor adopts at start, so their series exist from the first scrape.
    @Test func theRecorderHearsOfUplinksAdoptedAtStart() {
        var settings = MonitorSettings()
        settings.autoUplinks = true
        let registry = MetricsRegistry()
        let spec = ProbeSpec(name: "t", type: .tcp, target: "t") { _ in UnusableProber(type: .tcp, problem: "fake") }
        let recorder = MetricsRecorder(registry: registry, probes: [spec], uplinks: settings.uplinks)
        let monitor = ReachabilityMonitor(
            probes: [spec], settings: settings, path: SnapshotPathGate(FakePathSource(Self.snapshot(["eth0"]))),
            observers: [recorder], clock: ContinuousClock())
        #expect(monitor.configuration.settings.uplinks == ["eth0"])
        let text = registry.renderString()
        #expect(text.contains("target=\"t@eth0\""), "\(text)")
        #expect(text.contains("reachability_uplink_connectivity_state{interface=\"eth0\""))
    }

    @Test func aFailedReloadAppliesNothing() async throws {
        let f = try Fixture(Self.file)
        try "probes:\n  - type: tcp\n    target: 127.0.0.1:9\n    intervall: 1m\n".write(
            toFile: f.path, atomically: true, encoding: .utf8)
        let result = await f.reloader.reload(trigger: "test")
        guard case .failure(let error) = result else {
            Issue.record("accepted: \(result)")
            return
        }
        #expect(error.path == "probes[0].intervall" && error.line == 4 && error.column == 5)
        #expect(f.uplinksApplied.isEmpty)
        #expect(f.registry.renderString().contains("reachability_exporter_config_last_reload_successful 0"))
    }

    /// Found by a hostile review: a reload to a file without probes fell back to the built-in
    /// public targets. Nothing is applied (no prober is built, nothing is sent), even where the
    /// environment would allow the defaults at start.
    @Test func aReloadNeverFallsBackToThePublicDefaults() async throws {
        let f = try Fixture(Self.file, environment: [:])
        for text in ["global:\n  path_monitor: false\nprobes: []\n", "global:\n  path_monitor: false\n"] {
            try text.write(toFile: f.path, atomically: true, encoding: .utf8)
            let result = await f.reloader.reload(trigger: "test")
            guard case .failure(let error) = result else {
                Issue.record("accepted: \(result)")
                return
            }
            #expect(error.description.contains("built-in public targets"), "\(error)")
        }
        #expect(f.uplinksApplied.isEmpty)
    }

    /// `--config.auto-reload-interval`: a changed file is applied without a signal; the same
    /// bytes written again are not a change; an invalid file is tried once (the running
    /// configuration stays) and not again until it changes; a reload by signal counts as having
    /// read the file.
    @Test func theFileIsReloadedWhenItsContentChanges() async throws {
        let f = try Fixture(Self.file, autoReload: .milliseconds(20))
        let reloader: ConfigReloader = f.reloader
        let watch = Task { await reloader.watchFile(every: .milliseconds(20)) }
        defer { watch.cancel() }
        func write(_ text: String) throws { try text.write(toFile: f.path, atomically: true, encoding: .utf8) }
        func metric() -> String {
            f.registry.renderString().split(separator: "\n").first {
                $0.hasPrefix("reachability_exporter_config_last_reload_successful ")
            }.map(String.init) ?? ""
        }
        // Rewritten with the same bytes: nothing happens.
        try write(Self.file)
        try await Task.sleep(for: .milliseconds(150))
        #expect(f.uplinksApplied.isEmpty)
        // Changed: applied once.
        try write(Self.file + "  - type: tcp\n    target: 127.0.0.1:10\n")
        #expect(await until { f.uplinksApplied.count == 1 })
        try await Task.sleep(for: .milliseconds(150))
        #expect(f.uplinksApplied.count == 1, "one change, one reload")
        // Invalid: refused, the running configuration stays, and it is not retried every check.
        try write("probes:\n  - type: tcp\n    target: 127.0.0.1:9\n    intervall: 1m\n")
        #expect(await until { metric().hasSuffix(" 0") })
        try await Task.sleep(for: .milliseconds(150))
        #expect(f.uplinksApplied.count == 1)
        // Fixed: applied.
        try write(Self.file)
        #expect(await until { f.uplinksApplied.count == 2 && metric().hasSuffix(" 1") })
        // A reload by signal of a new content: the watcher does not apply it a second time.
        try write(Self.file + "  - type: tcp\n    target: 127.0.0.1:11\n")
        _ = await f.reloader.reload(trigger: "signal")
        try await Task.sleep(for: .milliseconds(150))
        #expect(f.uplinksApplied.count == 3)
    }

    @Test func theAutoReloadFlagIsChecked() throws {
        func check(_ args: [String]) -> String? {
            do throws(UsageError) {
                _ = try ConfigWiring.autoReloadInterval(try FlagParser(ExporterCommand.serveFlags).parse(args))
                return nil
            } catch { return error.message }
        }
        #expect(check(["--config.file=x.yml", "--config.auto-reload-interval=30s"]) == nil)
        #expect(check(["--config.file=x.yml", "--config.auto-reload-interval=0s"]) == nil)
        #expect(
            check(["--config.file=x.yml", "--config.auto-reload-interval=100ms"])
                == "invalid value \"100ms\" for flag '--config.auto-reload-interval': expected 0s, or 1s to 10d")
        #expect(
            check(["--config.auto-reload-interval=30s"]) == "flag '--config.auto-reload-interval' needs --config.file")
    }

    /// Found by review: the watcher compared against the file as it was when the reloader was
    /// built, so a change between the start-up load and then was never applied.
    @Test func aChangeBeforeTheWatcherStartsIsAChange() async throws {
        let loaded = Self.file
        let f = try Fixture(
            Self.file + "  - type: tcp\n    target: 127.0.0.1:12\n", autoReload: .milliseconds(20), loaded: loaded)
        let reloader: ConfigReloader = f.reloader
        let watch = Task { await reloader.watchFile(every: .milliseconds(20)) }
        defer { watch.cancel() }
        #expect(await until { f.uplinksApplied.count == 1 })
    }
}
