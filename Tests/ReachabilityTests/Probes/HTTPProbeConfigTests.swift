import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

@Suite struct HTTPProbeConfigTests {
    @Test func captiveDefaults() throws {
        let c = try HTTPProbeConfig(url: "http://connectivitycheck.example/generate_204")
        #expect(c.mode == .captive(.noContent))
        #expect(c.method == .get)  // as Android and Apple do; openNDS answers HEAD with 511
        #expect(!c.followRedirects)
        #expect(c.probeType == .http)
        #expect(c.bodyLimit == 65_536)
        #expect(c.userAgent.hasPrefix("reachability_exporter/"))
        #expect(try HTTPProbeConfig(url: "https://h/").probeType == .https)
    }

    @Test func bodyExpectationPicksGET() throws {
        let c = try HTTPProbeConfig(url: "http://h/", mode: .captive(.bodyContains("Success")))
        #expect(c.method == .get)
        #expect(throws: ProbeConfigError.self) {
            _ = try HTTPProbeConfig(url: "http://h/", method: .head, mode: .captive(.bodyContains("Success")))
        }
    }

    @Test func webModeFollowsByDefault() throws {
        #expect(try HTTPProbeConfig(url: "http://h/", mode: .web).followRedirects)
        #expect(try !HTTPProbeConfig(url: "http://h/", mode: .web, followRedirects: false).followRedirects)
    }

    @Test(
        arguments: [
            ("target", { @Sendable in try HTTPProbeConfig(url: "gopher://h/") }),
            ("http.follow_redirects", { @Sendable in try HTTPProbeConfig(url: "http://h/", followRedirects: true) }),
            (
                "http.max_redirects",
                { @Sendable in try HTTPProbeConfig(url: "http://h/", mode: .web, maxRedirects: -1) }
            ),
            ("http.headers", { @Sendable in try HTTPProbeConfig(url: "http://h/", headers: [.init("Host", "x")]) }),
            (
                "http.headers",
                { @Sendable in try HTTPProbeConfig(url: "http://h/", headers: [.init("X-A", "a\r\nX-B: b")]) }
            ),
            ("http.headers", { @Sendable in try HTTPProbeConfig(url: "http://h/", headers: [.init("Bad Name", "v")]) }),
            ("http.host_header", { @Sendable in try HTTPProbeConfig(url: "http://h/", hostHeader: "a b") }),
            ("http.tls.server_name", { @Sendable in try HTTPProbeConfig(url: "https://h/", serverName: "not a name") }),
            (
                "interface",
                { @Sendable in try HTTPProbeConfig(url: "http://h/", interface: "an-interface-name-too-long") }
            ),
            ("http.body_limit", { @Sendable in try HTTPProbeConfig(url: "http://h/", bodyLimit: -1) }),
            (
                "http.cache_bust",
                { @Sendable in try HTTPProbeConfig(url: "http://h/", cacheBust: .init(parameter: "a&b")) }
            ),
            (
                "http.tls.ca_file",
                { @Sendable in try HTTPProbeConfig(url: "https://h/", caFile: "/nonexistent/ca.pem") }
            ),
            ("http.tls.ca_file", { @Sendable in try HTTPProbeConfig(url: "https://h/", caFile: "/etc/hostname") }),
            (
                "http.tls.ca_file",
                { @Sendable in try HTTPProbeConfig(url: "https://h/", caFile: "/x", insecureSkipVerify: true) }
            ),
            (
                "http.expected_status",
                { @Sendable in try HTTPProbeConfig(url: "http://h/", mode: .captive(.init(statusCodes: [42]))) }
            ),
        ] as [(String, @Sendable () throws -> HTTPProbeConfig)])
    func rejectsAtConfigTime(field: String, make: @Sendable () throws -> HTTPProbeConfig) {
        #expect { _ = try make() } throws: { ($0 as? ProbeConfigError)?.field.key == field }
    }

    @Test func bodyMatching() {
        #expect(HTTPExpectation.BodyMatch.exact("Success").matches("\n  Success \r\n"))
        #expect(!HTTPExpectation.BodyMatch.exact("Success").matches("Success!"))
        #expect(HTTPExpectation.BodyMatch.prefix("NetworkManager is online").matches(" NetworkManager is online\n"))
        #expect(HTTPExpectation.BodyMatch.contains("Success").matches("<HTML><BODY>Success</BODY></HTML>"))
        #expect(!HTTPExpectation.BodyMatch.contains("Success").matches("<html>Login</html>"))
        #expect(HTTPExpectation(statusCodes: []).admits(status: 201))
        #expect(!HTTPExpectation(statusCodes: []).admits(status: 302))
        #expect(!HTTPExpectation.noContent.admits(status: 200))
    }
}
