/// The fixed header of one netlink message (`struct nlmsghdr`).
package struct NetlinkHeader: Equatable, Sendable {
    package var length: UInt32
    package var type: UInt16
    package var flags: UInt16
    package var sequence: UInt32
    package var portID: UInt32
}

/// A link announcement (`RTM_NEWLINK`/`RTM_DELLINK`): the parts of `ifinfomsg` and its attributes
/// the path model needs. Attributes the kernel did not send are nil.
package struct LinkMessage: Equatable, Sendable {
    package var family: UInt8
    package var hardwareType: UInt16
    package var index: Int32
    package var flags: UInt32
    package var name: String?
    package var mtu: UInt32?
    package var operState: UInt8?
    /// `IFLA_LINKINFO`/`IFLA_INFO_KIND`: "veth", "tun", "wireguard", "bridge"…; nil for hardware.
    package var kind: String?
}

/// An address announcement (`RTM_NEWADDR`/`RTM_DELADDR`).
package struct AddressMessage: Equatable, Sendable {
    package var family: UInt8
    package var prefixLength: UInt8
    /// `ifa_flags`, widened by `IFA_FLAGS` when present.
    package var flags: UInt32
    package var scope: UInt8
    package var index: UInt32
    /// The local address: `IFA_LOCAL` when present (IPv4, point-to-point), else `IFA_ADDRESS`.
    package var address: [UInt8]?
}

/// One next hop of a route: the interface and, when there is one, the gateway.
package struct RouteNexthop: Equatable, Sendable {
    package var interfaceIndex: Int32
    /// 4 or 16 bytes; may be of the other family (`RTA_VIA`, IPv4 over an IPv6 gateway).
    package var gateway: [UInt8]?
}

/// A route announcement (`RTM_NEWROUTE`/`RTM_DELROUTE`).
package struct RouteMessage: Equatable, Sendable {
    package var family: UInt8
    package var destinationLength: UInt8
    package var sourceLength: UInt8
    /// `RTA_TABLE` when present, else `rtm_table`.
    package var table: UInt32
    package var routeProtocol: UInt8
    package var scope: UInt8
    package var type: UInt8
    package var flags: UInt32
    package var priority: UInt32?
    /// A single-path route gives one next hop (`RTA_OIF` + `RTA_GATEWAY`/`RTA_VIA`); a multipath
    /// route one per `rtnexthop` in `RTA_MULTIPATH`. Empty when the route names neither.
    package var nexthops: [RouteNexthop]
    /// `RTA_NH_ID`: the route uses a nexthop object (not resolved by this monitor).
    package var nexthopID: UInt32?
}

/// What one netlink message carried.
package enum NetlinkPayload: Equatable, Sendable {
    case newLink(LinkMessage)
    case deletedLink(LinkMessage)
    case newAddress(AddressMessage)
    case deletedAddress(AddressMessage)
    case newRoute(RouteMessage)
    case deletedRoute(RouteMessage)
    /// `RTM_NEWNDUSEROPT`: options of a Router Advertisement the kernel accepted.
    case ndUserOption(NDUserOptionMessage)
    /// End of a dump.
    case done
    /// `NLMSG_ERROR`: `errno` is positive, 0 for an acknowledgement.
    case error(errno: Int32)
    /// A type this decoder knows whose body was too short to read.
    case malformed(type: UInt16)
    /// Any other type (e.g. `NLMSG_NOOP`, `RTM_NEWNEIGH`): skipped.
    case other(type: UInt16)
}

/// One decoded netlink message.
package struct NetlinkMessage: Equatable, Sendable {
    package var header: NetlinkHeader
    package var payload: NetlinkPayload
}

