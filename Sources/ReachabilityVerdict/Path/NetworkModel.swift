/// One part of the model that a netlink dump refreshes as a whole.
package enum DumpKind: Hashable, Sendable, CaseIterable {
    case links, addresses, ipv4Routes, ipv6Routes

    package var requestType: UInt16 {
        switch self {
        case .links: RTNL.getLink
        case .addresses: RTNL.getAddress
        case .ipv4Routes, .ipv6Routes: RTNL.getRoute
        }
    }

    package var family: UInt8 {
        switch self {
        case .links, .addresses: RTNL.familyUnspec
        case .ipv4Routes: RTNL.familyInet
        case .ipv6Routes: RTNL.familyInet6
        }
    }
}

/// The monitor's working copy of a namespace's links, addresses and default routes, updated
/// one netlink message at a time. Pure (no I/O): classification is passed in, so tests feed it
/// decoded fixtures. Not thread-safe; owned by the monitor thread.
package struct NetworkModel: Equatable {
    package struct AddressKey: Hashable {
        package var family: UInt8
        package var interfaceIndex: UInt32
        package var address: [UInt8]
        package var prefixLength: UInt8
    }

    package struct RouteKey: Hashable {
        package var family: UInt8
        package var metric: UInt32
        package var interfaceIndex: Int32
        package var gateway: [UInt8]?
        package var table: UInt32 = RTNL.tableMain
    }

    /// Work the caller must do after a message.
    package struct FollowUp: OptionSet {
        package let rawValue: Int
        package init(rawValue: Int) { self.rawValue = rawValue }
        /// The kernel deletes IPv4 routes without telling (e.g. after an address is removed);
        /// only a route dump shows what is left.
        package static let refreshIPv4Routes = FollowUp(rawValue: 1)
    }

    package typealias Classify = (_ name: String, _ kind: String?, _ hardwareType: UInt16, _ index: Int32) ->
        InterfaceType

    private(set) var links: [Int32: NetworkInterface] = [:]
    private(set) var addresses: [AddressKey: AddressMessage] = [:]
    private(set) var routes: [RouteKey: UInt8] = [:]  // value: rtm_protocol
    /// What routers announced per link (RA options 37 and 38), each with when it lapses.
    private(set) var announcements: [Int32: HeldAnnouncement] = [:]

    package struct HeldAnnouncement: Equatable {
        package var captivePortal: (uri: String, until: ContinuousClock.Instant)?
        package var pref64: [NAT64Prefix: ContinuousClock.Instant] = [:]

        package static func == (a: Self, b: Self) -> Bool {
            a.captivePortal?.uri == b.captivePortal?.uri && a.captivePortal?.until == b.captivePortal?.until
                && a.pref64 == b.pref64
        }
    }

    @discardableResult
    package mutating func apply(_ message: NetlinkMessage, classify: Classify) -> FollowUp {
        switch message.payload {
        case .newLink(let m) where m.family == RTNL.familyUnspec:
            updateLink(m, classify: classify)
        case .deletedLink(let m) where m.family == RTNL.familyUnspec:
            // AF_BRIDGE link messages describe bridge ports, not links; they are skipped above.
            links[m.index] = nil
            announcements[m.index] = nil
            addresses = addresses.filter { Int32(bitPattern: $0.key.interfaceIndex) != m.index }
            dropRoutes(via: m.index)
        case .newAddress(let m):
            if let key = addressKey(m) { addresses[key] = m }
        case .deletedAddress(let m):
            if let key = addressKey(m) { addresses[key] = nil }
            if m.family == RTNL.familyInet { return .refreshIPv4Routes }
        case .newRoute(let m):
            guard isDefaultRoute(m) else { break }
            if message.header.flags & RTNL.flagReplace != 0 {
                routes = routes.filter {
                    !($0.key.family == m.family && $0.key.metric == (m.priority ?? 0) && $0.key.table == m.table)
                }
            }
            for key in routeKeys(m) { routes[key] = m.routeProtocol }
        case .deletedRoute(let m):
            guard isDefaultRoute(m) else { break }
            let keys = routeKeys(m)
            if keys.isEmpty {
                routes = routes.filter {
                    !($0.key.family == m.family && $0.key.metric == (m.priority ?? 0) && $0.key.table == m.table)
                }
            }
            for key in keys { routes[key] = nil }
        default:
            break
        }
        return []
    }

    /// Takes one component from `staged` (built from a dump plus the events that arrived during
    /// it) and keeps the others.
    package mutating func replace(_ kind: DumpKind, from staged: NetworkModel) {
        switch kind {
        case .links: links = staged.links
        case .addresses: addresses = staged.addresses
        case .ipv4Routes, .ipv6Routes:
            routes = routes.filter { $0.key.family != kind.family }
                .merging(staged.routes.filter { $0.key.family == kind.family }) { _, new in new }
        }
    }

    private mutating func updateLink(_ m: LinkMessage, classify: Classify) {
        let old = links[m.index]
        let name = m.name ?? old?.name ?? "if\(m.index)"
        let type: InterfaceType
        if let old, old.name == name, old.kind == m.kind, old.hardwareType == Int(m.hardwareType) {
            type = old.type  // classify (and read sysfs) only when the identity changes
        } else {
            type = classify(name, m.kind, m.hardwareType, m.index)
        }
        let link = NetworkInterface(
            index: Int(m.index), name: name, type: type, kind: m.kind,
            hardwareType: Int(m.hardwareType), isUp: m.flags & RTNL.iffUp != 0,
            hasCarrier: m.flags & RTNL.iffLowerUp != 0, operState: OperState(kernel: m.operState),
            mtu: Int(m.mtu ?? UInt32(old?.mtu ?? 0)))
        links[m.index] = link
        // Taking a link down flushes its routes; for IPv4 the kernel sends no RTM_DELROUTE.
        if !link.isUp {
            dropRoutes(via: m.index)
            announcements[m.index] = nil
        }
    }

    /// Takes in the options of a Router Advertisement received on a link (the kernel's ND user
    /// options, or an RA read on a raw socket): option 37 replaces the link's URI (the
    /// unrestricted URN or an unreadable one clears it) and holds it for
    /// `RouterAnnouncement.captivePortalHold`; each PREF64 holds for its own lifetime (0 withdraws it).
    package mutating func learn(
        _ options: RouterAdvertisementOptions, interfaceIndex: Int32, now: ContinuousClock.Instant
    ) {
        guard links[interfaceIndex] != nil else { return }
        var held = announcements[interfaceIndex] ?? HeldAnnouncement()
        if let portal = options.captivePortal {
            held.captivePortal = portal.map { ($0, now.advanced(by: RouterAnnouncement.captivePortalHold)) }
        }
        for p in options.pref64 {
            held.pref64[p.prefix] = p.lifetime > 0 ? now.advanced(by: .seconds(p.lifetime)) : nil
        }
        // At most a few prefixes per link: a router that announces many keeps the latest eight.
        while held.pref64.count > 8, let oldest = held.pref64.min(by: { $0.value < $1.value }) {
            held.pref64[oldest.key] = nil
        }
        announcements[interfaceIndex] = held.captivePortal == nil && held.pref64.isEmpty ? nil : held
    }

    /// When the next announcement lapses (the monitor wakes then to publish without it).
    package var nextAnnouncementExpiry: ContinuousClock.Instant? {
        announcements.values.flatMap { [$0.captivePortal?.until].compactMap { $0 } + $0.pref64.values }.min()
    }

    /// Forgets what lapsed by `now`.
    package mutating func expireAnnouncements(now: ContinuousClock.Instant) {
        for (index, var held) in announcements {
            if let portal = held.captivePortal, portal.until <= now { held.captivePortal = nil }
            held.pref64 = held.pref64.filter { $0.value > now }
            announcements[index] = held.captivePortal == nil && held.pref64.isEmpty ? nil : held
        }
    }

    private mutating func dropRoutes(via index: Int32) {
        routes = routes.filter { $0.key.interfaceIndex != index }
    }

    private func addressKey(_ m: AddressMessage) -> AddressKey? {
        guard m.family == RTNL.familyInet || m.family == RTNL.familyInet6, let address = m.address,
            address.count == (m.family == RTNL.familyInet ? 4 : 16)
        else { return nil }
        return AddressKey(
            family: m.family, interfaceIndex: m.index, address: address,
            prefixLength: m.prefixLength)
    }

    /// Any table but `local`, unicast, destination and source length 0. Routes through a
    /// nexthop object (`RTA_NH_ID`) carry no interface and are not followed.
    private func isDefaultRoute(_ m: RouteMessage) -> Bool {
        (m.family == RTNL.familyInet || m.family == RTNL.familyInet6) && m.destinationLength == 0
            && m.sourceLength == 0 && m.table != RTNL.tableLocal && m.type == RTNL.typeUnicast
    }

    private func routeKeys(_ m: RouteMessage) -> [RouteKey] {
        m.nexthops.filter { $0.interfaceIndex > 0 }.map {
            RouteKey(
                family: m.family, metric: m.priority ?? 0, interfaceIndex: $0.interfaceIndex,
                gateway: $0.gateway, table: m.table)
        }
    }

    /// The model as a public value. Addresses and routes of links not (yet) known are left out.
    package func snapshot(changeCount: Int) -> PathSnapshot {
        let interfaces = Array(links.values)
        let addressList = addresses.values.compactMap { m -> InterfaceAddress? in
            guard let link = links[Int32(bitPattern: m.index)], let bytes = m.address else { return nil }
            return InterfaceAddress(
                family: m.family == RTNL.familyInet6 ? .ipv6 : .ipv4, address: IPText.format(bytes),
                prefixLength: Int(m.prefixLength), interfaceIndex: link.index,
                interfaceName: link.name, scope: AddressScope(kernel: m.scope),
                isTentative: m.flags & RTNL.ifaFlagTentative != 0,
                isDuplicate: m.flags & RTNL.ifaFlagDADFailed != 0,
                isDeprecated: m.flags & RTNL.ifaFlagDeprecated != 0)
        }
        let routeList = routes.compactMap { key, proto -> DefaultRoute? in
            guard let link = links[key.interfaceIndex] else { return nil }
            return DefaultRoute(
                family: key.family == RTNL.familyInet6 ? .ipv6 : .ipv4,
                gateway: key.gateway.map(IPText.format), interfaceIndex: link.index,
                interfaceName: link.name, metric: key.metric, routeProtocol: Int(proto), table: key.table)
        }
        let announced = announcements.compactMap { index, held -> RouterAnnouncement? in
            guard let link = links[index], link.isUp else { return nil }
            return RouterAnnouncement(
                interfaceIndex: link.index, interfaceName: link.name, captivePortalAPI: held.captivePortal?.uri,
                pref64: held.pref64.keys.sorted { $0.description < $1.description })
        }
        return PathSnapshot(
            interfaces: interfaces, addresses: addressList,
            defaultRoutes: routeList, announcements: announced, changeCount: changeCount)
    }
}
