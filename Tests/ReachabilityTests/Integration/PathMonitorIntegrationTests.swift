import Glibc
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// A `PathMonitor` running inside a fresh network namespace, with a recorder on its stream.
/// `step` runs commands and measures the time until the stream shows the expected state.
final class PathMonitorHarness {
    let namespace: PathTestNamespace
    let monitor: PathMonitor
    let recorder: PathSnapshotRecorder
    private(set) var latencies: [(String, Duration)] = []

    init(receiveBufferSize: Int = 1 << 20) throws {
        namespace = try PathTestNamespace()
        monitor = PathMonitor(
            configuration: .init(
                receiveBufferSize: receiveBufferSize,
                networkNamespacePath: namespace.path))
        do {
            try monitor.start()
        } catch {
            namespace.delete()
            throw error
        }
        recorder = PathSnapshotRecorder(monitor.updates())
    }

    func close() {
        monitor.stop()
        namespace.delete()
    }

    /// Runs `commands` in the namespace, then awaits the first published snapshot (after the
    /// commands started) that satisfies `until`; records command-start-to-element latency.
    @discardableResult
    func step(
        _ label: String, _ commands: [String], timeout: Duration = .seconds(5),
        until predicate: @escaping @Sendable (PathSnapshot) -> Bool
    ) async throws -> PathSnapshot {
        let mark = recorder.count
        let start = ContinuousClock.now
        for command in commands { try namespace.ip(command) }
        let entry = try #require(
            await recorder.first(from: mark, timeout: timeout, where: predicate),
            "no snapshot for step '\(label)'; last: \(String(describing: recorder.latest))")
        latencies.append((label, entry.at - start))
        return entry.snapshot
    }

    /// Prints one line per step, for the report, after the cost of spawning one `ip` command
    /// (which every step's latency includes).
    func printLatencies(_ test: String) {
        let start = ContinuousClock.now
        try? namespace.ip("link show lo")
        print("[path-monitor latency] \(test) / baseline: one `ip` command alone: \(milliseconds(.now - start)) ms")
        for (label, latency) in latencies {
            print("[path-monitor latency] \(test) / \(label): \(milliseconds(latency)) ms")
        }
    }
}

/// `d` in milliseconds with three decimals; negative durations too (an event stamped before the
/// batch that caused it was timed as finished), which once trapped in `String(repeating:count:)`.
func milliseconds(_ d: Duration) -> String {
    let micros = d.components.seconds * 1_000_000 + d.components.attoseconds / 1_000_000_000_000
    let fraction = String(micros.magnitude % 1000)
    return
        "\(micros < 0 ? "-" : "")\(micros.magnitude / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
}

extension PathSnapshot {
    fileprivate func v4(_ status: PathStatus) -> Bool { self.status(for: .ipv4) == status }
    fileprivate func v6(_ status: PathStatus) -> Bool { self.status(for: .ipv6) == status }
    fileprivate func link(_ name: String) -> NetworkInterface? { interface(named: name) }
}

