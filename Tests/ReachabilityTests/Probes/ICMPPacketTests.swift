import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// Byte fixtures for the ICMP codec: requests, replies in all three layouts, errors quoting our
/// requests, and hostile input (truncation, garbage, lying length fields).
@Suite struct ICMPPacketTests {
    // MARK: fixtures

    /// A 20-byte (or longer, with options) IPv4 header carrying `payloadLength` bytes of `proto`.
    static func ipv4Header(
        ttl: UInt8 = 64, proto: UInt8 = 1, source: [UInt8] = [127, 0, 0, 1],
        destination: [UInt8] = [127, 0, 0, 1], optionWords: Int = 0, payloadLength: Int
    ) -> [UInt8] {
        let length = 20 + optionWords * 4
        var h = [UInt8](repeating: 0, count: length)
        h[0] = 0x40 | UInt8(5 + optionWords)
        h[2] = UInt8((length + payloadLength) >> 8)
        h[3] = UInt8((length + payloadLength) & 0xff)
        h[8] = ttl
        h[9] = proto
        h.replaceSubrange(12..<16, with: source)
        h.replaceSubrange(16..<20, with: destination)
        for i in 20..<length { h[i] = 1 }  // NOP options
        let sum = ICMPPacket.checksum(h)
        h[10] = UInt8(sum >> 8)
        h[11] = UInt8(sum & 0xff)
        return h
    }

    /// An ICMPv4 echo reply for a request we built: same bytes with type 0 and a fixed checksum.
    static func reply(to request: [UInt8]) -> [UInt8] {
        var r = request
        r[0] = 0
        r[2] = 0
        r[3] = 0
        let sum = ICMPPacket.checksum(r)
        r[2] = UInt8(sum >> 8)
        r[3] = UInt8(sum & 0xff)
        return r
    }

    static let nonce: UInt64 = 0x0102_0304_0506_0708

    // MARK: checksum and encoding

    @Test func checksumMatchesRFC1071Example() {
        // RFC 1071 §3: the words 0001 f203 f4f5 f6f7 sum to ddf2 (with carries folded).
        #expect(ICMPPacket.checksum([0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]) == ~UInt16(0xddf2))
        // Odd length: the last byte is the high half of a zero-padded word.
        #expect(ICMPPacket.checksum([0x12, 0x34, 0x56]) == ~UInt16(0x1234 + 0x5600))
        #expect(ICMPPacket.checksum([]) == 0xffff)
        // Carry folding: ffff + ffff = 1fffe -> fffe + 1 = ffff -> checksum 0.
        #expect(ICMPPacket.checksum([0xff, 0xff, 0xff, 0xff]) == 0)
    }

    @Test func echoRequestV4IsWellFormed() {
        let p = ICMPPacket.echoRequest(
            family: .ipv4, identifier: 0xbeef, sequence: 0x0102, nonce: Self.nonce, payloadSize: 56)
        #expect(p.count == 64)
        #expect(Array(p[0..<2]) == [8, 0])
        #expect(Array(p[4..<8]) == [0xbe, 0xef, 0x01, 0x02])
        #expect(Array(p[8..<16]) == [1, 2, 3, 4, 5, 6, 7, 8])
        #expect(ICMPPacket.checksum(p) == 0, "a packet carrying its checksum sums to zero")
        #expect(p[2] != 0 || p[3] != 0)
    }

    @Test func echoRequestV6LeavesChecksumToKernel() {
        let p = ICMPPacket.echoRequest(family: .ipv6, identifier: 7, sequence: 9, nonce: Self.nonce, payloadSize: 0)
        #expect(p == [128, 0, 0, 0, 0, 7, 0, 9])
        let short = ICMPPacket.echoRequest(family: .ipv6, identifier: 7, sequence: 9, nonce: Self.nonce, payloadSize: 3)
        #expect(Array(short[8...]) == [1, 2, 3], "a short payload carries a truncated nonce")
        #expect(ICMPPacket.echoRequest(family: .ipv4, identifier: 1, sequence: 1, nonce: 0, payloadSize: -5).count == 8)
    }

    // MARK: replies

