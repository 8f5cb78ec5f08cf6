/// A NAT64 prefix (RFC 6052): IPv6 addresses inside it stand for IPv4 addresses, which a
/// translator on the path (NAT64) reaches for an IPv6-only host. A DNS64 resolver synthesizes
/// them in AAAA answers. With a network-specific prefix inside a unique-local range
/// (`fd64:ff9b:1::/96`) such an answer looks private, though it stands for a public address:
/// `DNSPortalRule` judges the IPv4 address inside it instead.
package struct NAT64Prefix: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The prefix's 16 bytes, zero past `length`.
    package let bytes: [UInt8]
    /// 32, 40, 48, 56, 64 or 96 bits.
    package let length: Int

    /// The lengths RFC 6052 allows, in the order RFC 7050 discovery tries them.
    package static let lengths = [96, 64, 56, 48, 40, 32]

    package init?(bytes: [UInt8], length: Int) {
        guard bytes.count == 16, Self.lengths.contains(length) else { return nil }
        self.bytes = Array(bytes.prefix(length / 8)) + Array(repeating: 0, count: 16 - length / 8)
        self.length = length
    }

    /// The byte offsets of the IPv4 address inside an IPv6 address (RFC 6052 §2.2: bits 64–71,
    /// byte 8, are skipped).
    package static func positions(_ length: Int) -> [Int] {
        switch length {
        case 32: [4, 5, 6, 7]
        case 40: [5, 6, 7, 9]
        case 48: [6, 7, 9, 10]
        case 56: [7, 9, 10, 11]
        case 64: [9, 10, 11, 12]
        default: [12, 13, 14, 15]
        }
    }

    /// The IPv4 address an IPv6 address inside this prefix stands for; nil outside it.
    package func embeddedIPv4(_ address: [UInt8]) -> [UInt8]? {
        guard address.count == 16, address.prefix(length / 8).elementsEqual(bytes.prefix(length / 8)) else {
            return nil
        }
        return Self.positions(length).map { address[$0] }
    }

    package var description: String { (SocketAddress(bytes: bytes)?.ip ?? "?") + "/\(length)" }

    /// The name whose AAAA answers reveal the prefix (RFC 7050).
    package static let discoveryName = "ipv4only.arpa"

    /// The well-known IPv4 addresses of `ipv4only.arpa` (RFC 7050): 192.0.0.170 and .171.
    package static let wellKnown: [[UInt8]] = [[192, 0, 0, 170], [192, 0, 0, 171]]

    /// RFC 7050 §3: the prefixes the AAAA answers of `ipv4only.arpa` reveal (a synthesized
    /// answer holds a well-known address at the positions of its prefix's length).
    package static func discover(fromAnswers answers: [[UInt8]]) -> [NAT64Prefix] {
        var found: [NAT64Prefix] = []
        for answer in answers where answer.count == 16 {
            for length in lengths {
                let v4 = positions(length).map { answer[$0] }
                guard wellKnown.contains(v4), length == 96 || answer[8] == 0,
                    let prefix = NAT64Prefix(bytes: answer, length: length)
                else { continue }
                if !found.contains(prefix) { found.append(prefix) }
                break
            }
        }
        return found
    }
}
