/// A default route (destination length 0) of the main table with unicast type.
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

    package init(
        family: IPFamily, gateway: String?, interfaceIndex: Int, interfaceName: String,
        metric: UInt32, routeProtocol: Int = 3
    ) {
        self.family = family
        self.gateway = gateway
        self.interfaceIndex = interfaceIndex
        self.interfaceName = interfaceName
        self.metric = metric
        self.routeProtocol = routeProtocol
    }
}