    @Test(arguments: [0, 1, 10])
    func rawIPv4ReplySkipsHeaderByIHLAndReadsTTL(optionWords: Int) {
        let request = ICMPPacket.echoRequest(
            family: .ipv4, identifier: 0x1234, sequence: 0xfffe, nonce: Self.nonce, payloadSize: 56)
        let reply = Self.reply(to: request)
        let packet = Self.ipv4Header(ttl: 57, optionWords: optionWords, payloadLength: reply.count) + reply
        let decoded = ICMPPacket.decode(packet, layout: .ipv4Raw)
        #expect(decoded == .echoReply(ICMPEcho(identifier: 0x1234, sequence: 0xfffe, nonce: Self.nonce), ttl: 57))
    }

    @Test func datagramIPv4ReplyHasNoHeader() {
        let reply = Self.reply(
            to: ICMPPacket.echoRequest(family: .ipv4, identifier: 3, sequence: 4, nonce: Self.nonce, payloadSize: 8))
        #expect(
            ICMPPacket.decode(reply, layout: .ipv4Datagram)
                == .echoReply(ICMPEcho(identifier: 3, sequence: 4, nonce: Self.nonce), ttl: nil))
        // The same bytes read as a raw packet do not parse (no IPv4 header).
        #expect(ICMPPacket.decode(reply, layout: .ipv4Raw) == nil)
    }

    @Test func ipv4ReplyWithBadChecksumIsDropped() {
        var reply = Self.reply(
            to: ICMPPacket.echoRequest(family: .ipv4, identifier: 3, sequence: 4, nonce: Self.nonce, payloadSize: 16))
        reply[12] ^= 0x40
        #expect(ICMPPacket.decode(reply, layout: .ipv4Datagram) == nil)
        #expect(ICMPPacket.decode(Self.ipv4Header(payloadLength: reply.count) + reply, layout: .ipv4Raw) == nil)
    }

    @Test func ipv6ReplyIsTrustedWithoutChecksum() {
        // The kernel verified the ICMPv6 checksum; the field is not ours to check (pseudo-header).
        let reply: [UInt8] = [129, 0, 0xde, 0xad, 0x00, 0x2a, 0x01, 0x00, 1, 2, 3, 4, 5, 6, 7, 8, 9]
        #expect(
            ICMPPacket.decode(reply, layout: .ipv6)
                == .echoReply(ICMPEcho(identifier: 42, sequence: 256, nonce: Self.nonce), ttl: nil))
        // An ICMPv4 reply type means nothing in ICMPv6.
        #expect(ICMPPacket.decode([0, 0, 0, 0, 0, 1, 0, 1], layout: .ipv6) == .other(type: 0, code: 0))
    }

    @Test func ownRequestsAreRecognisedNotMatched() {
        let request = ICMPPacket.echoRequest(
            family: .ipv4, identifier: 5, sequence: 6, nonce: Self.nonce, payloadSize: 56)
        let looped = Self.ipv4Header(payloadLength: request.count) + request
        #expect(
            ICMPPacket.decode(looped, layout: .ipv4Raw)
                == .echoRequest(ICMPEcho(identifier: 5, sequence: 6, nonce: Self.nonce)))
        let v6 = ICMPPacket.echoRequest(family: .ipv6, identifier: 5, sequence: 6, nonce: Self.nonce, payloadSize: 8)
        #expect(
            ICMPPacket.decode(v6, layout: .ipv6)
                == .echoRequest(ICMPEcho(identifier: 5, sequence: 6, nonce: Self.nonce)))
    }

    @Test func rawIPv4RejectsOtherProtocolsAndBadHeaders() {
        let reply = Self.reply(
            to: ICMPPacket.echoRequest(family: .ipv4, identifier: 1, sequence: 1, nonce: 0, payloadSize: 8))
        #expect(
            ICMPPacket.decode(Self.ipv4Header(proto: 17, payloadLength: reply.count) + reply, layout: .ipv4Raw) == nil)
        var badVersion = Self.ipv4Header(payloadLength: reply.count) + reply
        badVersion[0] = 0x65
        #expect(ICMPPacket.decode(badVersion, layout: .ipv4Raw) == nil)
        var shortIHL = Self.ipv4Header(payloadLength: reply.count) + reply
        shortIHL[0] = 0x44
        #expect(ICMPPacket.decode(shortIHL, layout: .ipv4Raw) == nil)
        // IHL 15 (60 bytes) claims more header than the 36 bytes present.
        var longIHL = Self.ipv4Header(payloadLength: reply.count) + reply
        longIHL[0] = 0x4f
        #expect(ICMPPacket.decode(longIHL, layout: .ipv4Raw) == nil)
    }

    // MARK: errors quoting our requests

    @Test func ipv4DestinationUnreachableQuotesOurEcho() {
        let request = ICMPPacket.echoRequest(
            family: .ipv4, identifier: 0xabcd, sequence: 77, nonce: Self.nonce, payloadSize: 56)
        // RFC 792 quote: the original IP header plus the first 8 bytes of our ICMP message.
        let quote =
            Self.ipv4Header(source: [10, 0, 0, 2], destination: [192, 0, 2, 9], payloadLength: request.count)
            + request.prefix(8)
        var error: [UInt8] = [3, 1, 0, 0, 0, 0, 0, 0] + quote
        let sum = ICMPPacket.checksum(error)
        error[2] = UInt8(sum >> 8)
        error[3] = UInt8(sum & 0xff)
        let packet =
            Self.ipv4Header(source: [10, 0, 0, 1], destination: [10, 0, 0, 2], payloadLength: error.count) + error
        let expected = ICMPErrorReport(
            kind: .unreachable, type: 3, code: 1, echo: ICMPEcho(identifier: 0xabcd, sequence: 77, nonce: nil),
            destination: [192, 0, 2, 9], isIPv6: false)
        #expect(ICMPPacket.decode(packet, layout: .ipv4Raw) == .error(expected))
        #expect(expected.text == "destination unreachable (host unreachable)")
        // Time exceeded is decoded the same way.
        var te = error
        te[0] = 11
        te[1] = 0
        te[2] = 0
        te[3] = 0
        let s2 = ICMPPacket.checksum(te)
        te[2] = UInt8(s2 >> 8)
        te[3] = UInt8(s2 & 0xff)
        guard case .error(let r)? = ICMPPacket.decode(Self.ipv4Header(payloadLength: te.count) + te, layout: .ipv4Raw)
        else {
            Issue.record("time exceeded not decoded")
            return
        }
        #expect(r.kind == .timeExceeded && r.echo.sequence == 77)
    }

    @Test func ipv4ErrorQuotingSomethingElseIsOther() {
        // A port unreachable quoting a UDP datagram is not about us.
        let udp: [UInt8] = [0x30, 0x39, 0x00, 0x35, 0x00, 0x08, 0x00, 0x00]
        var error: [UInt8] = [3, 3, 0, 0, 0, 0, 0, 0] + Self.ipv4Header(proto: 17, payloadLength: 8) + udp
        let sum = ICMPPacket.checksum(error)
        error[2] = UInt8(sum >> 8)
        error[3] = UInt8(sum & 0xff)
        #expect(ICMPPacket.decode(error, layout: .ipv4Datagram) == .other(type: 3, code: 3))
    }

    @Test func ipv6ErrorsQuoteOurEchoAndDestination() {
        let destination: [UInt8] = [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [1]
        var ip6 = [UInt8](repeating: 0, count: 40)
        ip6[0] = 0x60
        ip6[6] = 58
        ip6[7] = 64
        ip6.replaceSubrange(24..<40, with: destination)
        let request = ICMPPacket.echoRequest(
            family: .ipv6, identifier: 9, sequence: 10, nonce: Self.nonce, payloadSize: 56)
        for (type, kind) in [
            (UInt8(1), ICMPErrorKind.unreachable), (2, .packetTooBig), (3, .timeExceeded), (4, .parameterProblem),
        ] {
            let packet: [UInt8] = [type, 0, 0, 0, 0, 0, 0, 0] + ip6 + request
            let expected = ICMPErrorReport(
                kind: kind, type: type, code: 0, echo: ICMPEcho(identifier: 9, sequence: 10, nonce: Self.nonce),
                destination: destination, isIPv6: true)
            #expect(ICMPPacket.decode(packet, layout: .ipv6) == .error(expected))
        }
        // Next header not ICMPv6 (an extension header, or UDP): not ours to match.
        var other = ip6
        other[6] = 17
        #expect(
            ICMPPacket.decode([1, 4, 0, 0, 0, 0, 0, 0] + other + request, layout: .ipv6) == .other(type: 1, code: 4))
        #expect(
            ICMPErrorReport(
                kind: .unreachable, type: 1, code: 1, echo: ICMPEcho(identifier: 0, sequence: 0, nonce: nil),
                destination: nil, isIPv6: true
            ).text == "destination unreachable (administratively prohibited)")
    }

    @Test func queuedErrorsFromPingSockets() {
        let request = ICMPPacket.echoRequest(
            family: .ipv4, identifier: 300, sequence: 5, nonce: Self.nonce, payloadSize: 56)
        // struct sock_extended_err: ee_errno (u32), ee_origin 2 (ICMP), ee_type 3, ee_code 13, pad, info, data.
        let ee: [UInt8] = [113, 0, 0, 0, 2, 3, 13, 0] + [UInt8](repeating: 0, count: 8)
        let report = ee.withUnsafeBytes { e in
            request.withUnsafeBytes { q in ICMPPacket.decodeQueuedError(extendedError: e, quote: q, destination: nil) }
        }
        #expect(
            report
                == ICMPErrorReport(
                    kind: .unreachable, type: 3, code: 13,
                    echo: ICMPEcho(identifier: 300, sequence: 5, nonce: Self.nonce),
                    destination: nil, isIPv6: false))
        #expect(report?.text == "destination unreachable (administratively prohibited)")
        // Local errors (origin 1) and truncated quotes are not reports.
        let local: [UInt8] = [90, 0, 0, 0, 1, 0, 0, 0] + [UInt8](repeating: 0, count: 8)
        #expect(
            local.withUnsafeBytes { e in
                request.withUnsafeBytes { ICMPPacket.decodeQueuedError(extendedError: e, quote: $0, destination: nil) }
            } == nil)
        #expect(
            ee.withUnsafeBytes { e in
                request.prefix(7).withUnsafeBytes {
                    ICMPPacket.decodeQueuedError(extendedError: e, quote: $0, destination: nil)
                }
            } == nil)
        #expect(
            ee.prefix(4).withUnsafeBytes { e in
                request.withUnsafeBytes { ICMPPacket.decodeQueuedError(extendedError: e, quote: $0, destination: nil) }
            } == nil)
    }

    // MARK: hostile input

    @Test func everyTruncationDecodesWithoutTrapping() {
        let request = ICMPPacket.echoRequest(
            family: .ipv4, identifier: 1, sequence: 2, nonce: Self.nonce, payloadSize: 56)
        let raw = Self.ipv4Header(payloadLength: 64) + Self.reply(to: request)
        let quote = Self.ipv4Header(destination: [192, 0, 2, 1], payloadLength: 64) + request
        let v4Error: [UInt8] = [3, 0, 0, 0, 0, 0, 0, 0] + quote
        var ip6 = [UInt8](repeating: 0, count: 40)
        ip6[0] = 0x60
        ip6[6] = 58
        let v6Error: [UInt8] =
            [1, 0, 0, 0, 0, 0, 0, 0] + ip6
            + ICMPPacket.echoRequest(family: .ipv6, identifier: 1, sequence: 2, nonce: 0, payloadSize: 8)
        for (packet, layout) in [(raw, ICMPPacket.Layout.ipv4Raw), (v4Error, .ipv4Datagram), (v6Error, .ipv6)] {
            for n in 0...packet.count {
                let decoded = ICMPPacket.decode(Array(packet.prefix(n)), layout: layout)
                if n < 8 { #expect(decoded == nil) }
            }
        }
        // A truncated reply still matches by identifier and sequence, without a nonce.
        let short = Self.reply(
            to: ICMPPacket.echoRequest(family: .ipv4, identifier: 1, sequence: 2, nonce: Self.nonce, payloadSize: 4))
        #expect(
            ICMPPacket.decode(short, layout: .ipv4Datagram)
                == .echoReply(ICMPEcho(identifier: 1, sequence: 2, nonce: nil), ttl: nil))
    }

    @Test func randomGarbageNeverTraps() {
        var rng = SplitMix64(seed: 0x5eed)
        var decodedSomething = 0
        for _ in 0..<20_000 {
            let count = Int(rng.next() % 120)
            var bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            // Make a share of them look like IPv4/ICMP so the deeper paths run too.
            if count > 20, rng.next() % 2 == 0 {
                bytes[0] = 0x45
                bytes[9] = 1
            }
            for layout in [ICMPPacket.Layout.ipv4Raw, .ipv4Datagram, .ipv6] {
                if ICMPPacket.decode(bytes, layout: layout) != nil { decodedSomething += 1 }
            }
        }
        #expect(decodedSomething > 0, "the ICMPv6 layout classifies any 8+ bytes")
    }
}
