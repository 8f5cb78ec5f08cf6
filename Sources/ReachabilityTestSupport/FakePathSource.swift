import ReachabilityExporter
import ReachabilityVerdict

/// A `PathSource` driven by the test: `send(_:)` publishes a snapshot to every subscriber,
/// exactly as `PathMonitor` does (same broadcaster, same stream semantics), and counts it as a
/// change. Thread-safe.
package final class FakePathSource: PathSource {
    private let broadcaster: PathBroadcaster

    package init(_ initial: PathSnapshot = FakePathSource.snapshot()) {
        broadcaster = PathBroadcaster(initial: initial)
    }

    package var current: PathSnapshot { broadcaster.current }
    package func updates() -> AsyncStream<PathSnapshot> { broadcaster.updates() }
    package var subscriberCount: Int { broadcaster.subscriberCount }

    /// Publishes `snapshot` with `changeCount` one above the current one's.
    package func send(_ snapshot: PathSnapshot) {
        var next = snapshot
        next.changeCount = broadcaster.current.changeCount + 1
        broadcaster.publish(next)
    }

    /// Ends every stream, like `PathMonitor.stop()`.
    package func finish() { broadcaster.finish() }

    /// A ready-made snapshot: loopback plus one interface `name` of `type`, up with carrier,
    /// with an address and a default route for each family in `families` (metric 100).
    /// `families: []` gives an interface with no addresses (both families `no_address`);
    /// `carrier: false` gives `no_carrier`.
    package static func snapshot(
        name: String = "eth0", type: InterfaceType = .ethernet, families: Set<IPFamily> = [.ipv4, .ipv6],
        carrier: Bool = true, changeCount: Int = 0
    ) -> PathSnapshot {
        let lo = NetworkInterface(
            index: 1, name: "lo", type: .loopback, hardwareType: 772, isUp: true,
            hasCarrier: true, operState: .unknown, mtu: 65536)
        let link = NetworkInterface(
            index: 2, name: name, type: type, hardwareType: 1, isUp: true,
            hasCarrier: carrier, operState: carrier ? .up : .lowerLayerDown)
        var addresses = [
            InterfaceAddress(
                family: .ipv4, address: "127.0.0.1", prefixLength: 8,
                interfaceIndex: 1, interfaceName: "lo", scope: .host)
        ]
        var routes: [DefaultRoute] = []
        if families.contains(.ipv4) {
            addresses.append(
                InterfaceAddress(
                    family: .ipv4, address: "192.0.2.2", prefixLength: 24,
                    interfaceIndex: 2, interfaceName: name))
            routes.append(
                DefaultRoute(
                    family: .ipv4, gateway: "192.0.2.1", interfaceIndex: 2,
                    interfaceName: name, metric: 100))
        }
        if families.contains(.ipv6) {
            addresses.append(
                InterfaceAddress(
                    family: .ipv6, address: "2001:db8::2", prefixLength: 64,
                    interfaceIndex: 2, interfaceName: name))
            routes.append(
                DefaultRoute(
                    family: .ipv6, gateway: "fe80::1", interfaceIndex: 2,
                    interfaceName: name, metric: 100))
        }
        return PathSnapshot(
            interfaces: [lo, link], addresses: addresses, defaultRoutes: routes,
            changeCount: changeCount)
    }
}
