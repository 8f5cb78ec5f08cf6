import Glibc
import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// DNS over TCP and TLS against loopback servers, the UDP→TCP retry on TC, and the TCP
/// fallback that names blocked UDP (`dns_udp_blocked`).
@Suite struct DNSTransportTests {
    let certs: TestCertificates
    init() throws { certs = try TestCertificates.shared() }

    private func run(_ config: DNSProbeConfig, budget: Duration = .seconds(2)) async -> ProbeResult {
        let (result, elapsed) = await timedProbe(DNSProber(config: config), budget: budget)
        #expect(elapsed <= budget + dnsDeadlineSlack, "ended \(elapsed) after a \(budget) budget")
        return result
    }

    @Test func answersOverTCP() async throws {
        let server = try LoopbackHTTPServer(behavior: .dns(.answer(["192.0.2.7"])))
        defer { server.stop() }
        let r = await run(try DNSProbeConfig(name: "www.example.com", server: "tcp://127.0.0.1:\(server.port)"))
        #expect(r.status == .success, "\(r.detail)")
        #expect(r.dns?.addresses == ["192.0.2.7"] && r.dns?.transport == "tcp")
        #expect(r.phases[.connect] != nil && r.phases[.query] != nil && r.phases[.resolve] != nil)
        #expect(r.phases[.tls] == nil)
        #expect(server.requests.count == 1)
    }

    @Test func answersOverVerifiedTLS() async throws {
        let server = try LoopbackHTTPServer(tls: try certs.valid.identity(), behavior: .dns(.answer(["192.0.2.8"])))
        defer { server.stop() }
        let config = try DNSProbeConfig(
            name: "www.example.com", server: "127.0.0.1:\(server.port)", transport: .tls, caFile: certs.caFile)
        #expect(config.evidence == .internet, "a verified DNS-over-TLS answer can prove")
        let r = await run(config)
        #expect(r.status == .success, "\(r.detail)")
        #expect(r.dns?.transport == "tls")
        #expect(r.phases[.connect] != nil && r.phases[.tls] != nil && r.phases[.query] != nil)
        let named = try DNSProbeConfig(
            name: "www.example.com", server: "tls://127.0.0.1:\(server.port)", tlsServerName: "localhost",
            caFile: certs.caFile)
        #expect(await run(named).status == .success)
    }

    @Test func tlsRefusesAnUntrustedOrMisnamedServer() async throws {
        let untrusted = try LoopbackHTTPServer(tls: try certs.valid.identity(), behavior: .dns(.answer(["192.0.2.8"])))
        defer { untrusted.stop() }
        let r = await run(try DNSProbeConfig(name: "www.example.com", server: "tls://127.0.0.1:\(untrusted.port)"))
        #expect(r.reason == .tls, "\(r.detail)")
        let misnamed = try LoopbackHTTPServer(
            tls: try certs.wrongHost.identity(), behavior: .dns(.answer(["192.0.2.8"])))
        defer { misnamed.stop() }
        let m = await run(
            try DNSProbeConfig(
                name: "www.example.com", server: "tls://127.0.0.1:\(misnamed.port)", caFile: certs.caFile))
        #expect(m.reason == .tlsNameMismatch, "\(m.detail)")
        let skip = try DNSProbeConfig(
            name: "www.example.com", server: "tls://127.0.0.1:\(untrusted.port)", insecureSkipVerify: true)
        #expect(skip.evidence == .local)
        #expect(await run(skip).status == .success)
    }

    /// A UDP responder and a TCP one on the same port number: the kernel picks the UDP port, and
    /// that number may already be taken for TCP, so a few tries are allowed.
    private func serversOnOnePort(udp: DNSTestServer.Behaviour, tcp: DNSTestServer.Behaviour) throws
        -> (DNSTestServer, LoopbackHTTPServer)
    {
        for _ in 0..<20 {
            let u = try DNSTestServer(behaviour: udp)
            do throws(Errno) {
                return (u, try LoopbackHTTPServer(port: u.address.port, behavior: .dns(tcp)))
            } catch {
                u.stop()
                guard error.code == EADDRINUSE else { throw error }
            }
        }
        throw TestSupportError("no port free for both UDP and TCP in 20 tries")
    }

    @Test func aTruncatedUDPAnswerIsAskedAgainOverTCP() async throws {
        let (udp, tcp) = try serversOnOnePort(udp: .truncated, tcp: .answer(["192.0.2.9"]))
        defer { udp.stop() }
        defer { tcp.stop() }
        let r = await run(try DNSProbeConfig(name: "www.example.com", server: udp.address.description))
        #expect(r.status == .success, "\(r.detail)")
        #expect(r.dns?.transport == "tcp" && r.dns?.addresses == ["192.0.2.9"])
        #expect(r.detail.contains("truncated over UDP, answered over TCP"), "\(r.detail)")
    }

