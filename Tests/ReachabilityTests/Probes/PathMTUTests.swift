import Glibc
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// The path-MTU pieces that need no network: the MTU an ICMP error reports (raw IPv4, ICMPv6,
/// a ping socket's error queue), the size ladder, how echo outcomes become a measurement, the
/// `limited (mtu)` rule, and the configuration keys.
@Suite struct PathMTUTests {
    static let nonce: UInt64 = 0x0102_0304_0506_0708
    static let v4 = SocketAddress(ip: "192.0.2.9")!
    static let v6 = SocketAddress(ip: "2001:db8::9")!

    // MARK: what routers report

    @Test func rawIPv4FragmentationNeededCarriesTheNextHopMTU() throws {
        let request = ICMPPacket.echoRequest(
            family: .ipv4, identifier: 0xabcd, sequence: 7, nonce: Self.nonce, payloadSize: 1472)
        let quote =
            ICMPPacketTests.ipv4Header(
                source: [10, 0, 0, 2], destination: [192, 0, 2, 9], payloadLength: request.count)
            + request.prefix(8)
        // Type 3 code 4; bytes 6-7: next-hop MTU 1400 (0x0578).
        var error: [UInt8] = [3, 4, 0, 0, 0, 0, 0x05, 0x78] + quote
        let sum = ICMPPacket.checksum(error)
        error[2] = UInt8(sum >> 8)
        error[3] = UInt8(sum & 0xff)
        let packet =
            ICMPPacketTests.ipv4Header(source: [10, 0, 0, 1], destination: [10, 0, 0, 2], payloadLength: error.count)
            + error
        guard case .error(let report)? = ICMPPacket.decode(packet, layout: .ipv4Raw) else {
            Issue.record("not decoded as an error")
            return
        }
        #expect(report.isTooBig && report.mtu == 1400)
        #expect(report.text == "destination unreachable (fragmentation needed)")
        // Another unreachable code with the same bytes there reports no MTU.
        var other = error
        other[1] = 1
        other[2] = 0
        other[3] = 0
        let s2 = ICMPPacket.checksum(other)
        other[2] = UInt8(s2 >> 8)
        other[3] = UInt8(s2 & 0xff)
        guard
            case .error(let r2)? = ICMPPacket.decode(
                ICMPPacketTests.ipv4Header(payloadLength: other.count) + other, layout: .ipv4Raw)
        else {
            Issue.record("not decoded")
            return
        }
        #expect(!r2.isTooBig && r2.mtu == nil)
    }

    @Test func ipv6PacketTooBigCarriesTheMTU() {
        var ip6 = [UInt8](repeating: 0, count: 40)
        ip6[0] = 0x60
        ip6[6] = 58
        let request = ICMPPacket.echoRequest(
            family: .ipv6, identifier: 9, sequence: 10, nonce: Self.nonce, payloadSize: 56)
        let packet: [UInt8] = [2, 0, 0, 0, 0, 0, 0x05, 0x78] + ip6 + request
        guard case .error(let report)? = ICMPPacket.decode(packet, layout: .ipv6) else {
            Issue.record("not decoded as an error")
            return
        }
        #expect(report.kind == .packetTooBig && report.isTooBig && report.mtu == 1400)
    }

    @Test func queuedFragmentationNeededReadsEeInfo() {
        let request = ICMPPacket.echoRequest(
            family: .ipv4, identifier: 3, sequence: 4, nonce: Self.nonce, payloadSize: 56)
        // sock_extended_err: errno EMSGSIZE (90), origin 2 (ICMP), type 3, code 4, pad, info 1400 (host order), data.
        var ee: [UInt8] = [90, 0, 0, 0, 2, 3, 4, 0] + [UInt8](repeating: 0, count: 8)
        withUnsafeBytes(of: UInt32(1400)) { ee.replaceSubrange(8..<12, with: $0) }
        let report = ee.withUnsafeBytes { e in
            request.withUnsafeBytes { ICMPPacket.decodeQueuedError(extendedError: e, quote: $0, destination: nil) }
        }
        #expect(report?.isTooBig == true && report?.mtu == 1400)
        // ICMPv6 packet too big (origin 3, type 2).
        var ee6: [UInt8] = [90, 0, 0, 0, 3, 2, 0, 0] + [UInt8](repeating: 0, count: 8)
        withUnsafeBytes(of: UInt32(1280)) { ee6.replaceSubrange(8..<12, with: $0) }
        let request6 = ICMPPacket.echoRequest(
            family: .ipv6, identifier: 3, sequence: 4, nonce: Self.nonce, payloadSize: 56)
        let report6 = ee6.withUnsafeBytes { e in
            request6.withUnsafeBytes { ICMPPacket.decodeQueuedError(extendedError: e, quote: $0, destination: nil) }
        }
        #expect(report6?.kind == .packetTooBig && report6?.mtu == 1280)
    }

