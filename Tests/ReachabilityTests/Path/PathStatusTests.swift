import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// The path rule as a pure function of interfaces, addresses and default routes.
@Suite struct PathStatusTests {
    static let lo = NetworkInterface(
        index: 1, name: "lo", type: .loopback, hardwareType: 772,
        isUp: true, hasCarrier: true)
    static func link(
        _ index: Int, _ name: String, up: Bool = true, carrier: Bool = true,
        type: InterfaceType = .ethernet
    ) -> NetworkInterface {
        NetworkInterface(index: index, name: name, type: type, isUp: up, hasCarrier: carrier)
    }
    static func v4(_ index: Int, _ text: String = "192.0.2.2", scope: AddressScope = .global) -> InterfaceAddress {
        InterfaceAddress(
            family: .ipv4, address: text, prefixLength: 24, interfaceIndex: index,
            interfaceName: "if\(index)", scope: scope)
    }
    static func v6(
        _ index: Int, _ text: String = "2001:db8::2", scope: AddressScope = .global,
        tentative: Bool = false, duplicate: Bool = false
    ) -> InterfaceAddress {
        InterfaceAddress(
            family: .ipv6, address: text, prefixLength: 64, interfaceIndex: index,
            interfaceName: "if\(index)", scope: scope, isTentative: tentative,
            isDuplicate: duplicate)
    }
    static func route(_ family: IPFamily, _ index: Int, metric: UInt32 = 100) -> DefaultRoute {
        DefaultRoute(
            family: family, gateway: family == .ipv4 ? "192.0.2.1" : "fe80::1",
            interfaceIndex: index, interfaceName: "if\(index)", metric: metric)
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var family: IPFamily
        var interfaces: [NetworkInterface]
        var addresses: [InterfaceAddress]
        var routes: [DefaultRoute]
        var expected: PathStatus
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "nothing at all", family: .ipv4, interfaces: [], addresses: [], routes: [],
            expected: .unsatisfied(reason: .noInterface)),
        Case(
            name: "only loopback, even with a default route through it", family: .ipv4,
            interfaces: [lo], addresses: [v4(1, "127.0.0.1", scope: .host)], routes: [route(.ipv4, 1)],
            expected: .unsatisfied(reason: .noInterface)),
        Case(
            name: "interface administratively down", family: .ipv4,
            interfaces: [lo, link(2, "eth0", up: false, carrier: false)], addresses: [v4(2)],
            routes: [route(.ipv4, 2)], expected: .unsatisfied(reason: .noInterface)),
        Case(
            name: "up without carrier", family: .ipv4,
            interfaces: [lo, link(2, "eth0", carrier: false)], addresses: [v4(2)],
            routes: [route(.ipv4, 2)], expected: .unsatisfied(reason: .noCarrier)),
        Case(
            name: "carrier without address", family: .ipv4, interfaces: [lo, link(2, "eth0")],
            addresses: [v6(2)], routes: [route(.ipv4, 2)], expected: .unsatisfied(reason: .noAddress)),
        Case(
            name: "address without default route", family: .ipv4, interfaces: [lo, link(2, "eth0")],
            addresses: [v4(2)], routes: [route(.ipv6, 2)],
            expected: .unsatisfied(reason: .noDefaultRoute)),
        Case(
            name: "satisfied", family: .ipv4, interfaces: [lo, link(2, "eth0")], addresses: [v4(2)],
            routes: [route(.ipv4, 2)], expected: .satisfied(interface: "eth0")),
        Case(
            name: "IPv6 link-local alone is no address", family: .ipv6,
            interfaces: [lo, link(2, "eth0")], addresses: [v6(2, "fe80::2", scope: .link)],
            routes: [route(.ipv6, 2)], expected: .unsatisfied(reason: .noAddress)),
        Case(
            name: "IPv6 tentative global address is no address", family: .ipv6,
            interfaces: [lo, link(2, "eth0")], addresses: [v6(2, tentative: true)],
            routes: [route(.ipv6, 2)], expected: .unsatisfied(reason: .noAddress)),
        Case(
            name: "IPv6 duplicate address is no address", family: .ipv6,
            interfaces: [lo, link(2, "eth0")], addresses: [v6(2, duplicate: true)],
            routes: [route(.ipv6, 2)], expected: .unsatisfied(reason: .noAddress)),
        Case(
            name: "IPv6 global address satisfied", family: .ipv6, interfaces: [lo, link(2, "eth0")],
            addresses: [v6(2, "fe80::2", scope: .link), v6(2)], routes: [route(.ipv6, 2)],
            expected: .satisfied(interface: "eth0")),
        Case(
            name: "lowest metric wins", family: .ipv4,
            interfaces: [lo, link(2, "eth0"), link(3, "wlan0", type: .wifi)],
            addresses: [v4(2), v4(3, "198.51.100.2")],
            routes: [route(.ipv4, 2, metric: 600), route(.ipv4, 3, metric: 100)],
            expected: .satisfied(interface: "wlan0")),
        Case(
            name: "a dead lower-metric route is skipped", family: .ipv4,
            interfaces: [lo, link(2, "eth0", carrier: false), link(3, "wlan0", type: .wifi)],
            addresses: [v4(2), v4(3, "198.51.100.2")],
            routes: [route(.ipv4, 2, metric: 100), route(.ipv4, 3, metric: 600)],
            expected: .satisfied(interface: "wlan0")),
        Case(
            name: "route via one interface, address on another: no_default_route", family: .ipv4,
            interfaces: [lo, link(2, "eth0"), link(3, "wlan0", type: .wifi)],
            addresses: [v4(3, "198.51.100.2")], routes: [route(.ipv4, 2)],
            expected: .unsatisfied(reason: .noDefaultRoute)),
        Case(
            name: "furthest interface decides: dead route holder, live interface without route",
            family: .ipv4, interfaces: [lo, link(2, "eth0", carrier: false), link(3, "wlan0")],
            addresses: [v4(2), v4(3, "198.51.100.2")], routes: [route(.ipv4, 2)],
            expected: .unsatisfied(reason: .noDefaultRoute)),
        Case(
            name: "route to an interface that no longer exists", family: .ipv4,
            interfaces: [lo, link(2, "eth0")], addresses: [v4(2)], routes: [route(.ipv4, 9)],
            expected: .unsatisfied(reason: .noDefaultRoute)),
        Case(
            name: "IPv4 link-scope address counts", family: .ipv4, interfaces: [lo, link(2, "eth0")],
            addresses: [v4(2, "169.254.1.2", scope: .link)], routes: [route(.ipv4, 2)],
            expected: .satisfied(interface: "eth0")),
    ]

    @Test(arguments: cases)
    func status(_ c: Case) {
        let snapshot = PathSnapshot(interfaces: c.interfaces, addresses: c.addresses, defaultRoutes: c.routes)
        #expect(snapshot.status(for: c.family) == c.expected)
        #expect(snapshot.primaryInterface(for: c.family)?.name == c.expected.interfaceName)
        #expect(snapshot.primaryRoute(for: c.family) == nil || c.expected.isSatisfied)
    }

    @Test func familiesAreIndependentAndOverall() {
        let onlyV6 = PathSnapshot(
            interfaces: [Self.lo, Self.link(2, "eth0")], addresses: [Self.v6(2)],
            defaultRoutes: [Self.route(.ipv6, 2)])
        #expect(onlyV6.status(for: .ipv4) == .unsatisfied(reason: .noAddress))
        #expect(onlyV6.status(for: .ipv6) == .satisfied(interface: "eth0"))
        #expect(onlyV6.overallSatisfied)
        #expect(!PathSnapshot.empty.overallSatisfied)
        #expect(
            PathUnsatisfiedReason.allCases.map(\.rawValue)
                == ["no_interface", "no_carrier", "no_address", "no_default_route"])
    }

    /// Ties in metric go to the lower interface index, whatever order routes come in.
    @Test func tieBreakIsStable() {
        let interfaces = [Self.lo, Self.link(2, "eth0"), Self.link(3, "eth1")]
        let addresses = [Self.v4(2), Self.v4(3, "198.51.100.2")]
        let a = PathSnapshot(
            interfaces: interfaces, addresses: addresses,
            defaultRoutes: [Self.route(.ipv4, 3), Self.route(.ipv4, 2)])
        let b = PathSnapshot(
            interfaces: interfaces.reversed(), addresses: addresses.reversed(),
            defaultRoutes: [Self.route(.ipv4, 2), Self.route(.ipv4, 3)])
        #expect(a == b)
        #expect(a.status(for: .ipv4) == .satisfied(interface: "eth0"))
    }

    @Test func fakeSnapshotsCoverTheStates() {
        #expect(FakeSnapshots.both.status(for: .ipv4) == .satisfied(interface: "eth0"))
        #expect(FakeSnapshots.noCarrier.status(for: .ipv6) == .unsatisfied(reason: .noCarrier))
    }
}

private enum FakeSnapshots {
    static let both = FakePathSource.snapshot()
    static let noCarrier = FakePathSource.snapshot(carrier: false)
}
