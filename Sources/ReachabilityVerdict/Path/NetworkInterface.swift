/// What kind of medium an interface is; the `type` label of the interface metrics.
/// Raw values are stable label values. See `InterfaceClassifier` for how a link is mapped.
package enum InterfaceType: String, Sendable, CaseIterable, Codable {
    case wifi, ethernet, cellular, vpn, loopback, bridge, virtual, other

    /// Metered media (cellular). Probers may want to probe less over them.
    package var isExpensive: Bool { self == .cellular }
}

/// RFC 2863 operational state as the kernel reports it (`IFLA_OPERSTATE`); raw values are the
/// names `ip link` prints, in lower case.
package enum OperState: String, Sendable, CaseIterable, Codable {
    case unknown
    case notPresent = "notpresent"
    case down
    case lowerLayerDown = "lowerlayerdown"
    case testing,
        dormant, up

    package init(kernel value: UInt8?) {
        switch value {
        case 1: self = .notPresent
        case 2: self = .down
        case 3: self = .lowerLayerDown
        case 4: self = .testing
        case 5: self = .dormant
        case 6: self = .up
        default: self = .unknown
        }
    }
}

/// One network interface of the watched namespace, as of one snapshot.
package struct NetworkInterface: Sendable, Equatable, Hashable, Codable {
    /// Kernel interface index; unique within the namespace while the link exists.
    package var index: Int
    package var name: String
    package var type: InterfaceType
    /// The rtnetlink link kind (`veth`, `tun`, `wireguard`, `bridge`…); nil for hardware.
    package var kind: String?
    /// `ARPHRD_*` hardware type (1 ethernet, 772 loopback, 65534 none/tun…).
    package var hardwareType: Int
    /// Administratively up (`IFF_UP`).
    package var isUp: Bool
    /// The lower layer reports a carrier (`IFF_LOWER_UP`).
    package var hasCarrier: Bool
    package var operState: OperState
    package var mtu: Int

    package init(
        index: Int, name: String, type: InterfaceType, kind: String? = nil,
        hardwareType: Int = 1, isUp: Bool, hasCarrier: Bool,
        operState: OperState = .unknown, mtu: Int = 1500
    ) {
        self.index = index
        self.name = name
        self.type = type
        self.kind = kind
        self.hardwareType = hardwareType
        self.isUp = isUp
        self.hasCarrier = hasCarrier
        self.operState = operState
        self.mtu = mtu
    }

    /// Metered (cellular) interface.
    package var isExpensive: Bool { type.isExpensive }
    /// Up and with carrier: it can move packets.
    package var isRunning: Bool { isUp && hasCarrier }
}

/// The seed library's connection type: what kind of link carries the default route.
public enum ConnectionType: String, Sendable, CaseIterable, Codable {
    /// A wireless LAN interface.
    case wifi
    /// A wired interface (Ethernet).
    case wired
    /// A cellular modem (metered).
    case cellular
    /// Any other kind: a VPN, a bridge, a virtual interface.
    case other
    /// No usable path, or path monitoring is off.
    case unknown

    package init(_ type: InterfaceType?) {
        switch type {
        case .wifi?: self = .wifi
        case .ethernet?: self = .wired
        case .cellular?: self = .cellular
        case nil: self = .unknown
        default: self = .other
        }
    }
}
