/// The ICMP echo codec: builds echo requests and decodes what an ICMP socket hands back.
/// Pure functions over bytes (no sockets, no clocks), so every branch is unit-tested on fixtures.
/// Decoding never traps: short, truncated or garbage input gives `nil` or `.other`.
///
/// Payload convention: the first 8 bytes of an echo payload carry a nonce (big-endian) chosen by
/// the sender, so a late reply to a reused sequence number, or a stranger's echo with the same
/// identifier, can be told apart. Payloads shorter than 8 bytes carry a truncated nonce.
package enum ICMPPacket {
    /// How the bytes returned by `recvmsg` are laid out.
    package enum Layout: Sendable, Equatable {
        /// IPv4 raw socket: the IP header comes first (its length from IHL), then ICMP.
        case ipv4Raw
        /// IPv4 datagram ("ping") socket: ICMP only; the TTL arrives as an `IP_TTL` control message.
        case ipv4Datagram
        /// IPv6 (raw or datagram): ICMPv6 only; the kernel has checked the checksum.
        case ipv6
    }

    // ICMP types used here (RFC 792, RFC 4443).
    package static let echoReplyV4: UInt8 = 0, unreachableV4: UInt8 = 3, echoRequestV4: UInt8 = 8,
        timeExceededV4: UInt8 = 11
    package static let unreachableV6: UInt8 = 1, tooBigV6: UInt8 = 2, timeExceededV6: UInt8 = 3,
        parameterProblemV6: UInt8 = 4
    package static let echoRequestV6: UInt8 = 128, echoReplyV6: UInt8 = 129

    /// Size of an echo header (type, code, checksum, identifier, sequence).
    package static let headerSize = 8
    /// Size of the nonce at the start of every payload we send.
    package static let nonceSize = 8

    /// Builds an echo request. For IPv4 the checksum is filled in (RFC 1071); for ICMPv6 it is left
    /// zero because the kernel computes it (the pseudo-header needs the source address).
    package static func echoRequest(
        family: IPFamily, identifier: UInt16, sequence: UInt16, nonce: UInt64, payloadSize: Int
    ) -> [UInt8] {
        let size = headerSize + max(0, payloadSize)
        return [UInt8](unsafeUninitializedCapacity: size) { buf, count in
            buf[0] = family == .ipv4 ? echoRequestV4 : echoRequestV6
            buf[1] = 0
            buf[2] = 0
            buf[3] = 0
            buf[4] = UInt8(truncatingIfNeeded: identifier >> 8)
            buf[5] = UInt8(truncatingIfNeeded: identifier)
            buf[6] = UInt8(truncatingIfNeeded: sequence >> 8)
            buf[7] = UInt8(truncatingIfNeeded: sequence)
            for i in headerSize..<size {
                let k = i - headerSize
                // Nonce first, then a recognisable rolling pattern (like ping's).
                buf[i] =
                    k < nonceSize
                    ? UInt8(truncatingIfNeeded: nonce >> (56 - 8 * UInt64(k))) : UInt8(truncatingIfNeeded: k)
            }
            count = size
            if family == .ipv4 {
                let sum = checksum(UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: buf[0..<size])))
                buf[2] = UInt8(truncatingIfNeeded: sum >> 8)
                buf[3] = UInt8(truncatingIfNeeded: sum)
            }
        }
    }

    /// The Internet checksum (RFC 1071): the ones' complement of the ones' complement sum of
    /// 16-bit big-endian words, an odd last byte padded with zero. A buffer that already holds a
    /// correct checksum sums to 0.
    package static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt16 {
        var sum: UInt64 = 0
        var i = 0
        let n = bytes.count
        while i + 1 < n {
            sum &+= UInt64(bytes[i]) << 8 | UInt64(bytes[i + 1])
            i += 2
        }
        if i < n { sum &+= UInt64(bytes[i]) << 8 }
        while sum >> 16 != 0 { sum = (sum & 0xffff) &+ (sum >> 16) }
        return ~UInt16(truncatingIfNeeded: sum)
    }

    /// `checksum(_:)` over an array.
    package static func checksum(_ bytes: [UInt8]) -> UInt16 {
        bytes.withUnsafeBytes { checksum($0) }
    }

    /// Decodes one received datagram. Returns nil for anything that is not well formed enough to
    /// classify (too short, wrong IP version or protocol, bad IPv4 checksum).
    package static func decode(_ bytes: [UInt8], layout: Layout) -> ICMPMessage? {
        bytes.withUnsafeBytes { decode($0, layout: layout) }
    }

    /// Decodes one received datagram from a receive buffer (no copy). See `decode(_:layout:)`.
    package static func decode(_ bytes: UnsafeRawBufferPointer, layout: Layout) -> ICMPMessage? {
        var icmp = bytes
        var ttl: Int?
        if layout == .ipv4Raw {
            guard let (headerLength, hopLimit) = parseIPv4Header(bytes, protocolNumber: 1) else { return nil }
            icmp = UnsafeRawBufferPointer(rebasing: bytes[headerLength...])
            ttl = hopLimit
        }
        guard icmp.count >= headerSize else { return nil }
        let v4 = layout != .ipv6
        if v4, checksum(icmp) != 0 { return nil }
        let type = icmp[0]
        let code = icmp[1]
        switch (v4, type) {
        case (true, echoReplyV4), (false, echoReplyV6):
            return .echoReply(ICMPEcho(icmp), ttl: ttl)
        case (true, echoRequestV4), (false, echoRequestV6):
            return .echoRequest(ICMPEcho(icmp))
        case (true, unreachableV4), (true, timeExceededV4):
            guard let quoted = quotedEchoV4(UnsafeRawBufferPointer(rebasing: icmp[headerSize...])) else {
                return .other(type: type, code: code)
            }
            let kind: ICMPErrorKind = type == unreachableV4 ? .unreachable : .timeExceeded
            // RFC 1191: "fragmentation needed" carries the next hop's MTU in bytes 6-7 (0 from old routers).
            let nextHop = Int(icmp[6]) << 8 | Int(icmp[7])
            return .error(
                ICMPErrorReport(
                    kind: kind, type: type, code: code, echo: quoted.echo, destination: quoted.destination,
                    isIPv6: false, mtu: type == unreachableV4 && code == 4 && nextHop >= 68 ? nextHop : nil))
        case (false, unreachableV6), (false, tooBigV6), (false, timeExceededV6), (false, parameterProblemV6):
            guard let quoted = quotedEchoV6(UnsafeRawBufferPointer(rebasing: icmp[headerSize...])) else {
                return .other(type: type, code: code)
            }
            let kind: ICMPErrorKind =
                switch type {
                case unreachableV6: .unreachable
                case timeExceededV6: .timeExceeded
                case tooBigV6: .packetTooBig
                default: .parameterProblem
                }
            // RFC 4443 3.2: packet too big carries the next hop's MTU in bytes 4-7.
            let mtu = Int(icmp[4]) << 24 | Int(icmp[5]) << 16 | Int(icmp[6]) << 8 | Int(icmp[7])
            return .error(
                ICMPErrorReport(
                    kind: kind, type: type, code: code, echo: quoted.echo, destination: quoted.destination,
                    isIPv6: true,
                    mtu: type == tooBigV6 && (1280...65_535).contains(mtu) ? mtu : nil))
        default:
            return .other(type: type, code: code)
        }
    }

    /// Validates an IPv4 header at the start of `bytes`: version 4, IHL within the buffer, the
    /// expected protocol. Returns the header length and TTL.
    package static func parseIPv4Header(_ bytes: UnsafeRawBufferPointer, protocolNumber: UInt8) -> (Int, Int)? {
        guard bytes.count >= 20, bytes[0] >> 4 == 4 else { return nil }
        let headerLength = Int(bytes[0] & 0x0f) * 4
        guard headerLength >= 20, headerLength <= bytes.count, bytes[9] == protocolNumber else { return nil }
        return (headerLength, Int(bytes[8]))
    }

    /// The echo request quoted in an ICMPv4 error: original IP header, then at least 8 bytes of
    /// our ICMP header (RFC 792). Nil if the quote is not an ICMP echo request.
    package static func quotedEchoV4(_ quote: UnsafeRawBufferPointer) -> (echo: ICMPEcho, destination: [UInt8])? {
        guard let (headerLength, _) = parseIPv4Header(quote, protocolNumber: 1) else { return nil }
        let inner = UnsafeRawBufferPointer(rebasing: quote[headerLength...])
        guard inner.count >= headerSize, inner[0] == echoRequestV4 else { return nil }
        return (ICMPEcho(inner), Array(quote[16..<20]))
    }

    /// The echo request quoted in an ICMPv6 error: a 40-byte IPv6 header whose next header is
    /// ICMPv6 (extension headers are not followed), then our echo header.
    package static func quotedEchoV6(_ quote: UnsafeRawBufferPointer) -> (echo: ICMPEcho, destination: [UInt8])? {
        guard quote.count >= 40 + headerSize, quote[0] >> 4 == 6, quote[6] == 58 else { return nil }
        let inner = UnsafeRawBufferPointer(rebasing: quote[40...])
        guard inner[0] == echoRequestV6 else { return nil }
        return (ICMPEcho(inner), Array(quote[24..<40]))
    }

    /// Decodes an ICMP error that a datagram socket queued (`IP_RECVERR`/`IPV6_RECVERR`, read with
    /// `MSG_ERRQUEUE`). `extendedError` is the `struct sock_extended_err` from the control message
    /// (errno u32, origin u8, type u8, code u8, …); `quote` is the queued data, which starts at our
    /// own echo request header; `destination` is the request's destination from `msg_name`.
    /// Nil for local errors and anything that does not quote an echo request.
    package static func decodeQueuedError(
        extendedError: UnsafeRawBufferPointer, quote: UnsafeRawBufferPointer, destination: [UInt8]?
    ) -> ICMPErrorReport? {
        guard extendedError.count >= 8, quote.count >= headerSize else { return nil }
        let origin = extendedError[4]
        let type = extendedError[5]
        let code = extendedError[6]
        let isIPv6: Bool
        switch origin {
        case 2: isIPv6 = false  // SO_EE_ORIGIN_ICMP
        case 3: isIPv6 = true  // SO_EE_ORIGIN_ICMP6
        default: return nil
        }
        guard quote[0] == (isIPv6 ? echoRequestV6 : echoRequestV4) else { return nil }
        let kind: ICMPErrorKind
        switch (isIPv6, type) {
        case (false, unreachableV4), (true, unreachableV6): kind = .unreachable
        case (false, timeExceededV4), (true, timeExceededV6): kind = .timeExceeded
        case (true, tooBigV6): kind = .packetTooBig
        default: kind = .parameterProblem
        }
        // ee_info (bytes 8-11, host order) is the next hop's MTU for "fragmentation needed" and
        // "packet too big" (the kernel copies it from the ICMP message).
        var mtu: Int?
        if extendedError.count >= 12,
            (isIPv6 && kind == .packetTooBig) || (!isIPv6 && type == unreachableV4 && code == 4)
        {
            let info = Int(extendedError.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
            // Network input: only sizes a link can have (IPv4 68, IPv6 1280, at most 65,535).
            if (isIPv6 ? 1280 : 68)...65_535 ~= info { mtu = info }
        }
        return ICMPErrorReport(
            kind: kind, type: type, code: code, echo: ICMPEcho(quote), destination: destination, isIPv6: isIPv6,
            mtu: mtu)
    }

    /// Reads the 8-byte nonce at the start of an echo payload; nil when the payload is shorter.
    package static func nonce(_ payload: UnsafeRawBufferPointer) -> UInt64? {
        guard payload.count >= nonceSize else { return nil }
        var v: UInt64 = 0
        for i in 0..<nonceSize { v = v << 8 | UInt64(payload[i]) }
        return v
    }
}

