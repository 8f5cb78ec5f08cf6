/// The rule that turns DNS answers into a captive-portal signal (`status=portal`,
/// `reason=private_address`).
///
/// Why: a captive portal, or a resolver that hijacks every name, answers with the address of
/// its own login page on the local network. A public name whose answer cannot be on the public
/// internet therefore means "someone between us and the internet wrote this answer".
///
/// The rule: the probe reports a portal when at least one answer address is
/// - IPv4 `0.0.0.0/8` (this network), `10.0.0.0/8`, `100.64.0.0/10` (CGNAT), `127.0.0.0/8`,
///   `169.254.0.0/16` (link-local), `172.16.0.0/12`, `192.168.0.0/16`;
/// - IPv6 `::` (unspecified), `::1`, `fc00::/7` (unique local), `fe80::/10` (link-local),
///   or an IPv4-mapped `::ffff:a.b.c.d` whose IPv4 address is in the list above;
///
/// — except an IPv6 address inside a NAT64 prefix of this network (`NAT64Prefixes`, RFC 7050),
/// which is judged by the IPv4 address it stands for: on an IPv6-only network with DNS64 and a
/// unique-local prefix, a synthesized answer for a public name is the normal case, not a portal —
///
/// unless the queried name is local by design — a single label (`router`), `localhost`, or a
/// name under one of `localSuffixes` (`.local`, `.lan`, `.internal`, `.home.arpa`, …) — or the
/// probe was configured with `allowPrivateAnswers` (split-horizon DNS, lab networks).
/// Not a judgement on the address's reachability; only on who wrote the answer.
package enum DNSPortalRule {
    /// Suffixes of names that live on private networks by design (RFC 6762, RFC 8375,
    /// RFC 6761 and common home/enterprise practice).
    package static let localSuffixes = [
        "localhost", "local", "lan", "internal", "home.arpa", "intranet", "corp", "home", "private", "localdomain",
    ]

    /// Whether `name` is expected to resolve to private addresses.
    package static func isLocalName(_ name: String) -> Bool {
        let n = DNSMessage.canonical(name)
        if !n.contains(".") { return true }
        return localSuffixes.contains { n == $0 || n.hasSuffix("." + $0) }
    }

    /// Whether `address` (IPv4 or IPv6 text) is in one of the non-public ranges above.
    /// Text that is not an IP address is not private.
    package static func isPrivate(address: String) -> Bool {
        guard let parsed = SocketAddress(ip: address) else { return false }
        let b = parsed.addressBytes
        if b.count == 4 { return isPrivateV4(b) }
        guard b.count == 16 else { return false }
        if b[0..<10].allSatisfy({ $0 == 0 }), b[10] == 0xFF, b[11] == 0xFF { return isPrivateV4(Array(b[12..<16])) }
        if b[0..<15].allSatisfy({ $0 == 0 }), b[15] <= 1 { return true }  // :: and ::1
        if b[0] & 0xFE == 0xFC { return true }  // fc00::/7
        if b[0] == 0xFE, b[1] & 0xC0 == 0x80 { return true }  // fe80::/10
        return false
    }

    /// The answer addresses that make this a portal signal; empty when there is none.
    package static func offendingAddresses(
        _ addresses: [String], name: String, allowPrivateAnswers: Bool, nat64: [NAT64Prefix] = []
    ) -> [String] {
        if allowPrivateAnswers || isLocalName(name) { return [] }
        return addresses.filter { isPrivate(address: $0, nat64: nat64) }
    }

    /// `isPrivate(address:)`, with an address inside one of `nat64` judged by the IPv4 address
    /// it stands for.
    package static func isPrivate(address: String, nat64: [NAT64Prefix]) -> Bool {
        if let bytes = SocketAddress(ip: address)?.addressBytes, bytes.count == 16,
            let v4 = nat64.lazy.compactMap({ $0.embeddedIPv4(bytes) }).first
        {
            return isPrivateV4(v4)
        }
        return isPrivate(address: address)
    }

    /// Whether an answer needs this network's NAT64 prefixes to be judged: a unique-local IPv6
    /// address (where network-specific prefixes live) for a name the rule applies to.
    package static func needsNAT64(_ addresses: [String], name: String, allowPrivateAnswers: Bool) -> Bool {
        if allowPrivateAnswers || isLocalName(name) { return false }
        return addresses.contains { (SocketAddress(ip: $0)?.addressBytes.first).map { $0 & 0xFE == 0xFC } ?? false }
    }

    private static func isPrivateV4(_ b: [UInt8]) -> Bool {
        switch (b[0], b[1]) {
        case (0, _), (10, _), (127, _): true
        case (100, 64...127): true
        case (169, 254): true
        case (172, 16...31): true
        case (192, 168): true
        default: false
        }
    }
}
