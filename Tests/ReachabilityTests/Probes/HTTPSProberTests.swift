import Foundation
import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// HTTPS against loopback servers holding certificates made by `openssl` at test time.
@Suite struct HTTPSProberTests {
    let certs: TestCertificates

    init() throws { certs = try TestCertificates.shared() }

    @Test func validCertificateWithCAFile() async throws {
        let (r, _, _) = try await probeLoopback(.status(204), tls: try certs.valid.identity()) {
            try HTTPProbeConfig(url: $0, caFile: self.certs.caFile)
        }
        #expect(r.status == .success, "\(r.detail)")
        #expect(r.phases[.tls] != nil)
        #expect(r.http?.tlsVersion == "TLSv1.3")
        #expect(r.http?.tlsCipher?.isEmpty == false)
        let notAfter = try #require(r.http?.certificateNotAfter)
        let now = Date().timeIntervalSince1970
        #expect(notAfter > now + 86_400 && notAfter < now + 3 * 86_400)
    }

    @Test func hostNameWithSNIOverIPv4AndIPv6Literal() async throws {
        let identity = try certs.valid.identity()
        let server = try LoopbackHTTPServer(tls: identity, behavior: .status(204))
        defer { server.stop() }
        let byName = HTTPProber(
            try HTTPProbeConfig(url: "https://localhost:\(server.port)/", caFile: certs.caFile, family: .ipv4))
        let r = await byName.probe(deadline: .now + .seconds(5))
        #expect(r.status == .success, "\(r.detail)")
        let (v6, _, _) = try await probeLoopback(.status(204), host: "::1", tls: identity) {
            try HTTPProbeConfig(url: $0, caFile: self.certs.caFile)
        }
        #expect(v6.status == .success, "\(v6.detail)")
        #expect(v6.family == .ipv6)
    }

    @Test func wrongHostName() async throws {
        let identity = try certs.wrongHost.identity()
        let server = try LoopbackHTTPServer(tls: identity, behavior: .status(204))
        defer { server.stop() }
        func probe(_ url: String, serverName: String? = nil) async throws -> ProbeResult {
            let config = try HTTPProbeConfig(url: url, serverName: serverName, caFile: certs.caFile, family: .ipv4)
            return await HTTPProber(config).probe(deadline: .now + .seconds(5))
        }
        // A certificate the trust store accepts, but for another name: someone else answered in
        // place of the target, the HTTPS-intercepting portal's signature.
        let byName = try await probe("https://localhost:\(server.port)/")
        #expect(byName.status == .portal)
        #expect(byName.reason == .tlsNameMismatch)
        #expect(byName.detail.contains("hostname mismatch"), "\(byName.detail)")
        let byIP = try await probe(server.url())
        #expect(byIP.status == .portal)
        #expect(byIP.reason == .tlsNameMismatch)
        #expect(byIP.detail.contains("IP address mismatch"), "\(byIP.detail)")
        // The same certificate passes when the server name is overridden to the one it carries.
        let overridden = try await probe(server.url(), serverName: "wrong.example")
        #expect(overridden.status == .success, "\(overridden.detail)")
    }

    @Test func expiredCertificate() async throws {
        let (r, _, _) = try await probeLoopback(.status(204), tls: try certs.expired.identity()) {
            try HTTPProbeConfig(url: $0, caFile: self.certs.caFile)
        }
        #expect(r.reason == .tls)
        #expect(r.detail.contains("expired"), "\(r.detail)")
        // The refused certificate's expiry is still reported: a day ago.
        let notAfter = try #require(r.http?.certificateNotAfter)
        let now = Date().timeIntervalSince1970
        #expect(notAfter < now - 3_600 && notAfter > now - 2 * 86_400)
    }

    @Test func selfSignedAgainstSystemStoreAndInsecure() async throws {
        let identity = try certs.selfSigned.identity()
        let (r, _, _) = try await probeLoopback(.status(204), tls: identity)
        #expect(r.reason == .tls)
        #expect(r.detail.contains("self-signed") || r.detail.contains("self signed"), "\(r.detail)")
        let (insecure, _, _) = try await probeLoopback(.status(204), tls: identity) {
            try HTTPProbeConfig(url: $0, insecureSkipVerify: true)
        }
        #expect(insecure.status == .success, "\(insecure.detail)")
        #expect(insecure.http?.certificateNotAfter != nil)
    }

    @Test func plainServerBehindHTTPSURL() async throws {
        // A plain HTTP server answers the ClientHello with a 400 in clear text.
        let server = try LoopbackHTTPServer(
            behavior: .greeting("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n"))
        defer { server.stop() }
        let prober = HTTPProber(try HTTPProbeConfig(url: "https://127.0.0.1:\(server.port)/", caFile: certs.caFile))
        let r = await prober.probe(deadline: .now + .seconds(5))
        #expect(r.status == .failure)
        #expect(r.reason == .tls, "\(r.detail)")
    }

    @Test func silentHandshakeTimesOut() async throws {
        let timeout = Duration.milliseconds(400)
        let server = try LoopbackHTTPServer(behavior: .silent)  // plain TCP: never answers the ClientHello
        defer { server.stop() }
        let prober = HTTPProber(try HTTPProbeConfig(url: "https://127.0.0.1:\(server.port)/", caFile: certs.caFile))
        let clock = ContinuousClock()
        let start = clock.now
        let r = await prober.probe(deadline: start + timeout)
        let elapsed = start.duration(to: clock.now)
        #expect(r.reason == .timeout, "\(r.detail)")
        #expect(r.phases[.tls] != nil, "the deadline passed in the TLS phase")
        #expect(elapsed < timeout + deadlineSlack)
    }

    @Test func captiveSemanticsOverTLS() async throws {
        let (r, _, _) = try await probeLoopback(
            .status(302, "Found", headers: [("Location", "https://portal.example/login")]),
            tls: try certs.valid.identity()
        ) {
            try HTTPProbeConfig(url: $0, caFile: self.certs.caFile)
        }
        #expect(r.status == .portal)
        #expect(r.reason == .redirect)
        #expect(r.http?.location == "https://portal.example/login")
    }
}
