import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// `NetworkModel`: real kernel messages in, snapshots out; the kernel's silent route flushes.
@Suite struct PathModelTests {
    private static func classify(_ name: String, _ kind: String?, _ type: UInt16, _ index: Int32) -> InterfaceType {
        InterfaceClassifier.classify(name: name, kind: kind, hardwareType: type, sysfs: nil)
    }

    private static func message(_ bytes: [UInt8]) -> NetlinkMessage {
        NetlinkDecoder.decode(bytes).first
            ?? NetlinkMessage(
                header: NetlinkHeader(length: 0, type: 0, flags: 0, sequence: 0, portID: 0), payload: .other(type: 0))
    }

    private static func event(_ payload: NetlinkPayload, flags: UInt16 = 0) -> NetlinkMessage {
        NetlinkMessage(
            header: NetlinkHeader(length: 0, type: 0, flags: flags, sequence: 0, portID: 0),
            payload: payload)
    }

    /// The namespace of the fixtures, built from its dump.
    private static func dumped() -> NetworkModel {
        var model = NetworkModel()
        for bytes in [
            NetlinkFixtures.linkLoopback, NetlinkFixtures.linkVeth, NetlinkFixtures.linkTun,
            NetlinkFixtures.linkBridge, NetlinkFixtures.addressLoopbackV4,
            NetlinkFixtures.addressV4, NetlinkFixtures.addressV6Global,
            NetlinkFixtures.addressV6LinkLocal, NetlinkFixtures.routeDefaultV4,
            NetlinkFixtures.routeDefaultV6, NetlinkFixtures.routeMultipathV4,
            NetlinkFixtures.routeUnreachableV4, NetlinkFixtures.routeLocalTable,
            NetlinkFixtures.done,
        ] {
            model.apply(message(bytes), classify: classify)
        }
        return model
    }

