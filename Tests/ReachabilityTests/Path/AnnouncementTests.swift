import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

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
        #"{"captive": true, "user-portal-url": "https://a/login\"><script>x</script>"}"#,
        #"{"captive": true, "venue-info-url": "https://a/{x}"}"#,
        #"{"captive": true, "user-portal-url": "https://ä/"}"#,
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

/// The path monitor's side: the kernel's RTM_NEWNDUSEROPT message decoded, held per link in the
/// model, dropped with the link, withdrawn, or when it is not repeated in time.
@Suite struct RouterAnnouncementModelTests {
    static func model() -> NetworkModel {
        var model = NetworkModel()
        model.apply(
            NetlinkMessage(
                header: NetlinkHeader(length: 0, type: 0, flags: 0, sequence: 0, portID: 0),
                payload: .newLink(
                    LinkMessage(
                        family: RTNL.familyUnspec, hardwareType: 1, index: 2, flags: RTNL.iffUp | RTNL.iffLowerUp,
                        name: "wlan0"))), classify: { _, _, _, _ in .wifi })
        return model
    }

    /// A whole netlink message (header and payload) as the kernel sends it.
    static func netlink(_ payload: [UInt8]) -> [UInt8] {
        let length = UInt32(16 + payload.count)
        return withUnsafeBytes(of: length.littleEndian) { Array($0) } + [68, 0, 0, 0] + [UInt8](repeating: 0, count: 8)
            + payload
    }

    @Test func theDecoderHandsOverTheOptions() throws {
        let decoded = NetlinkDecoder.decode(Self.netlink(AnnouncementTests.portalMessage))
        guard case .ndUserOption(let m) = try #require(decoded.first).payload else {
            Issue.record("not an ND user option: \(decoded)")
            return
        }
        let options = RouterAdvertisementOptions(m.options)
        #expect(options.captivePortal == .some("https://portal.example/api"))
        #expect(NetlinkDecoder.decode(Self.netlink([0x0a, 0, 0xFF])).first?.payload == .malformed(type: 68))
    }

    @Test func aLinkHoldsWhatItsRouterAnnouncedUntilItLapses() throws {
        var model = Self.model()
        let now = ContinuousClock.now
        var options = RouterAdvertisementOptions()
        options.captivePortal = .some("https://portal.example/api")
        let prefix = try #require(
            NAT64Prefix(bytes: [0, 0x64, 0xff, 0x9b] + [UInt8](repeating: 0, count: 12), length: 96))
        options.pref64 = [(prefix, 600)]
        model.learn(options, interfaceIndex: 2, now: now)
        model.learn(options, interfaceIndex: 9, now: now)  // an unknown link: ignored
        var snapshot = model.snapshot(changeCount: 0)
        #expect(snapshot.announcements.count == 1)
        #expect(snapshot.announcement(on: "wlan0")?.captivePortalAPI == "https://portal.example/api")
        #expect(snapshot.announcement(on: "wlan0")?.pref64 == [prefix])
        #expect(model.nextAnnouncementExpiry == now.advanced(by: .seconds(600)))
        model.expireAnnouncements(now: now.advanced(by: .seconds(601)))
        snapshot = model.snapshot(changeCount: 0)
        #expect(
            snapshot.announcement(on: "wlan0")?.pref64 == []
                && snapshot.announcement(on: "wlan0")?.captivePortalAPI != nil)
        model.expireAnnouncements(now: now.advanced(by: RouterAnnouncement.captivePortalHold))
        #expect(model.snapshot(changeCount: 0).announcements.isEmpty, "option 37 holds 30 minutes unless repeated")
    }

    @Test func theUnrestrictedURNAndAWithdrawalClear() throws {
        var model = Self.model()
        var options = RouterAdvertisementOptions()
        options.captivePortal = .some("https://portal.example/api")
        model.learn(options, interfaceIndex: 2, now: .now)
        var clear = RouterAdvertisementOptions(
            [(37, Array(RouterAnnouncement.unrestricted.utf8) + [0, 0, 0, 0, 0, 0])])
        #expect(clear.captivePortal == .some(nil))
        model.learn(clear, interfaceIndex: 2, now: .now)
        #expect(model.snapshot(changeCount: 0).announcements.isEmpty)
        let prefix = try #require(
            NAT64Prefix(bytes: [0, 0x64, 0xff, 0x9b] + [UInt8](repeating: 0, count: 12), length: 96))
        clear = RouterAdvertisementOptions()
        clear.pref64 = [(prefix, 600)]
        model.learn(clear, interfaceIndex: 2, now: .now)
        clear.pref64 = [(prefix, 0)]
        model.learn(clear, interfaceIndex: 2, now: .now)
        #expect(model.snapshot(changeCount: 0).announcements.isEmpty, "lifetime 0 withdraws")
    }

    @Test func aLinkGoingDownForgetsItsAnnouncements() {
        var model = Self.model()
        var options = RouterAdvertisementOptions()
        options.captivePortal = .some("https://portal.example/api")
        model.learn(options, interfaceIndex: 2, now: .now)
        model.apply(
            NetlinkMessage(
                header: NetlinkHeader(length: 0, type: 0, flags: 0, sequence: 0, portID: 0),
                payload: .newLink(
                    LinkMessage(family: RTNL.familyUnspec, hardwareType: 1, index: 2, flags: 0, name: "wlan0"))),
            classify: { _, _, _, _ in .wifi })
        #expect(model.announcements.isEmpty)
    }

    @Test func aRawAdvertisementReads() {
        let ra: [UInt8] =
            [134, 0, 0, 0, 64, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
            + [37, 4] + Array("https://portal.example/api".utf8) + [0, 0, 0, 0]
            + [38, 2, 0x07, 0x08, 0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0]
        let options = RouterAdvertisementOptions.parseAdvertisement(ra)
        #expect(options?.captivePortal == .some("https://portal.example/api"))
        #expect(
            options?.pref64.map(\.prefix.description) == ["64:ff9b::/96"] && options?.pref64.first?.lifetime == 1800)
        #expect(RouterAdvertisementOptions.parseAdvertisement(Array(ra.prefix(20))) == nil, "an option past the end")
        #expect(RouterAdvertisementOptions.parseAdvertisement([133] + ra.dropFirst()) == nil)
    }
}
