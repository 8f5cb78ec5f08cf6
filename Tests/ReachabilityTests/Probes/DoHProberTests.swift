import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// A DoH server's answers that are not a DNS answer, from loopback servers over plain HTTP
/// (the checks come before the DNS ones, whatever the scheme): each ends the round with its
/// reason, never a success. Real DoH answers are DoHNamespaceTests'.
@Suite struct DoHProberTests {
    static func probe(
        _ behavior: LoopbackHTTPBehavior, url: (UInt16) -> String = { "http://127.0.0.1:\($0)/dns-query" }
    )
        async throws -> ProbeResult
    {
        let server = try LoopbackHTTPServer(behavior: behavior)
        let config = try DoHProbeConfig(name: "www.example.com", url: url(server.port))
        let result = await DoHProber(config: config).probe(deadline: .now + .seconds(2))
        withExtendedLifetime(server) {}
        return result
    }

    static let dnsType = [("Content-Type", "application/dns-message")]

    @Test func anAnswerLongerThanADNSMessageFails() async throws {
        let body = String(repeating: "\0", count: 70_000)
        let r = try await Self.probe(.status(200, "OK", headers: Self.dnsType, body: body))
        #expect(r.status == .failure && r.reason == .protocolError, "\(r.detail)")
        #expect(r.detail.contains("longer than a DNS message"), "\(r.detail)")
    }

    @Test func aPortalPageIsNotAnAnswer() async throws {
        let r = try await Self.probe(
            .status(200, "OK", headers: [("Content-Type", "text/html")], body: "<html>login</html>"))
        #expect(r.status == .failure && r.reason == .protocolError && r.detail.contains("text/html"), "\(r.detail)")
    }

    @Test func anAnswerToAnotherQueryIsRefused() async throws {
        // A well-formed answer with id 0x1234 for another name: not ours.
        let other = try DNSMessage.encodeQuery(name: "other.example.com", type: .a, id: 0x1234)
        let text = String(decoding: other, as: UTF8.self)
        let r = try await Self.probe(.status(200, "OK", headers: Self.dnsType, body: text))
        #expect(r.status == .failure && r.reason == .protocolError, "\(r.detail)")
    }

    @Test(arguments: [
        (302, FailureReason.redirect, ProbeStatus.failure), (404, .httpStatus, .failure),
        (511, .networkAuthenticationRequired, .portal),
    ])
    func statusesOtherThan200(code: Int, reason: FailureReason, status: ProbeStatus) async throws {
        let r = try await Self.probe(.status(code, "X", headers: [("Location", "http://127.0.0.1:1/")]))
        #expect(r.status == status && r.reason == reason, "\(code): \(r.detail)")
    }

    @Test func theTemplateFormIsAccepted() throws {
        let c = try DoHProbeConfig(name: "example.com", url: "https://dns.example/dns-query{?dns}")
        #expect(c.url.target == "/dns-query" && c.urlText == "https://dns.example/dns-query")
        #expect(throws: ProbeConfigError.self) {
            try DoHProbeConfig(name: "example.com", url: "https://dns.example/{x}")
        }
        let long = "https://dns.example/q?" + String(repeating: "a", count: 800)
        #expect(throws: ProbeConfigError.self) { try DoHProbeConfig(name: "example.com", url: long) }
    }
}