    @Test func unansweredUDPWithATCPAnswerIsBlockedUDP() async throws {
        let (udp, tcp) = try serversOnOnePort(udp: .silence, tcp: .answer(["192.0.2.9"]))
        defer { udp.stop() }
        defer { tcp.stop() }
        let r = await run(
            try DNSProbeConfig(
                name: "www.example.com", server: udp.address.description, retransmitInterval: .milliseconds(100)),
            budget: .milliseconds(900))
        #expect(r.status == .failure && r.reason == .dnsUDPBlocked, "\(r.detail)")
        #expect(r.detail.contains("answered over TCP (NOERROR"), "\(r.detail)")
        #expect(udp.queries >= 2)
        // Without the fallback it is a plain timeout, and no TCP connection is made.
        let before = tcp.acceptedConnections
        let plain = await run(
            try DNSProbeConfig(
                name: "www.example.com", server: udp.address.description, retransmitInterval: .milliseconds(100),
                tcpFallback: false), budget: .milliseconds(500))
        #expect(plain.reason == .timeout, "\(plain.detail)")
        #expect(tcp.acceptedConnections == before)
    }

    @Test func aSilentTCPServerTimesOutAtTheDeadline() async throws {
        let server = try LoopbackHTTPServer(behavior: .dns(.silence))
        defer { server.stop() }
        let budget = Duration.milliseconds(400)
        let (r, elapsed) = await timedProbe(
            DNSProber(config: try DNSProbeConfig(name: "www.example.com", server: "tcp://127.0.0.1:\(server.port)")),
            budget: budget)
        #expect(r.reason == .timeout, "\(r.detail)")
        #expect(elapsed >= budget && elapsed <= budget + dnsDeadlineSlack)
    }

    @Test func aStreamReplyThatIsNotOursIsAProtocolError() async throws {
        let server = try LoopbackHTTPServer(behavior: .dns(.garbageWithID))
        defer { server.stop() }
        let r = await run(try DNSProbeConfig(name: "www.example.com", server: "tcp://127.0.0.1:\(server.port)"))
        #expect(r.reason == .protocolError, "\(r.detail)")
        // Announces 64 bytes, sends 5, closes.
        let closes = try LoopbackHTTPServer(
            behavior: LoopbackHTTPBehavior { c in
                _ = c.readExactly(2)
                c.write([0, 0x40] + Array("short".utf8))
            })
        defer { closes.stop() }
        let c = await run(try DNSProbeConfig(name: "www.example.com", server: "tcp://127.0.0.1:\(closes.port)"))
        #expect(c.reason == .protocolError && c.detail.contains("closed the connection"), "\(c.detail)")
    }
}

/// One answer record for `DNSTestServer.Behaviour.records`.
private func rr(_ type: UInt16, _ rdata: [UInt8]) -> (type: UInt16, rdata: [UInt8]) { (type, rdata) }

/// Record types beyond addresses, and `expect_answer`.
@Suite struct DNSRecordTypeTests {
    private func probe(_ behaviour: DNSTestServer.Behaviour, _ type: DNSQueryType, expect: DNSAnswerExpectation? = nil)
        async throws -> ProbeResult
    {
        let server = try DNSTestServer(behaviour: behaviour)
        defer { server.stop() }
        let config = try DNSProbeConfig(
            name: "example.com", queryType: type, server: server.address.description, expectAnswer: expect)
        let result = await DNSProber(config: config).probe(deadline: .now + .seconds(2))
        #expect(Array(try #require(server.lastQueryBytes).suffix(4)) == [0, UInt8(type.code), 0, 1])
        return result
    }