/// The monitor inside namespaces the tests create: each kernel change must reach the stream
/// as the right path status within milliseconds (latencies are printed for the report).
/// Serialized so the measured latencies are not inflated by the other namespace tests.
@Suite(.serialized) struct PathMonitorIntegrationTests {
    @Test func vethLinkStateAndCarrier() async throws {
        let h = try PathMonitorHarness()
        defer { h.close() }
        let initial = h.monitor.current
        #expect(initial.interfaces.map(\.name) == ["lo"])
        #expect(initial.interfaces.first?.type == .loopback)
        #expect(initial.v4(.unsatisfied(reason: .noInterface)) && initial.v6(.unsatisfied(reason: .noInterface)))
        #expect(initial.changeCount == 0)

        let created = try await h.step("veth pair created", ["link add va type veth peer name vb"]) {
            $0.link("va") != nil && $0.link("vb") != nil
        }
        #expect(created.link("va")?.type == .virtual && created.link("va")?.kind == "veth")
        #expect(created.v4(.unsatisfied(reason: .noInterface)))
        try await h.step("both ends up", ["link set va up", "link set vb up"]) {
            $0.link("va")?.isRunning == true && $0.link("vb")?.isRunning == true
                && $0.v4(.unsatisfied(reason: .noAddress))
        }
        try await h.step(
            "address and default route",
            [
                "address add 192.0.2.2/24 dev va", "route add default via 192.0.2.1 dev va",
            ]
        ) { $0.v4(.satisfied(interface: "va")) }
        let lost = try await h.step("carrier lost (peer down)", ["link set vb down"]) {
            $0.v4(.unsatisfied(reason: .noCarrier))
        }
        #expect(lost.link("va")?.isUp == true && lost.link("va")?.operState == .lowerLayerDown)
        #expect(lost.defaultRoutes.count == 1)  // IPv4 keeps the route, marked linkdown
        try await h.step("carrier back (peer up)", ["link set vb up"]) { $0.v4(.satisfied(interface: "va")) }
        let down = try await h.step("va administratively down", ["link set va down"]) {
            $0.link("va")?.isUp == false && $0.v4(.unsatisfied(reason: .noCarrier))
        }
        #expect(down.defaultRoutes.isEmpty)  // flushed by the kernel without RTM_DELROUTE
        try await h.step("veth deleted", ["link del va"]) {
            $0.interfaces.map(\.name) == ["lo"] && $0.v4(.unsatisfied(reason: .noInterface))
        }
        // Each published snapshot is one more change; the stream may skip some (it keeps only
        // the newest unread one), never repeat one.
        let counts = h.recorder.snapshots.map(\.changeCount)
        #expect(h.monitor.current.changeCount >= 7)
        #expect(zip(counts, counts.dropFirst()).allSatisfy { $0 < $1 })
        #expect(counts.last == h.monitor.current.changeCount)
        h.printLatencies("veth")
    }

    @Test func ipv4AddressesAndDefaultRoutes() async throws {
        let h = try PathMonitorHarness()
        defer { h.close() }
        for command in [
            "link add va type veth peer name vb", "link add vc type veth peer name vd",
            "link set va up", "link set vb up", "link set vc up", "link set vd up",
        ] {
            try h.namespace.ip(command)
        }
        let addressed = try await h.step("address added", ["address add 192.0.2.2/24 dev va"]) {
            $0.v4(.unsatisfied(reason: .noDefaultRoute))
        }
        let address = try #require(addressed.addresses.first { $0.family == .ipv4 && $0.interfaceName == "va" })
        #expect(address.address == "192.0.2.2" && address.prefixLength == 24 && address.scope == .global)
        let routed = try await h.step("default route added", ["route add default via 192.0.2.1 dev va metric 600"]) {
            $0.v4(.satisfied(interface: "va"))
        }
        #expect(routed.primaryRoute(for: .ipv4)?.gateway == "192.0.2.1")
        #expect(routed.primaryRoute(for: .ipv4)?.metric == 600)
        #expect(routed.v6(.unsatisfied(reason: .noAddress)))
        try await h.step(
            "better route via vc",
            [
                "address add 198.51.100.2/24 dev vc", "route add default via 198.51.100.1 dev vc metric 100",
            ]
        ) { $0.primaryInterface(for: .ipv4)?.name == "vc" }
        try await h.step("better route deleted", ["route del default via 198.51.100.1 dev vc metric 100"]) {
            $0.primaryInterface(for: .ipv4)?.name == "va"
        }
        try await h.step("default route deleted", ["route del default via 192.0.2.1 dev va metric 600"]) {
            $0.v4(.unsatisfied(reason: .noDefaultRoute))
        }
        try h.namespace.ip("route add default via 192.0.2.1 dev va")
        // Deleting the address makes the kernel drop the default route silently; the monitor
        // must notice through its IPv4 route re-dump.
        // (vc keeps its address, so the reason is no_default_route, not no_address.)
        try await h.step("address deleted, route flushed", ["address del 192.0.2.2/24 dev va"]) {
            $0.v4(.unsatisfied(reason: .noDefaultRoute))
                && !$0.addresses.contains { $0.family == .ipv4 && $0.interfaceName == "va" }
                && !$0.defaultRoutes.contains { $0.family == .ipv4 && $0.interfaceName == "va" }
        }
        h.printLatencies("ipv4")
    }

