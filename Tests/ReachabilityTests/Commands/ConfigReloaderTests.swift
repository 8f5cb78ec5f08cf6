import Foundation
import ReachabilityTestSupport
import Synchronization
import Testing

@testable import Reachability

/// The reload coordinator in-process, with a fake path source: `uplinks: auto` follows the
/// interfaces that hold a default route, and a failed reload applies nothing.
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

        init(_ text: String, environment env: [String: String] = [ProbeFlags.refuseDefaultsVariable: "1"]) throws {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            let gate = SnapshotPathGate(source)
            let flags = try FlagParser(ExporterCommand.serveFlags).parse([])
            let setup = try ExporterOptions.resolve(
                flags: flags, file: ConfigLoader.load(path: path), environment: env,
                defaultRouteInterfaces: gate.defaultRouteInterfaces)
            reloader = ConfigReloader(
                path: path, flags: flags, environment: env, gate: gate, initial: setup, registry: registry,
                logger: Logger(level: .error, fd: -1)
            ) { [applied] _, settings, _ in applied.uplinks.withLock { $0.append(settings.uplinks) } }
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

    @Test func autoUplinksGrowWithTheDefaultRoutesAndShrinkOnlyOnReload() async throws {
        let f = try Fixture(Self.file)
        let reloader: ConfigReloader = f.reloader
        let watch = Task { await reloader.watchUplinks() }
        defer { watch.cancel() }
        #expect(await until { f.source.subscriberCount == 1 })
        f.source.send(Self.snapshot(["eth0", "wlan0"]))
        #expect(await until { f.uplinksApplied.count == 1 })
        // eth0 loses its route, then wwan0 gains one: eth0 stays an uplink until the next reload.
        f.source.send(Self.snapshot(["wlan0"]))
        f.source.send(Self.snapshot(["wlan0", "wwan0"]))
        #expect(await until { f.uplinksApplied.count == 2 })
        #expect(f.uplinksApplied == [["eth0", "wlan0"], ["eth0", "wlan0", "wwan0"]])
        let reloaded = await f.reloader.reload(trigger: "test")
        #expect(try reloaded.get().uplinks == ["wlan0", "wwan0"])
        #expect(f.uplinksApplied.last == ["wlan0", "wwan0"])
        #expect(f.registry.renderString().contains("reachability_exporter_config_last_reload_successful 1"))
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
}
