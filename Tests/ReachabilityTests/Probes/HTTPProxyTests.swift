import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// Proxy URLs and the proxy environment: what is accepted, and which requests go through.
@Suite struct HTTPProxyParsingTests {
    @Test func parsesProxyURLs() throws {
        let p = try HTTPProxy(parsing: "http://u%40x:p%3Ass@proxy.example:3128/")
        #expect(p.endpoint == HostPort(host: "proxy.example", port: 3128))
        #expect(p.username == "u@x" && p.password == "p:ss")
        #expect(p.authorization == "Basic " + Base64.encode(Array("u@x:p:ss".utf8)))
        #expect(p.description == "http://proxy.example:3128", "no credentials in details")
        #expect(try HTTPProxy(parsing: "10.0.0.1:8080").endpoint == HostPort(host: "10.0.0.1", port: 8080))
        #expect(try HTTPProxy(parsing: "http://[fd00::1]").endpoint == HostPort(host: "fd00::1", port: 80))
        #expect(try HTTPProxy(parsing: "http://proxy.example").authorization == nil)
        #expect(Base64.encode(Array("user:pass".utf8)) == "dXNlcjpwYXNz")
        #expect(Base64.encode(Array("ab".utf8)) == "YWI=" && Base64.encode([]) == "")
    }

    @Test func refusesWhatIsNotAnHTTPProxyWithoutLeakingThePassword() {
        #expect(
            throws: ProbeConfigError(
                .httpProxyURL,
                "proxy \"https://<credentials>@p.example\": the https:// scheme is not supported; use an http:// proxy (HTTPS still runs end to end through CONNECT)"
            )
        ) { try HTTPProxy(parsing: "https://u:secret@p.example") }
        #expect(
            throws: ProbeConfigError(
                .httpProxyURL, "proxy \"http://p.example/path\": a proxy URL has no path, query or fragment")
        ) {
            try HTTPProxy(parsing: "http://p.example/path")
        }
        #expect(
            throws: ProbeConfigError(
                .httpProxyURL, "proxy \"http://<credentials>@p.example\": bad percent-encoding in the password")
        ) {
            try HTTPProxy(parsing: "http://u:%zz@p.example")
        }
    }

    @Test func theEnvironmentPicksAProxyPerScheme() throws {
        let env = try ProxyEnvironment([
            "HTTP_PROXY": "http://plain.example:3128", "https_proxy": "http://secure.example:3129",
            "HTTPS_PROXY": "",
            "NO_PROXY": "internal.example, .corp.example, 192.0.2.0/24, 198.51.100.7, web.example:8080, [2001:db8::1]",
        ])
        func via(_ url: String) -> String? { (try? ProbeURL(url)).flatMap { env.proxy(for: $0) }?.description }
        #expect(via("http://a.example/") == "http://plain.example:3128")
        #expect(via("https://a.example/") == "http://secure.example:3129", "lower case when upper is empty")
        #expect(via("http://internal.example/") == nil && via("http://x.internal.example/") == nil)
        #expect(via("http://corp.example/") != nil, ".corp.example covers subdomains only")
        #expect(via("http://a.corp.example/") == nil)
        #expect(via("http://192.0.2.200/") == nil && via("http://198.51.100.7/") == nil)
        #expect(via("http://198.51.100.8/") != nil)
        #expect(via("http://web.example:8080/") == nil && via("http://web.example/") != nil)
        #expect(via("http://[2001:db8::1]/") == nil)
        #expect(via("http://localhost:9/") == nil && via("http://127.0.0.1/") == nil && via("http://[::1]/") == nil)
        let all = try ProxyEnvironment(["HTTP_PROXY": "plain.example:3128", "NO_PROXY": "*"])
        #expect(all.proxy(for: try ProbeURL("http://a.example/")) == nil)
        #expect(throws: ProbeConfigError.self) { try ProxyEnvironment(["HTTP_PROXY": "socks5://p:1080"]) }
    }

    /// Plain HTTP through a proxy may be answered from its cache: local evidence; verified
    /// HTTPS runs end to end through CONNECT and still proves.
    @Test func evidenceThroughAProxy() throws {
        let proxy = HTTPProxySetting.fixed(try HTTPProxy(parsing: "http://192.0.2.1:3128"))
        #expect(try HTTPProbeConfig(url: "http://192.0.2.9/generate_204", proxy: proxy).evidence == .local)
        #expect(try HTTPProbeConfig(url: "https://192.0.2.9/generate_204", proxy: proxy).evidence == .internet)
        #expect(try HTTPProbeConfig(url: "http://192.0.2.9/generate_204").evidence == .internet)
    }
}

/// The prober through a loopback forward proxy (`LoopbackHTTPBehavior.forwardProxy`).
@Suite struct HTTPProxyProberTests {
    let certs: TestCertificates
    init() throws { certs = try TestCertificates.shared() }