    @Test func ipv6NeedsAGlobalAddress() async throws {
        let h = try PathMonitorHarness()
        defer { h.close() }
        for command in ["link add va type veth peer name vb", "link set va up", "link set vb up"] {
            try h.namespace.ip(command)
        }
        let linkLocalOnly = try await h.step(
            "default route, link-local only", ["-6 route add default via fe80::1 dev va"]
        ) {
            $0.defaultRoutes.contains { $0.family == .ipv6 && $0.gateway == "fe80::1" }
        }
        #expect(linkLocalOnly.v6(.unsatisfied(reason: .noAddress)))
        try await h.step("global address (nodad)", ["address add 2001:db8::2/64 dev va nodad"]) {
            $0.v6(.satisfied(interface: "va"))
        }
        try await h.step("global address deleted", ["address del 2001:db8::2/64 dev va"]) {
            $0.v6(.unsatisfied(reason: .noAddress))
        }
        // With duplicate address detection the address is tentative first and does not count.
        let tentative = try await h.step("tentative address", ["address add 2001:db8::3/64 dev va"]) {
            $0.addresses.contains { $0.address == "2001:db8::3" }
        }
        #expect(tentative.addresses.first { $0.address == "2001:db8::3" }?.isTentative == true)
        #expect(tentative.v6(.unsatisfied(reason: .noAddress)))
        try await h.step("DAD finished", [], timeout: .seconds(8)) { $0.v6(.satisfied(interface: "va")) }
        h.printLatencies("ipv6")
    }

    @Test func tunDeviceIsAVPN() async throws {
        let h = try PathMonitorHarness()
        defer { h.close() }
        let created = try await h.step("tun created", ["tuntap add mode tun name tun0"]) { $0.link("tun0") != nil }
        let tun = try #require(created.link("tun0"))
        #expect(tun.type == .vpn && tun.kind == "tun" && tun.hardwareType == 65534)
        try await h.step(
            "up, address, default route, no client",
            [
                "link set tun0 up", "address add 192.0.2.2/32 dev tun0", "route add default dev tun0",
            ]
        ) { $0.v4(.unsatisfied(reason: .noCarrier)) }
        // A client attaching gives the tun a carrier. The kernel's linkwatch may defer a
        // carrier-on event by up to 1 s after the device's previous one, so this latency is the
        // kernel's, not the monitor's; carrier-off (close) is immediate.
        var mark = h.recorder.count
        var start = ContinuousClock.now
        let fd = try h.namespace.attachTun("tun0")
        let attached = try #require(await h.recorder.first(from: mark) { $0.v4(.satisfied(interface: "tun0")) })
        #expect(attached.snapshot.primaryInterface(for: .ipv4)?.type == .vpn)
        #expect(attached.snapshot.primaryRoute(for: .ipv4)?.gateway == nil)
        print("[path-monitor latency] tun / client attached: \(milliseconds(attached.at - start)) ms")
        mark = h.recorder.count
        start = ContinuousClock.now
        Glibc.close(fd)
        let detached = try #require(await h.recorder.first(from: mark) { $0.v4(.unsatisfied(reason: .noCarrier)) })
        print("[path-monitor latency] tun / client detached (close -> stream): \(milliseconds(detached.at - start)) ms")
        h.printLatencies("tun")
    }

    @Test func wireguardDeviceIsAVPN() async throws {
        let h = try PathMonitorHarness()
        defer { h.close() }
        do {
            try h.namespace.ip("link add wg0 type wireguard")
        } catch {
            try Test.cancel("wireguard is not available in this kernel (\(error)); wireguard case not run")
        }
        try await h.step(
            "wireguard up with address and route",
            [
                "link set wg0 up", "address add 192.0.2.2/32 dev wg0", "route add default dev wg0",
            ]
        ) { $0.v4(.satisfied(interface: "wg0")) }
        #expect(h.monitor.current.link("wg0")?.type == .vpn)
        h.printLatencies("wireguard")
    }
}
