/// A unicast default route (destination length 0) of any routing table but `local`: the main
/// table's decide the host's own path; another table's (policy routing: `ip rule … lookup T`,
/// as multi-WAN routers give each uplink its own table) serve the uplink they go through.
package struct DefaultRoute: Sendable, Equatable, Hashable, Codable {
    package var family: IPFamily
    /// Numeric text of the next hop; nil for a device route (`default dev tun0`).
    package var gateway: String?
    package var interfaceIndex: Int
    package var interfaceName: String
    /// `RTA_PRIORITY` (the `metric`); lower wins. 0 when the kernel sent none.
    package var metric: UInt32
    /// `rtm_protocol`: who installed it (2 kernel, 3 boot, 4 static, 9 ra, 16 dhcp…).
    package var routeProtocol: Int
    /// The routing table (`RTA_TABLE`): 254 is `main`.
    package var table: UInt32

    package static let mainTable: UInt32 = 254

    package var isMain: Bool { table == Self.mainTable }

    package init(
        family: IPFamily, gateway: String?, interfaceIndex: Int, interfaceName: String,
        metric: UInt32, routeProtocol: Int = 3, table: UInt32 = mainTable
    ) {
        self.table = table
        self.family = family
        self.gateway = gateway
        self.interfaceIndex = interfaceIndex
        self.interfaceName = interfaceName
        self.metric = metric
        self.routeProtocol = routeProtocol
    }
}
