/// Adapts a path source (the netlink `PathMonitor`, or a fake) to what the scheduler needs.
package struct SnapshotPathGate: PathGate {
    package let source: any PathSource

    package init(_ source: any PathSource) { self.source = source }

    package var interfaceNames: (byAddress: [[UInt8]: String], byIndex: [UInt32: String]) {
        let snapshot = source.current
        var byAddress: [[UInt8]: String] = [:]
        for a in snapshot.addresses {
            if let bytes = SocketAddress(ip: a.address)?.addressBytes { byAddress[bytes] = a.interfaceName }
        }
        var byIndex: [UInt32: String] = [:]
        for i in snapshot.interfaces { byIndex[UInt32(truncatingIfNeeded: i.index)] = i.name }
        return (byAddress, byIndex)
    }

    package func unsatisfiedReason(for family: IPFamily?) -> PathUnsatisfiedReason? {
        let snapshot = source.current
        guard let family else {
            if snapshot.overallSatisfied { return nil }
            return snapshot.status(for: .ipv4).reason ?? snapshot.status(for: .ipv6).reason
        }
        return snapshot.status(for: family).reason
    }

    package func unsatisfiedReason(interface: String) -> PathUnsatisfiedReason? {
        let snapshot = source.current
        guard let i = snapshot.interfaces.first(where: { $0.name == interface }), i.isUp else {
            return .noInterface
        }
        if !i.hasCarrier { return .noCarrier }
        let usable = snapshot.addresses.contains {
            $0.interfaceName == interface && $0.scope != .host && $0.scope != .link
        }
        return usable ? nil : .noAddress
    }

    package func gatewayRoute(for scope: Scope) -> GatewayRoute? {
        let snapshot = source.current
        let route: DefaultRoute?
        switch scope {
        case .overall: route = snapshot.primaryRoute(for: .ipv4) ?? snapshot.primaryRoute(for: .ipv6)
        case .family(let f): route = snapshot.primaryRoute(for: f)
        case .uplink(let name):
            // Its own default route: IPv4 first, the main table's first, then the lowest metric
            // (the snapshot's order); a route only in the uplink's own table (policy routing) counts.
            route = snapshot.defaultRoutes.first { $0.interfaceName == name }
        }
        return route.map { GatewayRoute(family: $0.family, gateway: $0.gateway, interface: $0.interfaceName) }
    }

    package func localityMatcher() -> AddressLocality.Matcher { AddressLocality.Matcher(source.current) }

    package var announcements: [RouterAnnouncement] { source.current.announcements }

    package var defaultRouteInterfaces: [String] {
        var seen: [String] = []
        for r in source.current.defaultRoutes where !seen.contains(r.interfaceName) { seen.append(r.interfaceName) }
        return seen
    }

    /// One element per change of state (the first snapshot, which every stream starts with,
    /// is not a change).
    package func changes() -> AsyncStream<Void> {
        let updates = source.updates()
        let initial = source.current
        return AsyncStream { continuation in
            let task = Task {
                var last = initial
                for await snapshot in updates {
                    if snapshot.hasSameState(as: last) { continue }
                    last = snapshot
                    continuation.yield()
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
