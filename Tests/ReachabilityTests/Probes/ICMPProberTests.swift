import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// ICMPProber on the host's loopback (raw sockets: the tests run as root), plus its pure parts:
/// configuration checks and how echo outcomes become a result.
@Suite struct ICMPProberTests {
    static func prober(
        _ host: String, _ engine: ICMPEngine, family: FamilyPreference = .any, count: Int = 3,
        spacing: Duration = .milliseconds(5), interface: String? = nil, mode: ICMPSocketMode = .raw
    ) -> ICMPProber {
        ICMPProber(
            .init(host: host, family: family, count: count, spacing: spacing, interface: interface, mode: mode),
            engine: engine)
    }

    @Test(arguments: [("127.0.0.1", IPFamily.ipv4), ("::1", .ipv6)])
    func rawLoopbackRoundTrip(host: String, family: IPFamily) async throws {
        let engine = ICMPEngine()
        defer { engine.close() }
        let r = await Self.prober(host, engine, count: 3).probe(deadline: .now + .seconds(5))
        #expect(r.status == .success, "\(r.detail)")
        #expect(r.reason == nil)
        #expect(r.family == family && r.address == host)
        let icmp = try #require(r.icmp)
        #expect(icmp.sent == 3 && icmp.received == 3 && icmp.rtts.count == 3)
        let ttl = try #require(icmp.ttl)
        #expect((1...255).contains(ttl))
        let rtt = try #require(r.phases[.rtt])
        #expect(rtt > .zero && rtt < .seconds(1))
        #expect(rtt == icmp.rtts.reduce(.zero, +) / 3, "the rtt phase is the mean")
        #expect(r.phases[.resolve] != nil)
        #expect(r.detail.hasPrefix("3/3 replies from \(host), rtt min/avg/max "))
        #expect(try engine.socketKind(family: family, mode: .raw) == .raw)
    }

    @Test func hostNamesAreResolvedEachRound() async throws {
        let engine = ICMPEngine()
        defer { engine.close() }
        let p = Self.prober("localhost", engine, family: .ipv4, count: 1)
        for _ in 0..<2 {
            let r = await p.probe(deadline: .now + .seconds(5))
            #expect(r.status == .success, "\(r.detail)")
            #expect(r.address == "127.0.0.1")
        }
    }

    @Test(arguments: ["bad host!", "127.0.0.1\0", "::1::2", "1.2.3.4.5:80", String(repeating: "a", count: 300)])
    func malformedOrUnknownHostIsDNSFailure(host: String) async {
        let r = await Self.prober(host, ICMPEngine(), count: 1).probe(deadline: .now + .seconds(5))
        #expect(r.status == .failure)
        #expect(r.reason == .dns, "\(r.detail)")
        #expect(r.icmp == nil)
    }

    @Test func familyMismatchIsDNSFailure() async {
        let r = await Self.prober("127.0.0.1", ICMPEngine(), family: .ipv6).probe(deadline: .now + .seconds(2))
        #expect(r.reason == .dns)
    }

    @Test func bindingToLoopbackWorksAndAMissingInterfaceIsUnreachable() async {
        let engine = ICMPEngine()
        defer { engine.close() }
        let ok = await Self.prober("127.0.0.1", engine, count: 1, interface: "lo").probe(deadline: .now + .seconds(5))
        #expect(ok.status == .success, "\(ok.detail)")
        let missing = await Self.prober("127.0.0.1", engine, count: 1, interface: "rxnosuch0").probe(
            deadline: .now + .seconds(5))
        #expect(missing.reason == .unreachable)
        #expect(missing.detail.contains("rxnosuch0"), "\(missing.detail)")
        #expect(missing.icmp?.sent == 0)
    }