    @Test func dumpBuildsTheSnapshot() throws {
        let snapshot = Self.dumped().snapshot(changeCount: 0)
        #expect(snapshot.interfaces.map(\.name) == ["lo", "va", "tun0", "br0"])
        #expect(snapshot.interfaces.map(\.type) == [.loopback, .virtual, .vpn, .bridge])
        let va = try #require(snapshot.interface(named: "va"))
        #expect(va.isUp && va.hasCarrier && va.mtu == 1500 && va.operState == .up && va.kind == "veth")
        #expect(snapshot.interface(named: "tun0")?.isUp == false)
        // The link-local address belongs to vb, which the fixture set does not include.
        #expect(snapshot.addresses.map(\.address) == ["127.0.0.1", "192.0.2.2", "2001:db8::2"])
        #expect(snapshot.addresses.map(\.scope) == [.host, .global, .global])
        // Unreachable and local-table routes are not default routes; multipath gives two entries.
        #expect(
            snapshot.defaultRoutes.map { "\($0.family) \($0.gateway ?? "-") \($0.interfaceName) \($0.metric)" } == [
                "ipv4 192.0.2.1 va 5", "ipv4 192.0.2.1 va 9", "ipv4 192.0.2.3 va 9", "ipv6 2001:db8::1 va 7",
            ])
        #expect(snapshot.status(for: .ipv4) == .satisfied(interface: "va"))
        #expect(snapshot.status(for: .ipv6) == .satisfied(interface: "va"))
        #expect(snapshot.primaryRoute(for: .ipv4)?.metric == 5)
    }

    @Test func eventsChangeTheStatus() {
        var model = Self.dumped()
        model.apply(Self.message(NetlinkFixtures.eventVethNoCarrier), classify: Self.classify)
        #expect(model.snapshot(changeCount: 0).status(for: .ipv4) == .unsatisfied(reason: .noCarrier))
        // The IPv4 route survives carrier loss (the kernel marks it linkdown, keeps it).
        #expect(model.snapshot(changeCount: 0).defaultRoutes.count == 4)

        var model2 = Self.dumped()
        let followUp = model2.apply(Self.message(NetlinkFixtures.eventDeletedAddressV4), classify: Self.classify)
        #expect(followUp.contains(.refreshIPv4Routes))
        #expect(model2.snapshot(changeCount: 0).status(for: .ipv4) == .unsatisfied(reason: .noAddress))
        #expect(model2.snapshot(changeCount: 0).status(for: .ipv6) == .satisfied(interface: "va"))

        model2.apply(Self.message(NetlinkFixtures.eventDeletedLinkTun), classify: Self.classify)
        #expect(model2.snapshot(changeCount: 0).interface(named: "tun0") == nil)
    }

    /// Taking a link down flushes its routes; for IPv4 the kernel says nothing, so the model must.
    @Test func adminDownDropsRoutes() throws {
        var model = Self.dumped()
        guard case .newLink(var va) = Self.message(NetlinkFixtures.linkVeth).payload else {
            Issue.record("fixture")
            return
        }
        va.flags &= ~(RTNL.iffUp | RTNL.iffLowerUp)
        model.apply(Self.event(.newLink(va)), classify: Self.classify)
        let snapshot = model.snapshot(changeCount: 0)
        #expect(snapshot.defaultRoutes.isEmpty)
        #expect(snapshot.status(for: .ipv4) == .unsatisfied(reason: .noInterface))
    }

    @Test func routeDeleteAndReplace() throws {
        var model = Self.dumped()
        guard case .newRoute(var route) = Self.message(NetlinkFixtures.routeDefaultV4).payload else {
            Issue.record("fixture")
            return
        }
        model.apply(Self.event(.deletedRoute(route)), classify: Self.classify)
        #expect(model.snapshot(changeCount: 0).defaultRoutes.filter { $0.metric == 5 }.isEmpty)
        // `ip route replace default via 192.0.2.7 metric 9` replaces the multipath route.
        route.priority = 9
        route.nexthops = [RouteNexthop(interfaceIndex: 3, gateway: [192, 0, 2, 7])]
        model.apply(Self.event(.newRoute(route), flags: RTNL.flagReplace), classify: Self.classify)
        #expect(
            model.snapshot(changeCount: 0).defaultRoutes.filter { $0.family == .ipv4 }.map(\.gateway)
                == ["192.0.2.7"])
        // A route in another table is a default route of that table (policy routing): kept, but
        // it does not decide the host's own path; one of another type, or in `local`, is none.
        route.table = 100
        route.nexthops = [RouteNexthop(interfaceIndex: 3, gateway: [192, 0, 2, 8])]
        model.apply(Self.event(.newRoute(route)), classify: Self.classify)
        let routes = model.snapshot(changeCount: 0).defaultRoutes
        #expect(routes.count == 3 && routes.filter { $0.table == 100 }.map(\.gateway) == ["192.0.2.8"])
        #expect(model.snapshot(changeCount: 0).primaryRoute(for: .ipv4)?.gateway == "192.0.2.7")
        route.table = RTNL.tableLocal
        route.nexthops = [RouteNexthop(interfaceIndex: 3, gateway: [192, 0, 2, 9])]
        model.apply(Self.event(.newRoute(route)), classify: Self.classify)
        route.table = 100
        route.type = 2  // RTN_LOCAL
        route.nexthops = [RouteNexthop(interfaceIndex: 3, gateway: [192, 0, 2, 10])]
        model.apply(Self.event(.newRoute(route)), classify: Self.classify)
        #expect(model.snapshot(changeCount: 0).defaultRoutes.count == 3)
        // Deleting the table-100 route deletes that one only.
        route.type = RTNL.typeUnicast
        route.nexthops = [RouteNexthop(interfaceIndex: 3, gateway: [192, 0, 2, 8])]
        model.apply(Self.event(.deletedRoute(route)), classify: Self.classify)
        #expect(model.snapshot(changeCount: 0).defaultRoutes.map(\.table).allSatisfy { $0 == DefaultRoute.mainTable })
    }

    /// Bridge-port messages (AF_BRIDGE) share the link group; a "deleted" one is a port leaving
    /// a bridge, not a link going away.
    @Test func bridgePortMessagesAreIgnored() {
        var model = Self.dumped()
        let port = LinkMessage(family: RTNL.familyBridge, hardwareType: 1, index: 3, flags: 0, name: "va")
        model.apply(Self.event(.deletedLink(port)), classify: Self.classify)
        model.apply(Self.event(.newLink(port)), classify: Self.classify)
        #expect(model.snapshot(changeCount: 0) == Self.dumped().snapshot(changeCount: 0))
    }

    @Test func replaceTakesOneComponent() {
        var live = Self.dumped()
        var staged = NetworkModel()
        staged.apply(Self.message(NetlinkFixtures.routeDefaultV6), classify: Self.classify)  // no IPv4 routes
        live.replace(.ipv4Routes, from: staged)
        let routes = live.snapshot(changeCount: 0).defaultRoutes
        #expect(routes.map(\.family) == [.ipv6])
        live.replace(.links, from: NetworkModel())
        #expect(live.snapshot(changeCount: 0).interfaces.isEmpty)
        #expect(live.snapshot(changeCount: 0).addresses.isEmpty)  // no link, no address shown
    }

    @Test func classifiesOnlyWhenIdentityChanges() {
        var calls = 0
        var model = NetworkModel()
        let count: NetworkModel.Classify = { name, kind, type, _ in
            calls += 1
            return InterfaceClassifier.classify(name: name, kind: kind, hardwareType: type, sysfs: nil)
        }
        model.apply(Self.message(NetlinkFixtures.linkVeth), classify: count)
        model.apply(Self.message(NetlinkFixtures.eventVethNoCarrier), classify: count)
        #expect(calls == 1)
        guard case .newLink(var renamed) = Self.message(NetlinkFixtures.linkVeth).payload else { return }
        renamed.name = "uplink"
        model.apply(Self.event(.newLink(renamed)), classify: count)
        #expect(calls == 2)
        #expect(model.snapshot(changeCount: 0).interfaces.map(\.name) == ["uplink"])
    }

    @Test func millisecondsFormatsNegativeDurations() {
        #expect(milliseconds(.microseconds(1_234)) == "1.234")
        #expect(milliseconds(.microseconds(-1_234)) == "-1.234")
        #expect(milliseconds(.microseconds(-5)) == "-0.005")
        #expect(milliseconds(.zero) == "0.000")
    }
}
