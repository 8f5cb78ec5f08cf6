import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// A response for `www.example.com A` (id 0x1234): a CNAME to `edge.example.com` whose data is
/// compressed against the question, then an A record whose owner points into that data.
let cnameResponse: [UInt8] = [
    0x12, 0x34, 0x81, 0x80, 0, 1, 0, 2, 0, 0, 0, 0,
    // question at 12: www.example.com A IN
    3, 0x77, 0x77, 0x77, 7, 0x65, 0x78, 0x61, 0x6d, 0x70, 0x6c, 0x65, 3, 0x63, 0x6f, 0x6d, 0, 0, 1, 0, 1,
    // answer 1 at 33: owner -> 12, CNAME, IN, ttl 60, rdlength 7, "edge" + pointer to 16 ("example.com")
    0xC0, 0x0C, 0, 5, 0, 1, 0, 0, 0, 60, 0, 7, 4, 0x65, 0x64, 0x67, 0x65, 0xC0, 0x10,
    // answer 2 at 52: owner -> 45 (the CNAME data), A, IN, ttl 60, rdlength 4, 192.0.2.1
    0xC0, 0x2D, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0, 2, 1,
]

@Suite struct DNSMessageTests {
    @Test func queryLayout() throws {
        let q = try DNSMessage.encodeQuery(name: "www.Example.com.", type: .aaaa, id: 0xBEEF)
        #expect(q[0..<12] == [0xBE, 0xEF, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0])
        #expect(
            Array(q[12...]) == [3] + Array("www".utf8) + [7] + Array("Example".utf8) + [3] + Array("com".utf8) + [
                0, 0, 28, 0, 1,
            ])
        let a = try DNSMessage.encodeQuery(name: "x", type: .a, id: 1)
        #expect(Array(a.suffix(4)) == [0, 1, 0, 1])
    }

    @Test(arguments: [
        ("", "empty name"), (".", "empty name"), ("a..b", "empty label"), ("-a.com", "starts or ends with '-'"),
        ("a-.com", "starts or ends with '-'"), ("ex ample.com", "character"), ("exämple.com", "character"),
        (String(repeating: "a", count: 64) + ".com", "more than 63"),
        (Array(repeating: String(repeating: "a", count: 50), count: 6).joined(separator: "."), "more than 253"),
    ])
    func invalidNamesAreRejected(name: String, why: String) {
        #expect {
            _ = try DNSMessage.encodeQuery(name: name, type: .a, id: 1)
        } throws: { error in
            guard case .invalidName(let text) = error as? DNSMessageError else { return false }
            return text.contains(why)
        }
    }

    @Test func longestValidNameEncodes() throws {
        // 4 labels of 63 + 3 dots = 255 > 253; 3×63 + 61 + 3 dots = 253 is the limit.
        let name =
            Array(repeating: String(repeating: "b", count: 63), count: 3).joined(separator: ".") + "."
            + String(repeating: "c", count: 61)
        #expect(name.utf8.count == 253)
        let q = try DNSMessage.encodeQuery(name: name, type: .a, id: 7)
        #expect(q.count == 12 + 255 + 4)
        #expect(throws: DNSMessageError.self) { try DNSMessage.encodeQuery(name: name + "c", type: .a, id: 7) }
    }

    @Test func decodesCompressedCNAMEChain() throws {
        let r = try DNSMessage.decodeResponse(cnameResponse)
        #expect(r.header.id == 0x1234 && r.header.rcode == 0 && !r.header.isTruncated)
        #expect(r.questions == [DNSQuestion(name: "www.example.com", type: 1, klass: 1)])
        #expect(r.answers.map(\.data) == [.cname("edge.example.com"), .a("192.0.2.1")])
        #expect(r.answers.map(\.name) == ["www.example.com", "edge.example.com"])
        #expect(r.addresses(for: "WWW.example.com.", type: .a) == ["192.0.2.1"])
        #expect(r.addresses(for: "www.example.com", type: .aaaa) == [])
        #expect(r.addresses(for: "other.example.com", type: .a) == [])
    }

    @Test func everyTruncationIsAnError() {
        for length in 0..<cnameResponse.count {
            #expect(throws: DNSMessageError.self, "length \(length)") {
                try DNSMessage.decodeResponse(Array(cnameResponse.prefix(length)))
            }
        }
    }

    @Test func pointerLoopsAndForwardPointersAreRejected() {
        let header: [UInt8] = [0, 1, 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0]
        // A name that points at itself.
        #expect(throws: DNSMessageError.badPointer(at: 12)) {
            try DNSMessage.decodeResponse(header + [0xC0, 12, 0, 1, 0, 1])
        }
        // A forward pointer.
        #expect(throws: DNSMessageError.badPointer(at: 12)) {
            try DNSMessage.decodeResponse(header + [0xC0, 14, 0, 1, 0, 1, 0])
        }
        // Two labels whose pointers chase each other: 12 "a" -> 16, 16 "b" -> 12.
        let loop = header + [1, 0x61, 0xC0, 16, 1, 0x62, 0xC0, 12, 0, 1, 0, 1]
        #expect(throws: DNSMessageError.self) { try DNSMessage.decodeResponse(loop) }
        // Reserved label type bits.
        #expect(throws: DNSMessageError.badLabelType(at: 12)) {
            try DNSMessage.decodeResponse(header + [0x41, 0, 0, 1, 0, 1])
        }
    }

    @Test func nameLongerThan255BytesIsRejected() {
        // Four 63-byte labels: 4×64 + 1 = 257 bytes on the wire.
        var body: [UInt8] = []
        for _ in 0..<4 { body += [63] + Array(repeating: 0x61, count: 63) }
        body += [0, 0, 1, 0, 1]
        let message: [UInt8] = [0, 1, 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0] + body
        #expect(throws: DNSMessageError.nameTooLong(at: 12 + 3 * 64)) { try DNSMessage.decodeResponse(message) }
        // The same length reached through a pointer: "b"×63 then a pointer to three 63-byte labels.
        var viaPointer: [UInt8] = [0, 1, 0x81, 0x80, 0, 2, 0, 0, 0, 0, 0, 0]
        for _ in 0..<3 { viaPointer += [63] + Array(repeating: 0x61, count: 63) }
        viaPointer += [0, 0, 1, 0, 1]
        viaPointer += [63] + Array(repeating: 0x62, count: 63) + [0xC0, 12, 0, 1, 0, 1]
        #expect(throws: DNSMessageError.self) { try DNSMessage.decodeResponse(viaPointer) }
    }

    @Test func countsLargerThanThePacketAreRejectedQuickly() {
        let message: [UInt8] = [0, 1, 0x81, 0x80, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 1, 0, 1]
        #expect(throws: DNSMessageError.truncated(at: message.count)) { try DNSMessage.decodeResponse(message) }
    }

    @Test func recordDataLengthsAreChecked() {
        var bad = cnameResponse
        bad[bad.count - 5] = 5  // A record claims 5 bytes of data
        #expect(throws: DNSMessageError.self) { try DNSMessage.decodeResponse(bad) }
        var short = cnameResponse
        short[63] = 3  // A record rdlength 3: bad record data, not a crash
        short.removeLast()
        #expect(throws: DNSMessageError.badRecordData(at: 64)) { try DNSMessage.decodeResponse(short) }
    }

    @Test func queriesAndOtherOpcodesAreNotResponses() throws {
        let query = try DNSMessage.encodeQuery(name: "example.com", type: .a, id: 9)
        #expect(throws: DNSMessageError.notAResponse) { try DNSMessage.decodeResponse(query) }
    }

    @Test func largeGarbageBlobIsAnErrorQuickly() {
        var rng = SplitMix64(seed: 0xD15EA5E)
        let blob = (0..<65_536).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        let clock = ContinuousClock()
        let start = clock.now
        #expect(throws: DNSMessageError.self) { try DNSMessage.decodeResponse(blob) }
        #expect(clock.now - start < .milliseconds(200))
    }

    @Test func hostileLabelBytesAreEscaped() throws {
        // Owner name "a.b" as ONE label plus a label with a NUL byte: must not read as two labels.
        let message: [UInt8] = [0, 1, 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0, 3, 0x61, 0x2E, 0x42, 1, 0, 0, 0, 1, 0, 1]
        let r = try DNSMessage.decodeResponse(message)
        #expect(r.questions.first?.name == "a\\.b.\\000")
    }

    @Test(arguments: [
        "0.0.0.0", "192.0.2.1", "255.255.255.255", "::", "::1", "2001:db8::1", "2001:db8:0:0:1:0:0:1", "fe80::1:2",
        "1:2:3:4:5:6:7:8", "1::", "::ffff:10.1.2.3", "::1.2.3.4", "::ffff:0.0.0.0", "2001:0:0:1::1", "0:1::",
    ])
    func addressTextMatchesInetNtop(text: String) throws {
        let address = try #require(SocketAddress(ip: text))
        #expect(IPAddressText.format(address.addressBytes) == address.ip)
    }
}