    @Test func twoHundredFiftyConcurrentTargetsLoseNothing() async throws {
        let engine = ICMPEngine()
        defer { engine.close() }
        let results = await withTaskGroup(of: ProbeResult.self) { group in
            for i in 1...250 {
                group.addTask {
                    await Self.prober("127.0.0.\(i)", engine, count: 3, spacing: .zero).probe(
                        deadline: .now + .seconds(8))
                }
            }
            var all: [ProbeResult] = []
            for await r in group { all.append(r) }
            return all
        }
        #expect(results.count == 250)
        #expect(
            results.allSatisfy { $0.icmp?.received == 3 },
            "\(results.filter { $0.icmp?.received != 3 }.map(\.detail).prefix(3))")
        #expect(Set(results.compactMap(\.address)).count == 250, "each reply matched its own target")
        #expect(try engine.socket(family: .ipv4, mode: .raw, interface: nil).pendingCount == 0)
    }

    @Test func sequenceNumbersWrapAround() async throws {
        let engine = ICMPEngine()
        defer { engine.close() }
        let socket = try engine.socket(family: .ipv4, mode: .raw, interface: nil)
        socket.state.withLock { $0.nextSequence = 65_533 }
        let r = await Self.prober("127.0.0.1", engine, count: 6, spacing: .zero).probe(deadline: .now + .seconds(5))
        #expect(r.icmp?.received == 6, "\(r.detail)")
        #expect(socket.state.withLock { $0.nextSequence } == 3)
    }

    @Test func deadlineInThePastSendsNothing() async {
        let r = await Self.prober("127.0.0.1", ICMPEngine(), count: 2, spacing: .zero).probe(
            deadline: .now - .seconds(1))
        #expect(r.status == .failure && r.reason == .timeout)
        #expect(r.icmp?.sent == 0)
    }

    @Test func badConfigurationFailsEachRoundWithError() async {
        let bad: [ICMPProber.Configuration] = [
            .init(host: ""), .init(host: "127.0.0.1", count: 0), .init(host: "127.0.0.1", count: 1001),
            .init(host: "127.0.0.1", spacing: .milliseconds(-1)), .init(host: "127.0.0.1", payloadSize: 70_000),
            .init(host: "127.0.0.1", interface: "eth0/../x"),
            .init(host: "127.0.0.1", interface: "this-name-is-too-long"),
        ]
        for c in bad {
            #expect(c.problem != nil)
            let r = await ICMPProber(c, engine: ICMPEngine()).probe(deadline: .now + .seconds(1))
            #expect(r.reason == .error && r.detail.contains("bad ICMP probe configuration"))
        }
        #expect(
            ICMPProber.Configuration(host: "h", count: 1, spacing: .zero, payloadSize: 0, interface: "wlan0").problem
                == nil)
    }

    @Test func smallAndLargePayloads() async {
        let engine = ICMPEngine()
        defer { engine.close() }
        for size in [0, 7, 8, 1400, 9000] {
            let p = ICMPProber(.init(host: "127.0.0.1", count: 1, payloadSize: size, mode: .raw), engine: engine)
            let r = await p.probe(deadline: .now + .seconds(5))
            #expect(r.status == .success, "payload \(size): \(r.detail)")
        }
    }

    // MARK: pure parts

    @Test func summaryPrefersTheMostTellingReason() throws {
        let a = try #require(SocketAddress(ip: "192.0.2.1"))
        func reason(_ o: [ICMPEchoOutcome]) -> FailureReason? {
            ICMPProber.summarize(o, address: a, duration: .zero).reason
        }
        #expect(reason([.timedOut, .timedOut]) == .timeout)
        #expect(reason([.timedOut, .icmpError("x")]) == .unreachable)
        #expect(reason([.notSent(.unreachable, "x"), .notSent(.permission, "y")]) == .permission)
        #expect(reason([.timedOut, .abandoned("cancelled")]) == .error)
        let partial = ICMPProber.summarize(
            [.timedOut, .reply(rtt: .milliseconds(2), ttl: 50), .reply(rtt: .milliseconds(4), ttl: 51)],
            address: a, duration: .seconds(1))
        #expect(partial.status == .success && partial.reason == nil)
        #expect(partial.icmp == ICMPDetail(sent: 3, received: 2, rtts: [.milliseconds(2), .milliseconds(4)], ttl: 51))
        #expect(partial.phases[.rtt] == .milliseconds(3))
        #expect(partial.detail == "2/3 replies from 192.0.2.1, rtt min/avg/max 2.000/3.000/4.000 ms, ttl 51 (13 hops)")
        let failed = ICMPProber.summarize(
            [.notSent(.permission, "sending to 192.0.2.1: EPERM")], address: a, duration: .zero)
        #expect(failed.detail == "0/1 replies from 192.0.2.1: sending to 192.0.2.1: EPERM")
        #expect(failed.icmp?.sent == 0)
    }

    @Test func millisecondFormatting() {
        #expect(ICMPProber.milliseconds(.microseconds(42)) == "0.042")
        #expect(ICMPProber.milliseconds(.milliseconds(1234)) == "1234.000")
        #expect(ICMPProber.milliseconds(.nanoseconds(-5)) == "0.000")
    }

    @Test func interfaceNames() {
        for good in ["lo", "eth0", "wlp2s0", "wwan0.1", "a-b_c@d", "123456789012345"] {
            #expect(InterfaceName.problem(good) == nil)
        }
        for bad in ["", ".", "..", "a/b", "a:b", "a b", "a\tb", "a\u{7F}", "1234567890123456"] {
            #expect(InterfaceName.problem(bad) != nil)
        }
    }

    @Test func socketErrorsExplainTheFix() {
        let dgram = ICMPSocketError.opening(.datagram, family: .ipv4, mode: .datagram, errno: 13)
        #expect(dgram.kind == .noPermission && dgram.reason == .permission)
        #expect(dgram.description.contains("sysctl -w net.ipv4.ping_group_range=\"0 2147483647\""))
        let raw = ICMPSocketError.opening(.raw, family: .ipv6, mode: .raw, errno: 1)
        #expect(
            raw.description.contains("setcap cap_net_raw+ep")
                && raw.description.contains("AmbientCapabilities=CAP_NET_RAW"))
        #expect(ICMPSocketError.opening(.raw, family: .ipv6, mode: .raw, errno: 97).kind == .unsupported)
        #expect(
            ICMPEchoOutcome.sendFailure(101, destination: SocketAddress(ip: "192.0.2.1")!)
                == .notSent(.unreachable, "sending to 192.0.2.1: \(Errno(101))"))
    }
}