    @Test func emsgsizeFromSendIsAnMTUFailure() {
        guard case .notSent(let reason, let text) = ICMPEchoOutcome.sendFailure(EMSGSIZE, destination: Self.v4) else {
            Issue.record("not a send failure")
            return
        }
        #expect(reason == .mtu)
        #expect(text.contains("larger than the interface MTU"), "\(text)")
        // An ICMP prober with dont_fragment reports `mtu` for a too-big echo, before unreachable.
        let r = ICMPProber.summarize(
            [.tooBig(mtu: 1400, "x"), .timedOut], address: Self.v4, duration: .zero, dontFragment: true)
        #expect(r.reason == .mtu)
        // Without dont_fragment the kernel fragments the next echo: an ordinary unreachable.
        let plain = ICMPProber.summarize([.tooBig(mtu: 1400, "x"), .timedOut], address: Self.v4, duration: .zero)
        #expect(plain.reason == .unreachable)
    }

    // MARK: the ladder and the judgement

    @Test func sizesCoverTheUsualMTUsEvery20Bytes() {
        let v4 = MTUProber.sizes(expect: 1500, family: .ipv4)
        #expect(v4 == [1500, 1492, 1480, 1460, 1440, 1420, 1400, 1380, 1360, 1340, 1320, 1300, 1280, 1024, 576])
        #expect(MTUProber.sizes(expect: 1500, family: .ipv6) == Array(v4.dropLast(2)))
        // A forged report is not followed: beyond the ladder, not below the size it was for, absurd.
        let drew: [Int: ICMPEchoOutcome] = [1500: .tooBig(mtu: 4_000_000_000, "x"), 1400: .reply(rtt: .zero, ttl: nil)]
        #expect(MTUProber.followUp(drew, best: 1400, top: 1500, family: .ipv6) == nil)
        #expect(MTUProber.followUp([1500: .tooBig(mtu: 1600, "x")], best: 1400, top: 1500, family: .ipv4) == nil)
        #expect(MTUProber.followUp([1500: .tooBig(mtu: 1410, "x")], best: 1400, top: 1500, family: .ipv4) == 1410)
        #expect(
            MTUProber.followUp(
                [1500: .tooBig(mtu: 1450, "x"), 1460: .tooBig(mtu: 1410, "x")], best: 1400, top: 1500, family: .ipv4)
                == 1410)
        // What docs/configuration.md says one round sends.
        #expect(MTUProber.bytesPerRound(expect: 1500, family: .ipv4) == 19_772)
        #expect(MTUProber.bytesPerRound(expect: 1500, family: .ipv6) == 18_172)
        // A smaller expectation is itself on the ladder; jumbo frames move the top.
        #expect(MTUProber.sizes(expect: 1410, family: .ipv4).contains(1410))
        let jumbo = MTUProber.sizes(expect: 9000, family: .ipv4)
        #expect(jumbo.first == 9000 && jumbo.contains(8780) && jumbo.contains(1280) && jumbo.contains(1492))
        #expect(jumbo.contains(1500), "a 1500-byte path is measured as 1500, not 1492")
        // No step between the top and top - 220 is wider than 20 bytes.
        for sizes in [v4, jumbo] {
            let top = sizes.filter { $0 >= sizes[0] - 220 }
            for (a, b) in zip(top, top.dropFirst()) { #expect(a - b <= 20, "\(a) -> \(b)") }
        }
    }

    static func outcomes(upTo mtu: Int, sizes: [Int], above: ICMPEchoOutcome = .timedOut) -> [Int: ICMPEchoOutcome] {
        Dictionary(uniqueKeysWithValues: sizes.map { ($0, $0 <= mtu ? .reply(rtt: .milliseconds(2), ttl: 60) : above) })
    }

    @Test func aBlackHoleIsMeasuredAtTheLadderStep() {
        let sizes = MTUProber.sizes(expect: 1500, family: .ipv4)
        let r = MTUProber.judge(Self.outcomes(upTo: 1410, sizes: sizes), expect: 1500, address: Self.v4)
        #expect(r.status == .failure && r.reason == .mtu)
        #expect(r.mtu == 1400)
        #expect(r.detail.contains("path MTU 1400 bytes to 192.0.2.9"), "\(r.detail)")
        #expect(r.detail.contains("black hole") && r.detail.hasSuffix("expected 1500"), "\(r.detail)")
        #expect(r.phases[.rtt] == .milliseconds(2))
        // The same path with a lower expectation passes, still measured.
        let ok = MTUProber.judge(Self.outcomes(upTo: 1410, sizes: sizes), expect: 1400, address: Self.v4)
        #expect(ok.status == .success && ok.mtu == 1400 && ok.reason == nil)
    }

