import Testing

@testable import Reachability

/// The network's own word (issue #43): the RA options the kernel hands userspace, and the RFC 8908
/// API's answer. The two messages are the bytes an rtnetlink listener received on kernel 6.18
/// for a crafted RA in two namespaces (`/work/i43-research.md`), netlink header taken off.
@Suite struct AnnouncementTests {
    static func bytes(_ hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var it = hex.makeIterator()
        while let a = it.next(), let b = it.next() { out.append(UInt8(String([a, b]), radix: 16)!) }
        return out
    }

    static let portalMessage = bytes(
        "0a002000020000008600000000000000250468747470733a2f2f706f7274616c2e6578616d706c652f6170690000000014000100fe80000000000000009c98fffeb01ea3"
    )
    static let pref64Message = bytes(
        "0a001000020000008600000000000000260207080064ff9b000000000000000014000100fe80000000000000009c98fffeb01ea3")

    @Test func theKernelsMessagesParse() throws {
        let portal = try #require(NDUserOptionMessage.parse(Self.portalMessage))
        #expect(portal.interfaceIndex == 2 && portal.icmpType == 134)
        #expect(portal.options.map(\.type) == [37])
        #expect(portal.source == Self.bytes("fe80000000000000009c98fffeb01ea3"))
        #expect(CaptivePortalURIOption.uri(portal.options[0].body) == "https://portal.example/api")

        let pref = try #require(NDUserOptionMessage.parse(Self.pref64Message))
        #expect(pref.options.map(\.type) == [38])
        let option = try #require(PREF64Option(pref.options[0].body))
        #expect(option.length == 96 && option.lifetimeSeconds == 1800)
        #expect(option.prefix == Self.bytes("0064ff9b000000000000000000000000"))
    }

    @Test func hostileMessagesAreRefused() {
        var short = Self.portalMessage
        short[2] = 0xFF  // options length past the end
        #expect(NDUserOptionMessage.parse(short) == nil)
        var zero = Self.portalMessage
        zero[17] = 0  // an option of length 0 would loop for ever
        #expect(NDUserOptionMessage.parse(zero) == nil)
        #expect(NDUserOptionMessage.parse([UInt8](repeating: 0, count: 8)) == nil)
        #expect(CaptivePortalURIOption.uri(Array("https://a b/".utf8)) == nil)
        #expect(CaptivePortalURIOption.uri(Array("https://a/\u{1B}[2J".utf8)) == nil)
        #expect(CaptivePortalURIOption.uri([0, 0, 0, 0]) == nil)
        #expect(CaptivePortalURIOption.uri(Array("https://a/".utf8) + [0, 0x41]) == nil, "bytes after the padding")
        #expect(CaptivePortalURIOption.uri([0xFF, 0xFE]) == nil)
        #expect(PREF64Option([0x07, 0x0E] + [UInt8](repeating: 0, count: 12)) == nil, "prefix length code 6")
        let p56 = PREF64Option(
            [0x00, 0x0A] + [0x20, 0x01, 0x0d, 0xb8, 0x01, 0x02, 0x03, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        #expect(
            p56?.length == 56
                && p56?.prefix == [0x20, 0x01, 0x0d, 0xb8, 0x01, 0x02, 0x03] + [UInt8](repeating: 0, count: 9))
    }

    @Test func theAPIsAnswer() throws {
        let answer = try CaptivePortalAnswer.parse(
            Array(
                #"{"captive": true, "user-portal-url": "https://portal.example/login", "venue-info-url": "http://venue.example/", "can-extend-session": true, "seconds-remaining": 326, "bytes-remaining": 65536, "x-future": [1]}"#
                    .utf8))
        #expect(answer.captive && answer.userPortalURL == "https://portal.example/login")
        #expect(answer.venueInfoURL == "http://venue.example/" && answer.canExtendSession == true)
        #expect(answer.secondsRemaining == 326 && answer.bytesRemaining == 65536)
        #expect(try !CaptivePortalAnswer.parse(Array(#"{"captive": false}"#.utf8)).captive)
    }

    @Test(arguments: [
        #"{"user-portal-url": "https://a/"}"#, #"{"captive": "true"}"#, #"[true]"#, "not json",
        #"{"captive": true, "captive": false}"#, #"{"captive": true, "user-portal-url": "http://a/"}"#,
        #"{"captive": true, "user-portal-url": "https://a/\u001b[2J"}"#,
        #"{"captive": true, "user-portal-url": "javascript:alert(1)"}"#,
        #"{"captive": true, "seconds-remaining": -1}"#, #"{"captive": true, "bytes-remaining": "5"}"#,
        #"{"captive": true, "can-extend-session": 1}"#,
    ])
    func hostileAnswersAreRefused(body: String) {
        #expect(throws: CaptivePortalAnswer.Problem.self) { try CaptivePortalAnswer.parse(Array(body.utf8)) }
    }

    @Test func hugeAnswersAreRefused() {
        let url = "https://a/" + String(repeating: "x", count: 100_000)
        #expect(throws: CaptivePortalAnswer.Problem.self) {
            try CaptivePortalAnswer.parse(Array(#"{"captive": true, "user-portal-url": "\#(url)"}"#.utf8))
        }
        let long = "https://a/" + String(repeating: "x", count: 3000)
        #expect(throws: CaptivePortalAnswer.Problem.self) {
            try CaptivePortalAnswer.parse(Array(#"{"captive": true, "user-portal-url": "\#(long)"}"#.utf8))
        }
    }
}
