import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// The pure decoder against real kernel bytes (NetlinkFixtures) and against hostile input.
@Suite struct NetlinkDecoderTests {
    private func single(_ bytes: [UInt8]) throws -> NetlinkMessage {
        let messages = NetlinkDecoder.decode(bytes)
        try #require(messages.count == 1)
        return messages[0]
    }

    @Test func links() throws {
        guard case .newLink(let lo) = try single(NetlinkFixtures.linkLoopback).payload else {
            Issue.record("not a link")
            return
        }
        #expect(lo.name == "lo" && lo.index == 1 && lo.hardwareType == 772 && lo.kind == nil)
        #expect(lo.mtu == 65536 && lo.flags & RTNL.iffUp != 0 && lo.flags & RTNL.iffLowerUp != 0)

        let vethMessage = try single(NetlinkFixtures.linkVeth)
        #expect(vethMessage.header.type == RTNL.newLink && vethMessage.header.sequence == 7)
        guard case .newLink(let veth) = vethMessage.payload else {
            Issue.record("not a link")
            return
        }
        #expect(veth.name == "va" && veth.index == 3 && veth.kind == "veth" && veth.hardwareType == 1)
        #expect(veth.mtu == 1500 && veth.operState == 6)  // IF_OPER_UP
        #expect(veth.flags & RTNL.iffUp != 0 && veth.flags & RTNL.iffLowerUp != 0)

        guard case .newLink(let tun) = try single(NetlinkFixtures.linkTun).payload else {
            Issue.record("not a link")
            return
        }
        #expect(tun.name == "tun0" && tun.kind == "tun" && tun.hardwareType == 65534)
        #expect(tun.flags & RTNL.iffUp == 0 && tun.operState == 2)  // IF_OPER_DOWN

        guard case .newLink(let bridge) = try single(NetlinkFixtures.linkBridge).payload else {
            Issue.record("not a link")
            return
        }
        #expect(bridge.name == "br0" && bridge.kind == "bridge")

        guard case .newLink(let noCarrier) = try single(NetlinkFixtures.eventVethNoCarrier).payload else {
            Issue.record("not a link")
            return
        }
        #expect(noCarrier.index == 3 && noCarrier.flags & RTNL.iffUp != 0)
        #expect(noCarrier.flags & RTNL.iffLowerUp == 0 && noCarrier.operState == 3)  // LOWERLAYERDOWN

        let deleted = try single(NetlinkFixtures.eventDeletedLinkTun)
        #expect(deleted.header.sequence == 0 && deleted.header.portID == 0)
        guard case .deletedLink(let gone) = deleted.payload else {
            Issue.record("not a deletion")
            return
        }
        #expect(gone.index == 4 && gone.name == "tun0")
    }

    @Test func addresses() throws {
        guard case .newAddress(let v4) = try single(NetlinkFixtures.addressV4).payload else {
            Issue.record("not an address")
            return
        }
        #expect(v4.family == RTNL.familyInet && v4.index == 3 && v4.prefixLength == 24 && v4.scope == 0)
        #expect(v4.address == [192, 0, 2, 2])

        guard case .newAddress(let v6) = try single(NetlinkFixtures.addressV6Global).payload else {
            Issue.record("not an address")
            return
        }
        #expect(v6.family == RTNL.familyInet6 && v6.prefixLength == 64 && v6.scope == 0)
        #expect(v6.address.map(IPText.format) == "2001:db8::2")
        #expect(v6.flags & RTNL.ifaFlagTentative == 0)

        guard case .newAddress(let linkLocal) = try single(NetlinkFixtures.addressV6LinkLocal).payload else {
            Issue.record("not an address")
            return
        }
        #expect(linkLocal.scope == 253 && linkLocal.address?.prefix(2) == [0xfe, 0x80])
        #expect(linkLocal.flags & RTNL.ifaFlagTentative != 0)  // captured while DAD ran

        guard case .newAddress(let lo) = try single(NetlinkFixtures.addressLoopbackV4).payload else {
            Issue.record("not an address")
            return
        }
        #expect(lo.scope == 254 && lo.address == [127, 0, 0, 1] && lo.prefixLength == 8)

        let deleted = try single(NetlinkFixtures.eventDeletedAddressV4)
        #expect(deleted.header.portID != 0)  // an event caused by `ip`: its port, its sequence
        guard case .deletedAddress(let gone) = deleted.payload else {
            Issue.record("not a deletion")
            return
        }
        #expect(gone.address == [192, 0, 2, 2])
    }