    @Test func everySizeBackIsSuccessAt1500() {
        let sizes = MTUProber.sizes(expect: 1500, family: .ipv6)
        let r = MTUProber.judge(Self.outcomes(upTo: 9000, sizes: sizes), expect: 1500, address: Self.v6)
        #expect(r.status == .success && r.mtu == 1500)
        #expect(r.detail.contains("every size came back"))
    }

    @Test func aReportedMTUAndLocalEMSGSIZEAreNamed() {
        let sizes = MTUProber.sizes(expect: 1500, family: .ipv4)
        var reported = Self.outcomes(upTo: 1410, sizes: sizes, above: .tooBig(mtu: 1410, "frag needed"))
        reported[1410] = .reply(rtt: .milliseconds(3), ttl: 60)  // the follow-up echo of exactly that size
        let r = MTUProber.judge(reported, expect: 1500, address: Self.v4)
        #expect(r.mtu == 1410 && r.reason == .mtu)
        #expect(r.detail.contains("a router reported next-hop MTU 1410;"), "\(r.detail)")
        // A report whose follow-up was not confirmed says so.
        var unconfirmed = Self.outcomes(upTo: 1400, sizes: sizes, above: .tooBig(mtu: 1410, "frag needed"))
        unconfirmed[1410] = .timedOut
        #expect(
            MTUProber.judge(unconfirmed, expect: 1500, address: Self.v4).detail.contains(
                "next-hop MTU 1410 (not confirmed by an echo)"))
        // "Fragmentation needed" without an MTU (old routers) is not a silent black hole.
        let noMTU = MTUProber.judge(
            Self.outcomes(upTo: 1400, sizes: sizes, above: .tooBig(mtu: nil, "frag needed")), expect: 1500,
            address: Self.v4)
        #expect(noMTU.detail.contains("without its MTU"), "\(noMTU.detail)")
        let local = MTUProber.judge(
            Self.outcomes(upTo: 1300, sizes: sizes, above: .notSent(.mtu, "EMSGSIZE")), expect: 1500, address: Self.v4)
        #expect(local.mtu == 1300)
        #expect(local.detail.contains("do not fit the local interface"), "\(local.detail)")
    }

    @Test func nothingBackIsNoMeasurement() {
        let sizes = MTUProber.sizes(expect: 1500, family: .ipv4)
        let r = MTUProber.judge(Self.outcomes(upTo: 0, sizes: sizes), expect: 1500, address: Self.v4)
        #expect(r.status == .failure && r.reason == .timeout && r.mtu == nil)
        #expect(r.icmp == nil, "no icmp_* series for an mtu probe")
        #expect(r.detail.hasPrefix("no echo of any size came back (576–1500 bytes)"), "\(r.detail)")
        // Every size refused locally as too big is an unreachable target, not a measurement.
        let refused = MTUProber.judge(
            Self.outcomes(upTo: 0, sizes: sizes, above: .notSent(.mtu, "EMSGSIZE")), expect: 1500, address: Self.v4)
        #expect(refused.reason == .unreachable && refused.mtu == nil)
    }

    @Test func badConfigurationsFailEveryRound() async {
        let r = await MTUProber(.init(host: "127.0.0.1", expect: 100)).probe(deadline: .now + .seconds(1))
        #expect(r.reason == .error && r.detail.contains("outside 576…65535"), "\(r.detail)")
        let p = Probe.mtu("127.0.0.1", expect: 100)
        #expect(p.problem != nil && p.name == "mtu:127.0.0.1")
    }

    // MARK: the verdict

    static func entry(_ name: String, _ type: ProbeType, _ status: ProbeStatus, _ reason: FailureReason? = nil)
        -> RoundEntry
    {
        RoundEntry(
            name: name, type: type,
            result: ProbeResult(status: status, reason: reason, duration: .milliseconds(1), address: "192.0.2.9"))
    }

    @Test func aFailedMTUProbeMakesTheRoundLimitedMTU() {
        let entries = [
            Self.entry("icmp", .icmp, .success), Self.entry("web", .https, .success),
            Self.entry("mtu:x", .mtu, .failure, .mtu),
        ]
        let v = RoundClassifier.classify(pathUnsatisfiedReason: nil, entries: entries, policy: .parallel)
        #expect(v == Verdict(.limited, reason: .probe(.mtu)))
        // Alone, too: its small echoes came back.
        #expect(
            RoundClassifier.classify(pathUnsatisfiedReason: nil, entries: [entries[2]], policy: .icmp)
                == Verdict(.limited, reason: .probe(.mtu)))
        // An mtu probe whose target is down is an ordinary failure; the others still prove full.
        let down = [Self.entry("icmp", .icmp, .success), Self.entry("mtu:x", .mtu, .failure, .timeout)]
        #expect(
            RoundClassifier.classify(pathUnsatisfiedReason: nil, entries: down, policy: .parallel) == Verdict(.full))
        // A passing mtu probe proves the internet like an echo does.
        #expect(
            RoundClassifier.classify(
                pathUnsatisfiedReason: nil, entries: [Self.entry("mtu:x", .mtu, .success)], policy: .parallel)
                == Verdict(.full))
        // A don't-fragment ICMP probe failing with mtu while others succeed, too.
        let df = [Self.entry("web", .https, .success), Self.entry("big", .icmp, .failure, .mtu)]
        #expect(
            RoundClassifier.classify(pathUnsatisfiedReason: nil, entries: df, policy: .parallel)
                == Verdict(.limited, reason: .probe(.mtu)))
        // A portal still wins, and no path is still none.
        #expect(
            RoundClassifier.classify(
                pathUnsatisfiedReason: nil, entries: entries + [Self.entry("p", .http, .portal, .redirect)],
                policy: .parallel
            ).state == .portal)
        #expect(
            RoundClassifier.classify(pathUnsatisfiedReason: .noCarrier, entries: entries, policy: .parallel).state
                == .none)
    }

    // MARK: configuration

    @Test func theFileTakesMTUProbesAndICMPSizes() throws {
        let c = try ConfigLoader.parse(
            """
            probes:
              - type: mtu
                target: 192.0.2.9
                mtu:
                  expect: 1492
              - name: big-ping
                type: icmp
                target: 192.0.2.9
                icmp:
                  size: 1472
                  dont_fragment: true
            """, file: "t.yml")
        #expect(c.probes[0].name == "mtu:192.0.2.9" && c.probes[0].type == .mtu && c.probes[0].mtu?.expect == 1492)
        #expect(c.probes[1].icmp?.payloadSize == 1472 && c.probes[1].icmp?.dontFragment == true)
        let specs = try c.probes.map { try ConfigProbeBuilder.spec($0, file: "t.yml") }
        let mtu = try #require(try specs[0].make(nil) as? MTUProber)
        #expect(mtu.configuration.expect == 1492 && mtu.configuration.host == "192.0.2.9")
        let icmp = try #require(try specs[1].make("eth0") as? ICMPProber)
        #expect(icmp.configuration.payloadSize == 1472 && icmp.configuration.dontFragment)
        #expect(icmp.configuration.interface == "eth0")
    }

    @Test(arguments: [
        (
            "probes:\n  - type: mtu\n    target: 192.0.2.9\n    mtu:\n      expect: 100\n",
            "t.yml:5:15: probes[0].mtu.expect: expected a whole number from 576 to 65535, found \"100\""
        ),
        (
            "probes:\n  - type: icmp\n    target: 192.0.2.9\n    mtu:\n      expect: 1500\n",
            "t.yml:4:5: probes[0].mtu: expected no mtu section on a probe of type icmp, found a mtu section (it applies to type mtu)"
        ),
        (
            "probes:\n  - type: mtu\n    target: 192.0.2.9\n    mtu:\n      expected: 1500\n",
            "t.yml:5:7: probes[0].mtu.expected: expected one of the keys expect, found an unknown key (did you mean \"expect\"?)"
        ),
        (
            "probes:\n  - type: icmp\n    target: 192.0.2.9\n    icmp:\n      size: 70000\n",
            "t.yml:5:13: probes[0].icmp.size: expected a whole number from 0 to 65507, found \"70000\""
        ),
        (
            "probes:\n  - type: icmp\n    target: 192.0.2.9\n    icmp:\n      dont_fragment: maybe\n",
            "t.yml:5:22: probes[0].icmp.dont_fragment: expected true or false, found \"maybe\""
        ),
    ])
    func badMTUKeysAreNamed(text: String, message: String) {
        #expect(ConfigSchemaTests.error(text) == message)
    }
}
