/// An IP family; the `family` label.
public enum IPFamily: String, Sendable, CaseIterable, Codable {
    /// IPv4 (`ipv4`).
    case ipv4
    /// IPv6 (`ipv6`).
    case ipv6
}

/// Which families a probe may use.
public enum FamilyPreference: String, Sendable, CaseIterable, Codable {
    /// Either family: whatever the resolver and the routing table give.
    case any
    /// IPv4 only.
    case ipv4
    /// IPv6 only.
    case ipv6

    /// Whether a probe with this preference may use `family`.
    public func admits(_ family: IPFamily) -> Bool {
        switch self {
        case .any: true
        case .ipv4: family == .ipv4
        case .ipv6: family == .ipv6
        }
    }

    package var addressFamily: Int32 {
        switch self {
        case .any: 0  // AF_UNSPEC
        case .ipv4: 2  // AF_INET
        case .ipv6: 10  // AF_INET6
        }
    }
}
