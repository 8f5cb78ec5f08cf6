/// A default route (destination length 0) of the main table with unicast type.
public struct DefaultRoute: Sendable, Equatable, Hashable, Codable {
    public var family: IPFamily
    /// Numeric text of the next hop; nil for a device route (`default dev tun0`).
    public var gateway: String?
    public var interfaceIndex: Int
    public var interfaceName: String
    /// `RTA_PRIORITY` (the `metric`); lower wins. 0 when the kernel sent none.
    public var metric: UInt32
    /// `rtm_protocol`: who installed it (2 kernel, 3 boot, 4 static, 9 ra, 16 dhcp…).
    public var routeProtocol: Int

    public init(family: IPFamily, gateway: String?, interfaceIndex: Int, interfaceName: String,
                metric: UInt32, routeProtocol: Int = 3) {
        self.family = family
        self.gateway = gateway
        self.interfaceIndex = interfaceIndex
        self.interfaceName = interfaceName
        self.metric = metric
        self.routeProtocol = routeProtocol
    }
}
