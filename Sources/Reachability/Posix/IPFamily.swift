/// An IP family; the `family` label.
public enum IPFamily: String, Sendable, CaseIterable, Codable {
    case ipv4, ipv6
}

/// Which families a probe may use.
public enum FamilyPreference: String, Sendable, CaseIterable, Codable {
    case any, ipv4, ipv6

    public func admits(_ family: IPFamily) -> Bool {
        switch self {
        case .any: true
        case .ipv4: family == .ipv4
        case .ipv6: family == .ipv6
        }
    }

    var addressFamily: Int32 {
        switch self {
        case .any: 0  // AF_UNSPEC
        case .ipv4: 2  // AF_INET
        case .ipv6: 10  // AF_INET6
        }
    }
}