    @Test func mxTXTNSSOAAndCNAMEAnswersInPresentationForm() async throws {
        let mx = try await probe(.records([rr(15, [0, 10] as [UInt8] + DNSTestReplies.name("mx.example.com"))]), .mx)
        #expect(mx.status == .success && mx.dns?.records == ["10 mx.example.com."], "\(mx.detail)")
        #expect(mx.dns?.addresses == [])
        let txt = try await probe(.records([rr(16, DNSTestReplies.txt(["v=spf1", "-all"]))]), .txt)
        #expect(txt.dns?.records == ["\"v=spf1\" \"-all\""], "\(txt.detail)")
        let ns = try await probe(.records([rr(2, DNSTestReplies.name("a.iana-servers.net"))]), .ns)
        #expect(ns.dns?.records == ["a.iana-servers.net."])
        let soa = try await probe(
            .records([
                rr(
                    6,
                    DNSTestReplies.name("ns.example.com") + DNSTestReplies.name("hostmaster.example.com")
                        + ([0, 0, 0, 7] as [UInt8]) + [UInt8](repeating: 0, count: 16))
            ]), .soa)
        #expect(soa.dns?.records == ["ns.example.com. hostmaster.example.com. 7"], "\(soa.detail)")
        let cname = try await probe(.records([rr(5, DNSTestReplies.name("alias.example.net"))]), .cname)
        #expect(cname.dns?.records == ["alias.example.net."])
        // Records of another type than asked are no answer.
        let other = try await probe(.records([rr(16, DNSTestReplies.txt(["x"]))]), .mx)
        #expect(other.reason == .noAnswer, "\(other.detail)")
    }

    @Test func expectAnswerRegexNeedsOneMatchingRecord() async throws {
        let records: [(type: UInt16, rdata: [UInt8])] = [
            rr(16, DNSTestReplies.txt(["google-site-verification=x"])), rr(16, DNSTestReplies.txt(["v=spf1 -all"])),
        ]
        let ok = try await probe(.records(records), .txt, expect: .regex("^\"v=spf1"))
        #expect(ok.status == .success, "\(ok.detail)")
        let bad = try await probe(.records(records), .txt, expect: .regex("^\"v=DMARC1"))
        #expect(bad.status == .failure && bad.reason == .answerMismatch, "\(bad.detail)")
        #expect(bad.detail.contains("no answer matches /^\"v=DMARC1/"))
    }

    @Test func expectAnswerAddressesRefuseAForeignAddress() async throws {
        let ok = try await probe(
            .answer(["192.0.2.1", "192.0.2.2"]), .a, expect: .addresses(["192.0.2.1", "192.0.2.2"]))
        #expect(ok.status == .success, "\(ok.detail)")
        let bad = try await probe(.answer(["192.0.2.1", "198.51.100.9"]), .a, expect: .addresses(["192.0.2.1"]))
        #expect(
            bad.reason == .answerMismatch && bad.detail.contains("198.51.100.9 not in the expected"), "\(bad.detail)")
        // IPv6 addresses compare in canonical form.
        let v6 = try await probe(.answer(["2001:db8::1"]), .aaaa, expect: .addresses(["2001:DB8:0::1"]))
        #expect(v6.status == .success, "\(v6.detail)")
        // The portal rule still comes first: a private answer for a public name is a portal.
        let portal = try await probe(.answer(["10.0.0.1"]), .a, expect: .addresses(["10.0.0.1"]))
        #expect(portal.status == .portal && portal.reason == .privateAddress)
    }

    @Test func refusedConfigurations() {
        #expect(
            throws: ProbeConfigError(
                .dnsRecordType, "dns record type MX: needs a server; the system resolver looks up addresses only")
        ) {
            try DNSProbeConfig(name: "example.com", queryType: .mx)
        }
        #expect(
            throws: ProbeConfigError(
                .dnsTransport, "dns transport tls: needs a server; the system resolver chooses its own")
        ) {
            try DNSProbeConfig(name: "example.com", transport: .tls)
        }
        #expect(
            throws: ProbeConfigError(
                .dnsServer, "dns server \"quic://192.0.2.1\": unknown scheme \"quic\"; use udp://, tcp:// or tls://")
        ) {
            try DNSProbeConfig(name: "example.com", server: "quic://192.0.2.1")
        }
        #expect(
            throws: ProbeConfigError(
                .dnsExpectAnswer, "dns expect_answer addresses: \"2001:db8::1\" is not an IPv4 address")
        ) {
            try DNSProbeConfig(name: "example.com", server: "192.0.2.1", expectAnswer: .addresses(["2001:db8::1"]))
        }
    }

    @Test func portsDefaultByTransport() throws {
        #expect(try DNSProbeConfig(name: "a.example", server: "tls://192.0.2.1").server?.port == 853)
        #expect(try DNSProbeConfig(name: "a.example", server: "tcp://192.0.2.1").server?.port == 53)
        #expect(try DNSProbeConfig(name: "a.example", server: "192.0.2.1", transport: .tls).server?.port == 853)
        #expect(try DNSProbeConfig(name: "a.example", server: "tls://[2001:db8::1]:8853").server?.port == 8853)
    }
}
