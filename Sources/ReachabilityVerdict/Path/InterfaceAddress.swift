/// The scope of an address (`ifa_scope`); raw values are stable labels.
package enum AddressScope: String, Sendable, CaseIterable, Codable {
    case global, site, link, host, nowhere, other

    package init(kernel value: UInt8) {
        switch value {
        case 0: self = .global
        case 200: self = .site
        case 253: self = .link
        case 254: self = .host
        case 255: self = .nowhere
        default: self = .other
        }
    }
}

/// One IP address assigned to an interface.
package struct InterfaceAddress: Sendable, Equatable, Hashable, Codable {
    package var family: IPFamily
    /// Numeric text: `192.0.2.2`, `2001:db8::2`.
    package var address: String
    package var prefixLength: Int
    package var interfaceIndex: Int
    package var interfaceName: String
    package var scope: AddressScope
    /// Duplicate address detection has not finished (`IFA_F_TENTATIVE`): not usable yet.
    package var isTentative: Bool
    /// Duplicate address detection failed (`IFA_F_DADFAILED`): never usable.
    package var isDuplicate: Bool
    /// Preferred lifetime over (`IFA_F_DEPRECATED`): still usable, not for new flows by choice.
    package var isDeprecated: Bool

    package init(
        family: IPFamily, address: String, prefixLength: Int, interfaceIndex: Int,
        interfaceName: String, scope: AddressScope = .global, isTentative: Bool = false,
        isDuplicate: Bool = false, isDeprecated: Bool = false
    ) {
        self.family = family
        self.address = address
        self.prefixLength = prefixLength
        self.interfaceIndex = interfaceIndex
        self.interfaceName = interfaceName
        self.scope = scope
        self.isTentative = isTentative
        self.isDuplicate = isDuplicate
        self.isDeprecated = isDeprecated
    }

    /// Whether this address lets the host reach beyond the link in its family: IPv6 needs
    /// global scope (link-local alone does not count); IPv4 anything but host scope (127.x on
    /// `lo`). Tentative and duplicate addresses never count.
    package var isUsableForInternet: Bool {
        guard !isTentative, !isDuplicate else { return false }
        switch family {
        case .ipv4: return scope != .host && scope != .nowhere
        case .ipv6: return scope == .global
        }
    }
}