/// A tiny seeded PRNG so fuzz-style tests repeat exactly.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite struct DNSAnswerChainTests {
    private func record(_ owner: String, _ data: DNSRecord.Data) -> DNSRecord {
        DNSRecord(name: owner, type: 0, klass: 1, ttl: 60, data: data)
    }

    @Test func chainsLoopsAndStrangers() {
        let header = DNSHeader(
            id: 1, flags: 0x8180, questionCount: 1, answerCount: 0, authorityCount: 0, additionalCount: 0)
        let r = DNSResponse(
            header: header, questions: [],
            answers: [
                record("c.example", .a("192.0.2.3")),  // order in the section does not matter
                record("a.example", .cname("b.example")),
                record("b.example", .cname("c.example")),
                record("c.example", .cname("a.example")),  // a loop back to the start
                record("x.example", .a("192.0.2.99")),  // not on the chain
                record("b.example", .aaaa("2001:db8::2")),
            ])
        #expect(r.addresses(for: "A.example.", type: .a) == ["192.0.2.3"])
        #expect(r.addresses(for: "a.example", type: .aaaa) == ["2001:db8::2"])
        #expect(r.addresses(for: "x.example", type: .a) == ["192.0.2.99"])
    }

    @Test func longCNAMEChainIsLinear() async {
        let header = DNSHeader(
            id: 1, flags: 0x8180, questionCount: 1, answerCount: 0, authorityCount: 0, additionalCount: 0)
        // 6000 records: about what a 64 KiB datagram can hold. Listed from the tail so that a
        // pass-per-link walk would need one pass per record.
        var answers = (0..<6_000).reversed().map { i in record("n\(i).example", .cname("n\(i + 1).example")) }
        answers.append(record("n6000.example", .a("192.0.2.60")))
        let response = DNSResponse(header: header, questions: [], answers: answers)
        let clock = ContinuousClock()
        let start = clock.now
        let found = await runOffCooperativePool { response.addresses(for: "n0.example", type: .a) }
        #expect(found == ["192.0.2.60"])
        // A hang guard only (no performance claim): a quadratic walk of 6,000 links would still
        // finish, so the linear walk is asserted structurally by DNSAnswerChainTests.
        #expect(clock.now - start < .seconds(30))
    }
}
