/// A scope's default gateway, from the route table the path monitor reads.
package struct GatewayRoute: Sendable, Hashable {
    package var family: IPFamily
    /// Nil for a device route without a gateway (point-to-point links, some tunnels).
    package var gateway: String?
    package var interface: String

    package init(family: IPFamily, gateway: String?, interface: String) {
        self.family = family
        self.gateway = gateway
        self.interface = interface
    }
}

/// The kernel's neighbour-table state of an address (`NUD_*`), as far as the locator cares.
package enum NeighbourState: String, Sendable, Equatable {
    case reachable, stale, delay, probe, incomplete, failed, noarp, permanent
    /// No entry for the address.
    case absent

    /// Resolution is failing or has failed: nobody answers ARP / neighbour solicitations.
    package var isUnresolved: Bool { self == .incomplete || self == .failed }
}
