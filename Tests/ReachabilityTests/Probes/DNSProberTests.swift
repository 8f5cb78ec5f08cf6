import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// Runs one probe round with a budget; returns the result and the wall time it took.
func timedProbe(_ prober: some Prober, budget: Duration) async -> (result: ProbeResult, elapsed: Duration) {
    let clock = ContinuousClock()
    let start = clock.now
    let result = await prober.probe(deadline: start + budget)
    return (result, clock.now - start)
}

/// How far past its deadline a round may end on a loaded 2-core machine.
let dnsDeadlineSlack: Duration = .seconds(2)  // a hang bound for loaded CI machines, not a performance claim

@Suite struct DNSProberTests {
    private func probe(
        _ behaviour: DNSTestServer.Behaviour, name: String = "www.example.com", type: DNSQueryType = .a,
        host: String = "127.0.0.1", allowPrivate: Bool = false, budget: Duration = .seconds(3)
    ) async throws -> (result: ProbeResult, elapsed: Duration, server: DNSTestServer) {
        let server = try DNSTestServer(host: host, behaviour: behaviour)
        let config = try DNSProbeConfig(
            name: name, queryType: type, server: server.address.description, allowPrivateAnswers: allowPrivate,
            retransmitInterval: .milliseconds(100))
        let (result, elapsed) = await timedProbe(DNSProber(config: config), budget: budget)
        #expect(elapsed <= budget + dnsDeadlineSlack, "ended \(elapsed) after a \(budget) budget")
        server.stop()
        return (result, elapsed, server)
    }

