/// What kind of medium an interface is; the `type` label of the interface metrics.
/// Raw values are stable label values. See `InterfaceClassifier` for how a link is mapped.
public enum InterfaceType: String, Sendable, CaseIterable, Codable {
    case wifi, ethernet, cellular, vpn, loopback, bridge, virtual, other

    /// Metered media (cellular). Probers may want to probe less over them.
    public var isExpensive: Bool { self == .cellular }
}

/// RFC 2863 operational state as the kernel reports it (`IFLA_OPERSTATE`); raw values are the
/// names `ip link` prints, in lower case.
public enum OperState: String, Sendable, CaseIterable, Codable {
    case unknown, notPresent = "notpresent", down, lowerLayerDown = "lowerlayerdown", testing,
         dormant, up

    init(kernel value: UInt8?) {
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
public struct NetworkInterface: Sendable, Equatable, Hashable, Codable {
    /// Kernel interface index; unique within the namespace while the link exists.
    public var index: Int
    public var name: String
    public var type: InterfaceType
    /// The rtnetlink link kind (`veth`, `tun`, `wireguard`, `bridge`…); nil for hardware.
    public var kind: String?
    /// `ARPHRD_*` hardware type (1 ethernet, 772 loopback, 65534 none/tun…).
    public var hardwareType: Int
    /// Administratively up (`IFF_UP`).
    public var isUp: Bool
    /// The lower layer reports a carrier (`IFF_LOWER_UP`).
    public var hasCarrier: Bool
    public var operState: OperState
    public var mtu: Int

    public init(index: Int, name: String, type: InterfaceType, kind: String? = nil,
                hardwareType: Int = 1, isUp: Bool, hasCarrier: Bool,
                operState: OperState = .unknown, mtu: Int = 1500) {
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
    public var isExpensive: Bool { type.isExpensive }
    /// Up and with carrier: it can move packets.
    public var isRunning: Bool { isUp && hasCarrier }
}
