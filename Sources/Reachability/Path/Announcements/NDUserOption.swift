/// What the kernel hands userspace of a Router Advertisement it accepted: the ND options it does
/// not process itself, one `RTM_NEWNDUSEROPT` message each (rtnetlink group
/// `RTNLGRP_ND_USEROPT`, 20, open to any user), among them the captive-portal API URI (option 37,
/// RFC 8910) and the NAT64 prefix (PREF64, option 38, RFC 8781). The kernel passes them only for
/// RAs it accepts on the link (`accept_ra` 1, or 2 with forwarding).
///
/// The payload after the netlink header: `struct nduseroptmsg` (family, pad, options length,
/// ifindex, ICMPv6 type and code, padding: 16 bytes), the options, then attributes
/// (`NDUSEROPT_SRCADDR`: the router's address). Measured on kernel 6.18 in namespaces:
/// `/work/i43-research.md`.
package struct NDUserOptionMessage: Sendable, Equatable {
    package var interfaceIndex: Int32
    /// The ICMPv6 message the options came in: 134 for a Router Advertisement.
    package var icmpType: UInt8
    /// Each option: its type and its body (the bytes after type and length).
    package var options: [(type: UInt8, body: [UInt8])]
    /// The router's address (16 bytes), when the kernel gave it.
    package var source: [UInt8]?

    package static func == (a: Self, b: Self) -> Bool {
        a.interfaceIndex == b.interfaceIndex && a.icmpType == b.icmpType && a.source == b.source
            && a.options.map(\.type) == b.options.map(\.type) && a.options.map(\.body) == b.options.map(\.body)
    }

    /// Parses a message's payload (after the 16-byte netlink header); nil when it is not one:
    /// too short, lengths that run past the end, an option of length 0.
    package static func parse(_ payload: some Collection<UInt8>) -> NDUserOptionMessage? {
        let p = Array(payload)
        guard p.count >= 16, p[0] == 10 else { return nil }  // AF_INET6
        let optionsLength = Int(p[2]) | Int(p[3]) << 8
        guard 16 + optionsLength <= p.count else { return nil }
        let index = Int32(bitPattern: UInt32(p[4]) | UInt32(p[5]) << 8 | UInt32(p[6]) << 16 | UInt32(p[7]) << 24)
        var options: [(UInt8, [UInt8])] = []
        var at = 16
        while at + 2 <= 16 + optionsLength {
            let length = Int(p[at + 1]) * 8
            guard length > 0, at + length <= 16 + optionsLength else { return nil }
            options.append((p[at], Array(p[(at + 2)..<(at + length)])))
            at += length
        }
        var source: [UInt8]?
        // Attributes: 4-byte aligned `rtattr`s; NDUSEROPT_SRCADDR = 1.
        at = 16 + ((optionsLength + 3) & ~3)
        while at + 4 <= p.count {
            let length = Int(p[at]) | Int(p[at + 1]) << 8
            let type = Int(p[at + 2]) | Int(p[at + 3]) << 8
            guard length >= 4, at + length <= p.count else { break }
            if type == 1, length == 20 { source = Array(p[(at + 4)..<(at + 20)]) }
            at += (length + 3) & ~3
        }
        return NDUserOptionMessage(interfaceIndex: index, icmpType: p[8], options: options, source: source)
    }
}

/// RFC 8910's option 37: the captive-portal API's URI, padded with NULs to 8-byte units.
package enum CaptivePortalURIOption {
    package static let type: UInt8 = 37

    /// The URI, or nil: empty, not UTF-8, with control characters or spaces, or over 2048 bytes.
    package static func uri(_ body: [UInt8]) -> String? {
        let bytes = body.prefix { $0 != 0 }
        guard !bytes.isEmpty, bytes.count <= 2048, body.dropFirst(bytes.count).allSatisfy({ $0 == 0 }),
            !bytes.contains(where: { $0 <= 0x20 || $0 == 0x7F }),
            let text = String(validating: bytes, as: UTF8.self)
        else { return nil }
        return text
    }
}

/// RFC 8781's option 38: the NAT64 prefix a router announces (PREF64).
package struct PREF64Option: Sendable, Equatable {
    /// The prefix's 16 bytes (those past its length are zero).
    package var prefix: [UInt8]
    package var length: Int
    /// How long it may be used: the scaled lifetime × 8 seconds (0: withdrawn).
    package var lifetimeSeconds: Int

    /// Parses option 38's body (14 bytes after type and length); nil for another size or a
    /// prefix length code RFC 8781 does not define.
    package init?(_ body: [UInt8]) {
        guard body.count == 14 else { return nil }
        let word = Int(body[0]) << 8 | Int(body[1])
        let lengths = [96, 64, 56, 48, 40, 32]
        let code = word & 0x7
        guard code < lengths.count else { return nil }
        length = lengths[code]
        lifetimeSeconds = (word >> 3) * 8
        var bytes = Array(body[2..<14]) + [0, 0, 0, 0]
        for i in (length / 8)..<16 { bytes[i] = 0 }
        prefix = bytes
    }
}