    @Test func answersOverIPv4() async throws {
        let (r, _, server) = try await probe(.answer(["192.0.2.1", "192.0.2.2"]))
        #expect(r.status == .success, "\(r.detail)")
        #expect(r.reason == nil)
        #expect(
            r.dns?.judged == DNSDetail(rcode: 0, answers: 2, addresses: ["192.0.2.1", "192.0.2.2"], transport: "udp"))
        #expect(r.address == "127.0.0.1" && r.family == .ipv4)
        #expect(r.phases[.resolve] != nil)
        let query = try #require(server.lastQueryBytes)
        #expect(query[2] == 0x01 && query[3] == 0x00, "RD set, a standard query")
        #expect(Array(query.suffix(4)) == [0, 1, 0, 1], "QTYPE A, QCLASS IN")
    }

    @Test func answersAAAAOverIPv6() async throws {
        let (r, _, server) = try await probe(.answer(["2001:db8::53"]), type: .aaaa, host: "::1")
        #expect(r.status == .success, "\(r.detail)")
        #expect(r.dns?.addresses == ["2001:db8::53"])
        #expect(r.family == .ipv6)
        #expect(Array(try #require(server.lastQueryBytes).suffix(4)) == [0, 28, 0, 1])
    }

    @Test func recordsOfAnotherTypeAreNoAnswer() async throws {
        let (r, _, _) = try await probe(.answer(["2001:db8::53"]), type: .a)
        #expect(r.reason == .noAnswer, "\(r.detail)")
        #expect(r.dns?.answers == 1 && r.dns?.addresses == [])
    }

    @Test(arguments: [(3, FailureReason.nxdomain), (2, .servfail), (5, .refused), (1, .dns), (4, .dns)])
    func errorCodes(rcode: Int, reason: FailureReason) async throws {
        let (r, elapsed, _) = try await probe(.rcode(rcode))
        #expect(r.status == .failure)
        #expect(r.reason == reason, "\(r.detail)")
        #expect(r.dns?.rcode == rcode)
        #expect(elapsed < .seconds(2), "an error reply ends the round at once")
    }

    @Test func emptyAnswerIsNoAnswer() async throws {
        let (r, _, _) = try await probe(.noAnswer)
        #expect(r.reason == .noAnswer, "\(r.detail)")
        #expect(r.dns?.judged == DNSDetail(rcode: 0, answers: 0, addresses: [], transport: "udp"))
    }

    @Test func silenceTimesOutAfterRetransmitting() async throws {
        let server = try DNSTestServer(host: "127.0.0.1", behaviour: .silence)
        defer { server.stop() }
        let config = try DNSProbeConfig(
            name: "www.example.com", queryType: .a, server: server.address.description,
            retransmitInterval: .milliseconds(100))
        let budget = Duration.seconds(1)
        let (r, elapsed) = await timedProbe(DNSProber(config: config), budget: budget)
        #expect(r.reason == .timeout, "\(r.detail)")
        // UDP waits two thirds of the budget; the TCP fallback is refused at once (no listener).
        #expect(elapsed >= budget * 2 / 3 && elapsed <= budget + dnsDeadlineSlack)
        #expect(r.detail.contains("over TCP too"), "\(r.detail)")
        // The responder's thread may count the last query a moment after the probe gives up.
        let clock = ContinuousClock()
        let settle = clock.now + .seconds(2)
        while server.queries < DNSProbeConfig.maxTransmissions && clock.now < settle {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(
            (2...DNSProbeConfig.maxTransmissions).contains(server.queries), "\(server.queries) queries; \(r.detail)")
    }

    @Test func privateAnswerForPublicNameIsPortal() async throws {
        let (r, _, _) = try await probe(.answer(["192.0.2.1", "10.0.0.1"]))
        #expect(r.status == .portal)
        #expect(r.reason == .privateAddress, "\(r.detail)")
        #expect(r.detail.contains("10.0.0.1"))
        let (allowed, _, _) = try await probe(.answer(["10.0.0.1"]), allowPrivate: true)
        #expect(allowed.status == .success, "\(allowed.detail)")
        let (local, _, _) = try await probe(.answer(["192.168.1.10"]), name: "nas.home.arpa")
        #expect(local.status == .success, "\(local.detail)")
        let (v6, _, _) = try await probe(.answer(["fd00::1"]), type: .aaaa, host: "::1")
        #expect(v6.reason == .privateAddress, "\(v6.detail)")
    }

    @Test func wrongIDIsIgnoredAndTheRightReplyCounts() async throws {
        let (r, _, _) = try await probe(.wrongIDFirst(decoy: ["198.51.100.7"], addresses: ["192.0.2.9"]))
        #expect(r.status == .success, "\(r.detail)")
        #expect(r.dns?.addresses == ["192.0.2.9"])
    }

    @Test func garbageWithOurIDIsProtocolAtOnce() async throws {
        let (r, elapsed, _) = try await probe(.garbageWithID)
        #expect(r.reason == .protocolError, "\(r.detail)")
        #expect(elapsed < .seconds(2))
    }

    @Test func unmatchedGarbageIsProtocolAtTheDeadline() async throws {
        let budget = Duration.milliseconds(400)
        let (r, elapsed, _) = try await probe(.raw([0xFF, 0x00, 0x13]), budget: budget)
        #expect(r.reason == .protocolError, "\(r.detail)")
        #expect(r.detail.contains("malformed"))
        #expect(elapsed >= budget * 2 / 3, "UDP listens for two thirds of the budget before the TCP fallback")
    }

    @Test func compressedCNAMEChainIsFollowed() async throws {
        let (r, _, _) = try await probe(
            .compressedCNAME(alias: "edge.example.com", addresses: ["192.0.2.77", "192.0.2.78"]))
        #expect(r.status == .success, "\(r.detail)")
        #expect(
            r.dns?.judged == DNSDetail(rcode: 0, answers: 3, addresses: ["192.0.2.77", "192.0.2.78"], transport: "udp"))
    }

    @Test func truncatedReplyIsNoted() async throws {
        let (r, _, _) = try await probe(.truncated)
        #expect(r.reason == .noAnswer)
        #expect(r.dns?.truncated == true)
        #expect(r.detail.contains("TC"))
    }

    @Test func closedPortIsRefused() async throws {
        // Bind a UDP port, then close it (stop() returns once closed): the kernel answers
        // queries to it with ICMP port unreachable.
        let port = try DNSTestServer(behaviour: .silence)
        let address = port.address
        port.stop()
        let config = try DNSProbeConfig(name: "www.example.com", server: address.description)
        let budget = Duration.seconds(2)
        let (r, elapsed) = await timedProbe(DNSProber(config: config), budget: budget)
        #expect(r.reason == .refused, "\(r.detail)")
        #expect(elapsed < budget)
    }

    @Test func boundToLoopbackInterface() async throws {
        let server = try DNSTestServer(behaviour: .answer(["192.0.2.1"]))
        defer { server.stop() }
        let good = try DNSProbeConfig(name: "www.example.com", server: server.address.description, interface: "lo")
        let (r, _) = await timedProbe(DNSProber(config: good), budget: .seconds(3))
        #expect(r.status == .success, "\(r.detail)")
        let bad = try DNSProbeConfig(
            name: "www.example.com", server: server.address.description, interface: "rxnosuch0")
        let (e, elapsed) = await timedProbe(DNSProber(config: bad), budget: .seconds(3))
        #expect(e.reason == .error, "\(e.detail)")
        #expect(e.detail.contains("SO_BINDTODEVICE"))
        #expect(elapsed < .seconds(1))
    }

    @Test func systemResolverLocalhost() async throws {
        // /etc/hosts answers localhost without any DNS traffic; a local name may be loopback.
        let config = try DNSProbeConfig(name: "localhost", queryType: .a)
        let (r, elapsed) = await timedProbe(DNSProber(config: config), budget: .seconds(3))
        #expect(r.status == .success, "\(r.detail)")
        #expect(r.dns?.rcode == nil)
        #expect(r.dns?.addresses.contains("127.0.0.1") == true)
        #expect(elapsed < .seconds(3) + dnsDeadlineSlack)
    }

    @Test func questionMismatchIsIgnored() throws {
        var other = DNSExchange(id: 0x1234, name: "www.example.org", type: .a)
        guard case .ignored = other.consider(cnameResponse) else {
            Issue.record("accepted another name")
            return
        }
        var aaaa = DNSExchange(id: 0x1234, name: "www.example.com", type: .aaaa)
        guard case .ignored = aaaa.consider(cnameResponse) else {
            Issue.record("accepted another type")
            return
        }
        var right = DNSExchange(id: 0x1234, name: "WWW.EXAMPLE.COM", type: .a)
        guard case .answer = right.consider(cnameResponse) else {
            Issue.record("rejected the right reply")
            return
        }
        #expect(other.ignored == 1 && aaaa.ignored == 1 && right.ignored == 0)
    }
}

extension DNSDetail {
    /// The detail without what only `/probe` reads (section counts, records as zone text).
    var judged: DNSDetail {
        var d = self
        d.authorityCount = nil
        d.additionalCount = nil
        d.answerTexts = []
        return d
    }
}
