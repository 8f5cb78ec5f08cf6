/// Whether an address is on the local network as the host sees it: the part of the evidence
/// model (`Evidence`) that depends on where an answer came from.
///
/// Local means: loopback, unspecified, link-local (`169.254.0.0/16`, `fe80::/10`, also as
/// IPv4-mapped IPv6), one of the host's own addresses, inside the prefix of one of them (an
/// on-link host), or a default route's gateway. Everything else is beyond the gateway. Text that
/// is not an IP address is not local.
package enum AddressLocality {
    /// The rules that need no path: loopback, unspecified and link-local addresses.
    package static func isIntrinsicallyLocal(_ address: String) -> Bool {
        guard let bytes = SocketAddress(ip: address)?.addressBytes else { return false }
        return isIntrinsicallyLocal(bytes)
    }

    package static func isIntrinsicallyLocal(_ b: [UInt8]) -> Bool {
        if b.count == 4 {
            return b[0] == 127 || b.allSatisfy { $0 == 0 } || (b[0] == 169 && b[1] == 254)
        }
        guard b.count == 16 else { return false }
        if b[0..<10].allSatisfy({ $0 == 0 }), b[10] == 0xFF, b[11] == 0xFF {
            return isIntrinsicallyLocal(Array(b[12..<16]))
        }
        if b[0..<15].allSatisfy({ $0 == 0 }), b[15] <= 1 { return true }  // :: and ::1
        return b[0] == 0xFE && b[1] & 0xC0 == 0x80  // fe80::/10
    }

    /// Whether the first `length` bits of `a` and `b` are equal.
    package static func samePrefix(_ a: [UInt8], _ b: [UInt8], length: Int) -> Bool {
        guard a.count == b.count, length >= 0, length <= a.count * 8 else { return false }
        let whole = length / 8
        if a[0..<whole] != b[0..<whole] { return false }
        let rest = length % 8
        guard rest > 0 else { return true }
        let mask = UInt8(0xFF) << (8 - rest)
        return a[whole] & mask == b[whole] & mask
    }
}

extension AddressLocality {
    /// The local-network test of one snapshot with its addresses parsed once: built once per
    /// round, asked once per probe result.
    package struct Matcher: Sendable {
        /// The host's own addresses with their prefix lengths (0: the address alone).
        private var networks: [(bytes: [UInt8], prefixLength: Int)] = []
        private var gateways: [[UInt8]] = []

        /// Knows only the rules that need no path (no path monitor).
        package static let intrinsicOnly = Matcher()

        private init() {}

        package init(_ snapshot: PathSnapshot) {
            networks = snapshot.addresses.compactMap { own in
                SocketAddress(ip: own.address).map { (bytes: $0.addressBytes, prefixLength: own.prefixLength) }
            }
            gateways = snapshot.defaultRoutes.compactMap { $0.gateway.flatMap { SocketAddress(ip: $0)?.addressBytes } }
        }

        /// Whether `address` is on the local network (see `AddressLocality`).
        package func isLocal(_ address: String) -> Bool {
            guard let bytes = SocketAddress(ip: address)?.addressBytes else { return false }
            return isLocal(bytes: bytes)
        }

        /// `isLocal` of raw address bytes (4 or 16; an IPv4-mapped IPv6 address by the IPv4
        /// address it holds).
        package func isLocal(bytes raw: [UInt8]) -> Bool {
            var bytes = raw
            if bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
                bytes = Array(bytes[12..<16])
            }
            if AddressLocality.isIntrinsicallyLocal(bytes) { return true }
            for (own, length) in networks where own.count == bytes.count {
                if own == bytes { return true }
                // A /0 "prefix" would make the whole internet on-link; such addresses say nothing.
                if length > 0, AddressLocality.samePrefix(own, bytes, length: length) { return true }
            }
            return gateways.contains(bytes)
        }
    }
}

extension PathSnapshot {
    /// Whether `address` is on the local network of this snapshot (see `AddressLocality`).
    package func isLocal(address: String) -> Bool { AddressLocality.Matcher(self).isLocal(address) }
}
