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

/// What a router announced for one interface in its Router Advertisements: the captive-portal
/// API URI (option 37) and the NAT64 prefixes (option 38). Part of `PathSnapshot`; the monitor
/// drops an announcement when its interface goes down or away, when the router withdraws it, and
/// when it is not repeated in time (`captivePortalHold` for option 37, which has no lifetime of
/// its own; PREF64's own lifetime).
package struct RouterAnnouncement: Sendable, Equatable, Hashable, Codable {
    package var interfaceIndex: Int
    package var interfaceName: String
    /// The API's URI; nil when none was announced (or `urn:ietf:params:capport:unrestricted`).
    package var captivePortalAPI: String?
    package var pref64: [NAT64Prefix]

    package init(
        interfaceIndex: Int, interfaceName: String, captivePortalAPI: String? = nil, pref64: [NAT64Prefix] = []
    ) {
        self.interfaceIndex = interfaceIndex
        self.interfaceName = interfaceName
        self.captivePortalAPI = captivePortalAPI
        self.pref64 = pref64
    }

    /// How long an option 37 holds without being repeated: RFC 4861's default router lifetime
    /// (3 × the default `MaxRtrAdvInterval` of 600 s), as systemd-networkd uses the RA's lifetime.
    package static let captivePortalHold: Duration = .seconds(1800)

    /// RFC 8910 §2: this URN says the network has no captive portal.
    package static let unrestricted = "urn:ietf:params:capport:unrestricted"
}

/// The options of one Router Advertisement that matter here, as read from the kernel's ND user
/// options or from an RA received on a raw socket: nil fields were not in it.
package struct RouterAdvertisementOptions: Sendable, Equatable {
    /// Option 37's URI: `.some(nil)` when the option said "no portal" (the unrestricted URN) or
    /// could not be read (then nothing is believed from it).
    package var captivePortal: String??
    /// Option 38 prefixes with their lifetimes in seconds (0: withdrawn).
    package var pref64: [(prefix: NAT64Prefix, lifetime: Int)] = []

    package init() {}

    package static func == (a: Self, b: Self) -> Bool {
        a.captivePortal == b.captivePortal && a.pref64.map(\.prefix) == b.pref64.map(\.prefix)
            && a.pref64.map(\.lifetime) == b.pref64.map(\.lifetime)
    }

    /// Reads options 37 and 38 out of a list of ND options (type, body).
    package init(_ options: [(type: UInt8, body: [UInt8])]) {
        for option in options {
            switch option.type {
            case CaptivePortalURIOption.type:
                let uri = CaptivePortalURIOption.uri(option.body)
                captivePortal = .some(uri == RouterAnnouncement.unrestricted ? nil : uri)
            case 38:
                guard let p = PREF64Option(option.body), let prefix = NAT64Prefix(bytes: p.prefix, length: p.length)
                else { continue }
                pref64.append((prefix, p.lifetimeSeconds))
            default: continue
            }
        }
    }

    /// The options of an ICMPv6 Router Advertisement (type 134; 16 bytes of header before them);
    /// nil for another message or one whose options run past its end.
    package static func parseAdvertisement(_ packet: [UInt8]) -> RouterAdvertisementOptions? {
        guard packet.count >= 16, packet[0] == 134, packet[1] == 0 else { return nil }
        var options: [(UInt8, [UInt8])] = []
        var at = 16
        while at + 2 <= packet.count {
            let length = Int(packet[at + 1]) * 8
            guard length > 0, at + length <= packet.count else { return nil }
            options.append((packet[at], Array(packet[(at + 2)..<(at + length)])))
            at += length
        }
        return RouterAdvertisementOptions(options)
    }
}
