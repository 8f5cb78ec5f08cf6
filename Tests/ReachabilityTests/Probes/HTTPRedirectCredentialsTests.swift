import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// Found by a hostile review (#41): a web probe sent its `Authorization` and `Cookie` headers
/// to whatever host a redirect named. Credentials stay with the first URL's origin (scheme,
/// host, port), as in Go's net/http and the Fetch standard.
@Suite struct HTTPRedirectCredentialsTests {
    static let credentials: [HTTPProbeConfig.Header] = [
        .init("Authorization", "Bearer s3cret-token"), .init("cOOKIE", "session=s3cret-cookie"),
        .init("X-Probe", "kept"),
    ]

    func probe(_ url: String) async throws -> ProbeResult {
        let config = try HTTPProbeConfig(url: url, mode: .web, headers: Self.credentials)
        return await HTTPProber(config).probe(deadline: .now + .seconds(5))
    }

    /// 127.0.0.1:A redirects to 127.0.0.1:B: another port is another origin.
    @Test func aRedirectToAnotherOriginCarriesNoCredentials() async throws {
        let target = try LoopbackHTTPServer(behavior: .status(204))
        defer { target.stop() }
        let first = try LoopbackHTTPServer(behavior: .status(302, headers: [("Location", target.url("/landing"))]))
        defer { first.stop() }
        let r = try await probe(first.url("/start"))
        #expect(r.status == .success, "\(r.detail)")
        #expect(r.http?.redirects == 1)
        let sent = try #require(first.requests.first)
        #expect(sent.contains("\r\nAuthorization: Bearer s3cret-token\r\n") && sent.contains("\r\ncOOKIE: session="))
        let followed = try #require(target.requests.first)
        #expect(!followed.lowercased().contains("authorization"), "\(followed)")
        #expect(!followed.contains("s3cret"), "\(followed)")
        #expect(followed.contains("\r\nX-Probe: kept"))
    }

    /// A chain that leaves the origin and comes back: still none (Go since CVE-2024-45336).
    @Test func aChainThatComesBackStaysWithoutCredentials() async throws {
        let other = try LoopbackHTTPServer(behavior: .status(204))
        defer { other.stop() }
        let bounce = try LoopbackHTTPServer(behavior: .status(302, headers: [("Location", other.url("/end"))]))
        defer { bounce.stop() }
        let home = try LoopbackHTTPServer(
            behavior: .routes([
                "/start": .init(302, headers: [("Location", bounce.url("/away"))]),
                "/back": .init(302, headers: [("Location", other.url("/end"))]),
            ]))
        defer { home.stop() }
        let r = try await probe(home.url("/start"))
        #expect(r.status == .success, "\(r.detail)")
        #expect(!(bounce.requests + other.requests).joined().contains("s3cret"))
    }

    @Test func aSameOriginRedirectKeepsThem() async throws {
        let server = try LoopbackHTTPServer(
            behavior: .routes(["/start": .init(301, headers: [("Location", "/next")]), "/next": .init(204)]))
        defer { server.stop() }
        let r = try await probe(server.url("/start"))
        #expect(r.status == .success, "\(r.detail)")
        #expect(server.requests.count == 2)
        for request in server.requests {
            #expect(request.contains("\r\nAuthorization: Bearer s3cret-token\r\n"), "\(request)")
            #expect(request.contains("\r\ncOOKIE: session=s3cret-cookie\r\n"), "\(request)")
        }
    }

    @Test func originsDifferInSchemeHostOrPort() throws {
        let base = try ProbeURL("https://example.net/a")
        #expect(try base.isSameOrigin(as: ProbeURL("https://EXAMPLE.net:443/b")))
        #expect(try !base.isSameOrigin(as: ProbeURL("http://example.net/a")))  // downgrade
        #expect(try !base.isSameOrigin(as: ProbeURL("https://example.net:8443/a")))
        #expect(try !base.isSameOrigin(as: ProbeURL("https://www.example.net/a")))
        // A Location with user information is not followed: no credentials from a redirect either.
        #expect(throws: ProbeURL.ParseError.self) { try base.resolving("https://alice:pw@example.net/") }
    }
}