/// A pure decoder from received netlink bytes to `NetlinkMessage` values. It reads only inside
/// the buffer: a truncated, lying or garbage buffer yields fewer messages (or `.malformed`),
/// never a crash. Numbers are host byte order, as netlink sends them.
package enum NetlinkDecoder {
    package static func decode(_ bytes: [UInt8]) -> [NetlinkMessage] {
        bytes.withUnsafeBytes { decode($0) }
    }

    package static func decode(_ raw: UnsafeRawBufferPointer) -> [NetlinkMessage] {
        let bytes = ByteView(raw)
        var messages: [NetlinkMessage] = []
        var offset = 0
        while let header = bytes.header(at: offset) {
            let length = Int(header.length)
            guard length >= RTNL.headerSize, offset + length <= raw.count else { break }
            let body = ByteView(raw, offset + RTNL.headerSize, offset + length)
            messages.append(NetlinkMessage(header: header, payload: payload(header.type, body)))
            offset += RTNL.align(length)
        }
        return messages
    }

    private static func payload(_ type: UInt16, _ body: ByteView) -> NetlinkPayload {
        switch type {
        case RTNL.newLink, RTNL.delLink:
            guard let m = link(body) else { return .malformed(type: type) }
            return type == RTNL.newLink ? .newLink(m) : .deletedLink(m)
        case RTNL.newAddress, RTNL.delAddress:
            guard let m = address(body) else { return .malformed(type: type) }
            return type == RTNL.newAddress ? .newAddress(m) : .deletedAddress(m)
        case RTNL.newRoute, RTNL.delRoute:
            guard let m = route(body) else { return .malformed(type: type) }
            return type == RTNL.newRoute ? .newRoute(m) : .deletedRoute(m)
        case RTNL.newNDUserOption:
            guard let m = NDUserOptionMessage.parse(body.bytes) else { return .malformed(type: type) }
            return .ndUserOption(m)
        case RTNL.messageDone:
            return .done
        case RTNL.messageError:
            guard let code = body.i32(0) else { return .malformed(type: type) }
            return .error(errno: code == Int32.min ? Int32.max : -code)
        default:
            return .other(type: type)
        }
    }

    private static func link(_ b: ByteView) -> LinkMessage? {
        guard b.count >= RTNL.ifinfomsgSize, let family = b.u8(0), let hwType = b.u16(2),
            let index = b.i32(4), let flags = b.u32(8)
        else { return nil }
        var m = LinkMessage(family: family, hardwareType: hwType, index: index, flags: flags)
        b.forEachAttribute(from: RTNL.ifinfomsgSize) { type, value in
            switch type {
            case RTNL.iflaName: m.name = value.cString()
            case RTNL.iflaMTU: m.mtu = value.u32(0)
            case RTNL.iflaOperState: m.operState = value.u8(0)
            case RTNL.iflaLinkInfo:
                value.forEachAttribute(from: 0) { t, v in
                    if t == RTNL.iflaInfoKind { m.kind = v.cString() }
                }
            default: break
            }
        }
        return m
    }

    private static func address(_ b: ByteView) -> AddressMessage? {
        guard b.count >= RTNL.ifaddrmsgSize, let family = b.u8(0), let prefix = b.u8(1),
            let flags = b.u8(2), let scope = b.u8(3), let index = b.u32(4)
        else { return nil }
        var m = AddressMessage(
            family: family, prefixLength: prefix, flags: UInt32(flags),
            scope: scope, index: index, address: nil)
        var local: [UInt8]?
        var address: [UInt8]?
        b.forEachAttribute(from: RTNL.ifaddrmsgSize) { type, value in
            switch type {
            case RTNL.ifaLocal: local = value.ipBytes()
            case RTNL.ifaAddress: address = value.ipBytes()
            case RTNL.ifaFlags: if let wide = value.u32(0) { m.flags = wide }
            default: break
            }
        }
        m.address = local ?? address
        return m
    }

    private static func route(_ b: ByteView) -> RouteMessage? {
        guard b.count >= RTNL.rtmsgSize, let family = b.u8(0), let dstLen = b.u8(1),
            let srcLen = b.u8(2), let table = b.u8(4), let proto = b.u8(5), let scope = b.u8(6),
            let type = b.u8(7), let flags = b.u32(8)
        else { return nil }
        var m = RouteMessage(
            family: family, destinationLength: dstLen, sourceLength: srcLen,
            table: UInt32(table), routeProtocol: proto, scope: scope, type: type,
            flags: flags, priority: nil, nexthops: [], nexthopID: nil)
        var oif: Int32?
        var gateway: [UInt8]?
        b.forEachAttribute(from: RTNL.rtmsgSize) { t, value in
            switch t {
            case RTNL.rtaTable: if let wide = value.u32(0) { m.table = wide }
            case RTNL.rtaPriority: m.priority = value.u32(0)
            case RTNL.rtaOutputInterface: oif = value.i32(0)
            case RTNL.rtaGateway: gateway = value.ipBytes()
            case RTNL.rtaVia: gateway = value.viaBytes()
            case RTNL.rtaNexthopID: m.nexthopID = value.u32(0)
            case RTNL.rtaMultipath: m.nexthops = nexthops(value)
            default: break
            }
        }
        if m.nexthops.isEmpty, let oif {
            m.nexthops = [RouteNexthop(interfaceIndex: oif, gateway: gateway)]
        }
        return m
    }

    /// `RTA_MULTIPATH`: a run of `rtnexthop {len u16, flags u8, hops u8, ifindex i32}`, each
    /// followed by its own attributes (`RTA_GATEWAY`, `RTA_VIA`).
    private static func nexthops(_ b: ByteView) -> [RouteNexthop] {
        var result: [RouteNexthop] = []
        var offset = 0
        while let length = b.u16(offset).map(Int.init), length >= RTNL.rtnexthopSize,
            offset + length <= b.count, let index = b.i32(offset + 4), result.count < 256
        {
            var hop = RouteNexthop(interfaceIndex: index, gateway: nil)
            b.slice(offset, offset + length).forEachAttribute(from: RTNL.rtnexthopSize) { t, v in
                if t == RTNL.rtaGateway { hop.gateway = v.ipBytes() }
                if t == RTNL.rtaVia { hop.gateway = v.viaBytes() }
            }
            result.append(hop)
            offset += RTNL.align(length)
        }
        return result
    }
}