    private func probe(_ url: String, proxy: String, caFile: String? = nil) async throws -> ProbeResult {
        let config = try HTTPProbeConfig(url: url, caFile: caFile, proxy: .fixed(try HTTPProxy(parsing: proxy)))
        return await HTTPProber(config).probe(deadline: .now + .seconds(3))
    }

    @Test func plainHTTPGoesInAbsoluteFormAndIsJudgedAsUsual() async throws {
        let origin = try LoopbackHTTPServer(behavior: .status(204))
        defer { origin.stop() }
        let proxy = try LoopbackHTTPServer(behavior: .forwardProxy())
        defer { proxy.stop() }
        let r = try await probe(origin.url("/generate_204"), proxy: proxy.baseURL)
        #expect(r.status == .success, "\(r.detail)")
        #expect(r.address == nil, "the address reached is the proxy's, not the target's")
        #expect(r.family == .ipv4, "it counts for the family the proxy was reached over")
        #expect(proxy.requests.first?.hasPrefix("GET \(origin.url("/generate_204")) HTTP/1.1") == true)
        #expect(origin.requests.first?.hasPrefix("GET /generate_204 HTTP/1.1") == true)
        // Captive rules apply to what comes back through the proxy.
        let portal = try LoopbackHTTPServer(behavior: .status(302, headers: [("Location", "http://login.example/")]))
        defer { portal.stop() }
        let p = try await probe(portal.url("/generate_204"), proxy: proxy.baseURL)
        #expect(p.status == .portal && p.reason == .redirect, "\(p.detail)")
    }

    @Test func httpsGoesThroughCONNECTWithTLSEndToEnd() async throws {
        let origin = try LoopbackHTTPServer(tls: try certs.valid.identity(), behavior: .status(204))
        defer { origin.stop() }
        let proxy = try LoopbackHTTPServer(behavior: .forwardProxy())
        defer { proxy.stop() }
        let r = try await probe(origin.url("/generate_204"), proxy: proxy.baseURL, caFile: certs.caFile)
        #expect(r.status == .success, "\(r.detail)")
        #expect(r.phases[.proxy] != nil && r.phases[.tls] != nil && r.phases[.connect] != nil)
        #expect(proxy.requests.first?.hasPrefix("CONNECT 127.0.0.1:\(origin.port) HTTP/1.1") == true)
        #expect(r.http?.tlsVersion == "TLSv1.3")
    }

    @Test func proxyCredentials() async throws {
        let origin = try LoopbackHTTPServer(behavior: .status(204))
        defer { origin.stop() }
        let tlsOrigin = try LoopbackHTTPServer(tls: try certs.valid.identity(), behavior: .status(204))
        defer { tlsOrigin.stop() }
        let proxy = try LoopbackHTTPServer(behavior: .forwardProxy(credentials: "rx:s3cret"))
        defer { proxy.stop() }
        let bare = "127.0.0.1:\(proxy.port)"
        for url in [origin.url("/"), tlsOrigin.url("/")] {
            let none = try await probe(url, proxy: "http://\(bare)", caFile: certs.caFile)
            #expect(none.reason == .proxyAuth && none.detail.contains("no credentials"), "\(none.detail)")
            let wrong = try await probe(url, proxy: "http://rx:nope@\(bare)", caFile: certs.caFile)
            #expect(wrong.reason == .proxyAuth && wrong.detail.contains("credentials refused"), "\(wrong.detail)")
            #expect(!wrong.detail.contains("nope"))
            let right = try await probe(url, proxy: "http://rx:s3cret@\(bare)", caFile: certs.caFile)
            #expect(right.status == .success, "\(right.detail)")
        }
    }

    @Test func proxyFailuresHaveTheirOwnReasons() async throws {
        let closed = try TCPTestListener(listening: false)
        defer { closed.stop() }
        let refused = try await probe("http://192.0.2.9/", proxy: "http://127.0.0.1:\(closed.address.port)")
        #expect(refused.reason == .proxyRefused, "\(refused.detail)")
        let forbidding = try LoopbackHTTPServer(behavior: .status(403))
        defer { forbidding.stop() }
        let tunnel = try await probe("https://192.0.2.9/", proxy: forbidding.baseURL)
        #expect(tunnel.reason == .proxyStatus && tunnel.detail.contains("403"), "\(tunnel.detail)")
        // A proxy that cannot reach the origin answers 502: the proxy's failure, not the origin's.
        let proxy = try LoopbackHTTPServer(behavior: .forwardProxy())
        defer { proxy.stop() }
        let gone = try await probe("http://127.0.0.1:\(closed.address.port)/", proxy: proxy.baseURL)
        #expect(gone.reason == .proxyStatus && gone.detail.contains("502"), "\(gone.detail)")
    }
}
