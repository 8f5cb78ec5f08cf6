/// Text forms of raw IP addresses, in pure Swift so that message codecs need no libc:
/// dotted quad for IPv4, RFC 5952 for IPv6 (lower-case hex, the longest run of two or more
/// zero groups shortened to `::`, IPv4-mapped addresses as `::ffff:a.b.c.d`, IPv4-compatible ones as `::a.b.c.d`), the same text
/// `inet_ntop` gives.
package enum IPAddressText {
    /// Formats 4 or 16 bytes; any other length gives a hex dump in angle brackets.
    package static func format<C: Collection<UInt8>>(_ bytes: C) -> String {
        let b = Array(bytes)
        switch b.count {
        case 4: return b.map(String.init).joined(separator: ".")
        case 16: return formatV6(b)
        default: return "<" + b.map { hex($0) }.joined() + ">"
        }
    }

    private static func formatV6(_ b: [UInt8]) -> String {
        let groups = (0..<8).map { UInt16(b[2 * $0]) << 8 | UInt16(b[2 * $0 + 1]) }
        if groups[0..<5].allSatisfy({ $0 == 0 }), groups[5] == 0xFFFF {
            return "::ffff:" + format(b[12..<16])
        }
        if groups[0..<6].allSatisfy({ $0 == 0 }), groups[6] != 0 {
            return "::" + format(b[12..<16])  // deprecated IPv4-compatible form, as inet_ntop writes it
        }
        // Longest run of zero groups (first one wins a tie), only if at least two long.
        var bestStart = -1
        var bestLength = 0
        var i = 0
        while i < 8 {
            if groups[i] == 0 {
                var j = i
                while j < 8, groups[j] == 0 { j += 1 }
                if j - i > bestLength {
                    bestStart = i
                    bestLength = j - i
                }
                i = j
            } else {
                i += 1
            }
        }
        if bestLength < 2 { return groups.map { String($0, radix: 16) }.joined(separator: ":") }
        let head = groups[0..<bestStart].map { String($0, radix: 16) }.joined(separator: ":")
        let tail = groups[(bestStart + bestLength)...].map { String($0, radix: 16) }.joined(separator: ":")
        return head + "::" + tail
    }

    private static func hex(_ b: UInt8) -> String {
        let s = String(b, radix: 16)
        return b < 16 ? "0" + s : s
    }
}