    @Test func routes() throws {
        guard case .newRoute(let v4) = try single(NetlinkFixtures.routeDefaultV4).payload else {
            Issue.record("not a route")
            return
        }
        #expect(v4.family == RTNL.familyInet && v4.destinationLength == 0 && v4.table == 254)
        #expect(v4.type == RTNL.typeUnicast && v4.priority == 5)
        #expect(v4.nexthops == [RouteNexthop(interfaceIndex: 3, gateway: [192, 0, 2, 1])])

        guard case .newRoute(let v6) = try single(NetlinkFixtures.routeDefaultV6).payload else {
            Issue.record("not a route")
            return
        }
        #expect(v6.family == RTNL.familyInet6 && v6.priority == 7 && v6.table == 254)
        #expect(v6.nexthops.map { $0.gateway.map(IPText.format) } == ["2001:db8::1"])

        guard case .newRoute(let multi) = try single(NetlinkFixtures.routeMultipathV4).payload else {
            Issue.record("not a route")
            return
        }
        #expect(multi.priority == 9)
        #expect(
            multi.nexthops == [
                RouteNexthop(interfaceIndex: 3, gateway: [192, 0, 2, 1]),
                RouteNexthop(interfaceIndex: 3, gateway: [192, 0, 2, 3]),
            ])

        guard case .newRoute(let unreachable) = try single(NetlinkFixtures.routeUnreachableV4).payload else {
            Issue.record("not a route")
            return
        }
        #expect(unreachable.type == 7 && unreachable.nexthops.isEmpty && unreachable.priority == 50)

        guard case .newRoute(let local) = try single(NetlinkFixtures.routeLocalTable).payload else {
            Issue.record("not a route")
            return
        }
        #expect(local.table == 255)
    }

    @Test func controlMessagesAndBatches() throws {
        #expect(try single(NetlinkFixtures.done).payload == .done)
        let error = try single(NetlinkFixtures.errorNoDevice)
        #expect(error.payload == .error(errno: 19))  // ENODEV for a GETLINK of index 9999
        #expect(error.header.sequence == 8)
        // One datagram holds many messages at 4-byte aligned offsets.
        let batch =
            NetlinkFixtures.linkLoopback + NetlinkFixtures.addressV6Global
            + NetlinkFixtures.routeMultipathV4 + NetlinkFixtures.done
        let kinds = NetlinkDecoder.decode(batch).map(\.header.type)
        #expect(kinds == [RTNL.newLink, RTNL.newAddress, RTNL.newRoute, RTNL.messageDone])
    }

    static let allFixtures: [[UInt8]] = [
        NetlinkFixtures.linkLoopback, NetlinkFixtures.linkVeth, NetlinkFixtures.linkTun,
        NetlinkFixtures.linkBridge, NetlinkFixtures.addressV4, NetlinkFixtures.addressV6Global,
        NetlinkFixtures.addressV6LinkLocal, NetlinkFixtures.routeDefaultV4,
        NetlinkFixtures.routeDefaultV6, NetlinkFixtures.routeMultipathV4,
        NetlinkFixtures.routeUnreachableV4, NetlinkFixtures.errorNoDevice,
        NetlinkFixtures.eventDeletedLinkTun,
    ]

    /// Every prefix of every fixture: nothing is read beyond the buffer and a cut message is
    /// dropped, not half-decoded.
    @Test func truncatedMessagesAreDropped() {
        for fixture in Self.allFixtures {
            for cut in 0..<fixture.count {
                #expect(NetlinkDecoder.decode(Array(fixture[0..<cut])).isEmpty)
            }
            #expect(NetlinkDecoder.decode(fixture).count == 1)
        }
    }

    /// A header that claims a length the body cannot hold, attributes that lie about their
    /// length, and random bytes: all decode to something or nothing, never a crash.
    @Test func garbageNeverCrashes() {
        var lying = NetlinkFixtures.routeMultipathV4
        lying[16 + 12 + 8 + 8] = 0xff  // RTA_MULTIPATH claims 255 bytes; 36 remain
        guard case .newRoute(let cut)? = NetlinkDecoder.decode(lying).first?.payload else {
            Issue.record("route lost")
            return
        }
        #expect(cut.priority == 9 && cut.nexthops.isEmpty)
        var shortBody = NetlinkFixtures.done
        shortBody[4] = UInt8(RTNL.newRoute)  // a route message whose body is 4 bytes
        #expect(NetlinkDecoder.decode(shortBody).map(\.payload) == [.malformed(type: RTNL.newRoute)])
        var zeroLength = NetlinkFixtures.done
        zeroLength[0] = 0
        #expect(NetlinkDecoder.decode(zeroLength).isEmpty)
        var generator = SplitMix64(seed: 0x5eed)
        for round in 0..<2000 {
            var bytes = Self.allFixtures[round % Self.allFixtures.count]
            for _ in 0..<(1 + round % 16) {
                let index = Int(generator.next() % UInt64(bytes.count))
                bytes[index] = UInt8(truncatingIfNeeded: generator.next())
            }
            _ = NetlinkDecoder.decode(bytes)
            let random = (0..<Int(generator.next() % 256)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            _ = NetlinkDecoder.decode(random)
        }
    }
}