/// The fields of an echo request or reply that matter for matching.
package struct ICMPEcho: Sendable, Equatable {
    package var identifier: UInt16
    package var sequence: UInt16
    /// The first 8 payload bytes, when the echo (or the quote of it) is long enough.
    package var nonce: UInt64?

    package init(identifier: UInt16, sequence: UInt16, nonce: UInt64?) {
        self.identifier = identifier
        self.sequence = sequence
        self.nonce = nonce
    }

    /// Reads an echo header; `icmp` must hold at least `ICMPPacket.headerSize` bytes.
    package init(_ icmp: UnsafeRawBufferPointer) {
        identifier = UInt16(icmp[4]) << 8 | UInt16(icmp[5])
        sequence = UInt16(icmp[6]) << 8 | UInt16(icmp[7])
        nonce = ICMPPacket.nonce(UnsafeRawBufferPointer(rebasing: icmp[ICMPPacket.headerSize...]))
    }
}

/// What kind of ICMP error came back for an echo request.
package enum ICMPErrorKind: String, Sendable, Equatable {
    case unreachable = "destination unreachable"
    case timeExceeded = "time exceeded"
    case packetTooBig = "packet too big"
    case parameterProblem = "parameter problem"
}

/// An ICMP error that quotes one of our echo requests.
package struct ICMPErrorReport: Sendable, Equatable {
    package var kind: ICMPErrorKind
    package var type: UInt8
    package var code: UInt8
    /// Our echo request as quoted by the reporting node.
    package var echo: ICMPEcho
    /// The destination address of the quoted request (4 or 16 bytes), when the quote includes it.
    package var destination: [UInt8]?
    package var isIPv6: Bool
    /// The next hop's MTU that a "fragmentation needed" (IPv4) or "packet too big" (IPv6) error
    /// reports; nil for other errors, or when the router left it 0.
    package var mtu: Int?

    package init(
        kind: ICMPErrorKind, type: UInt8, code: UInt8, echo: ICMPEcho, destination: [UInt8]?, isIPv6: Bool,
        mtu: Int? = nil
    ) {
        self.kind = kind
        self.type = type
        self.code = code
        self.echo = echo
        self.destination = destination
        self.isIPv6 = isIPv6
        self.mtu = mtu
    }

    /// The request was too large for a link on the path: "fragmentation needed" or "packet too big".
    package var isTooBig: Bool { isIPv6 ? kind == .packetTooBig : kind == .unreachable && code == 4 }

    /// A short human text: "destination unreachable (host unreachable)".
    package var text: String {
        let name: String? =
            isIPv6
            ? Self.v6Names[kind == .unreachable ? Int(code) : -1] : Self.v4Names[kind == .unreachable ? Int(code) : -1]
        if let name { return "\(kind.rawValue) (\(name))" }
        return "\(kind.rawValue) (type \(type) code \(code))"
    }

    private static let v4Names: [Int: String] = [
        0: "net unreachable", 1: "host unreachable", 2: "protocol unreachable", 3: "port unreachable",
        4: "fragmentation needed", 6: "net unknown", 7: "host unknown", 9: "net prohibited",
        10: "host prohibited", 13: "administratively prohibited",
    ]
    private static let v6Names: [Int: String] = [
        0: "no route", 1: "administratively prohibited", 2: "beyond scope", 3: "address unreachable",
        4: "port unreachable", 5: "source policy failed", 6: "reject route",
    ]
}

/// A decoded ICMP message, as far as an echo prober cares.
package enum ICMPMessage: Sendable, Equatable {
    /// An echo reply; `ttl` is set when the layout carried the IP header (raw IPv4).
    case echoReply(ICMPEcho, ttl: Int?)
    /// An echo request: on loopback a raw socket sees its own requests; always ignored.
    case echoRequest(ICMPEcho)
    /// An error that quotes an echo request.
    case error(ICMPErrorReport)
    /// Anything else (other types, or errors quoting something other than an echo request).
    case other(type: UInt8, code: UInt8)
}
