import Glibc
import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// Runs one probe against a fresh loopback server; returns the result and the wall time.
func probeLoopback(
    _ behavior: LoopbackHTTPBehavior, host: String = "127.0.0.1", tls: LoopbackTLSIdentity? = nil,
    timeout: Duration = .seconds(5), path: String = "/",
    config: (String) throws -> HTTPProbeConfig = { try HTTPProbeConfig(url: $0) }
) async throws -> (result: ProbeResult, elapsed: Duration, server: LoopbackHTTPServer) {
    let server = try LoopbackHTTPServer(host: host, tls: tls, behavior: behavior)
    defer { server.stop() }
    let prober = HTTPProber(try config(server.url(path)))
    let clock = ContinuousClock()
    let start = clock.now
    let result = await prober.probe(deadline: start + timeout)
    return (result, start.duration(to: clock.now), server)
}

/// Slack for "ended within its deadline" on a loaded 2-core machine.
/// How far past its deadline a probe may end on a loaded 2-core CI machine: a bound against
/// hangs, not a performance claim.
let deadlineSlack = Duration.seconds(2)

@Suite struct HTTPProberTests {
    @Test func captive204IsSuccess() async throws {
        let (r, elapsed, server) = try await probeLoopback(.status(204, "No Content"), path: "/generate_204")
        #expect(r.status == .success, "\(r.detail)")
        #expect(r.reason == nil)
        #expect(r.http?.statusCode == 204)
        #expect(r.family == .ipv4 && r.address == "127.0.0.1")
        #expect(Set(r.phases.keys) == [.resolve, .connect, .processing, .transfer])
        #expect(elapsed < .seconds(5))
        let request = try #require(server.requests.first)
        #expect(request.hasPrefix("GET /generate_204 HTTP/1.1\r\n"))
        #expect(request.contains("\r\nHost: 127.0.0.1:\(server.port)"))
        #expect(request.contains("\r\nUser-Agent: reachability_exporter/"))
        #expect(request.contains("\r\nConnection: close"))
        // No cache may answer for the internet: a compliant cache must ask the origin.
        #expect(request.contains("\r\nCache-Control: no-cache\r\n") && request.contains("\r\nPragma: no-cache\r\n"))
    }

    @Test func requestCarriesOverridesAndCacheBust() async throws {
        let server = try LoopbackHTTPServer(behavior: .status(204))
        defer { server.stop() }
        let prober = HTTPProber(
            try HTTPProbeConfig(
                url: server.url("/generate_204?a=b"), method: .get, hostHeader: "captive.example",
                cacheBust: .init(parameter: "_rx", value: .monotonic), headers: [.init("X-Probe", "1")]))
        for _ in 0..<2 { #expect(await prober.probe(deadline: .now + .seconds(5)).succeeded) }
        let values = server.requests.compactMap { request -> UInt64? in
            #expect(request.contains("\r\nHost: captive.example\r\n"))
            #expect(request.contains("\r\nX-Probe: 1"))
            #expect(request.contains("\r\nCache-Control: no-cache\r\n"))
            guard let tail = request.split(separator: " ")[1].split(separator: "_rx=").last else { return nil }
            #expect(request.hasPrefix("GET /generate_204?a=b&_rx="))
            return UInt64(tail)
        }
        #expect(values.count == 2)
        #expect(values[0] < values[1])
        // An operator's own Cache-Control replaces the default one.
        let own = HTTPProber(
            try HTTPProbeConfig(url: server.url("/generate_204"), headers: [.init("Cache-Control", "max-age=0")]))
        #expect(await own.probe(deadline: .now + .seconds(5)).succeeded)
        let last = try #require(server.requests.last)
        #expect(last.contains("\r\nCache-Control: max-age=0") && !last.contains("no-cache\r\nCache"), "\(last)")
        #expect(last.components(separatedBy: "Cache-Control:").count == 2)
    }

    @Test func successPageByBody() async throws {
        let page = "<HTML><HEAD><TITLE>Success</TITLE></HEAD><BODY>Success</BODY></HTML>"
        let (r, _, server) = try await probeLoopback(.status(200, "OK", body: page)) {
            try HTTPProbeConfig(url: $0, mode: .captive(.bodyContains("Success")))
        }
        #expect(r.status == .success, "\(r.detail)")
        #expect(r.http?.bodyBytes == page.utf8.count)
        #expect(server.requests.first?.hasPrefix("GET ") == true)
        let (exact, _, _) = try await probeLoopback(.status(200, body: "\n  Success \n")) {
            try HTTPProbeConfig(url: $0, mode: .captive(.bodyEquals("Success")))
        }
        #expect(exact.status == .success, "\(exact.detail)")
    }

    @Test func portalLoginPage() async throws {
        let login = LoopbackHTTPBehavior.status(200, "OK", body: "<html>Please log in</html>")
        let (byStatus, _, _) = try await probeLoopback(login)
        #expect(byStatus.status == .portal)
        #expect(byStatus.reason == .httpStatus)
        #expect(byStatus.http?.statusCode == 200)
        let (byBody, _, _) = try await probeLoopback(login) {
            try HTTPProbeConfig(url: $0, mode: .captive(.bodyContains("Success")))
        }
        #expect(byBody.status == .portal)
        #expect(byBody.reason == .bodyMismatch)
        #expect(byBody.detail.contains("Please log in"))
    }

    @Test func portalRedirectIsNotFollowed() async throws {
        let target = "http://login.portal.example/?from=probe"
        let (r, _, server) = try await probeLoopback(.status(302, "Found", headers: [("Location", target)]))
        #expect(r.status == .portal)
        #expect(r.reason == .redirect)
        #expect(r.http?.location == target)
        #expect(r.http?.redirects == 0)
        #expect(server.acceptedConnections == 1)
    }

    @Test func serverErrorIsPlainFailure() async throws {
        let (captive, _, _) = try await probeLoopback(.status(503, "Service Unavailable"))
        #expect(captive.status == .failure)
        #expect(captive.reason == .httpStatus)
        #expect(captive.http?.statusCode == 503)
        let (web, _, _) = try await probeLoopback(.status(404, "Not Found")) {
            try HTTPProbeConfig(url: $0, mode: .web)
        }
        #expect(web.status == .failure && web.reason == .httpStatus)
    }

    @Test func webModeFollowsRelativeRedirects() async throws {
        let routes = LoopbackHTTPBehavior.routes([
            "/a/start": .init(302, headers: [("Location", "next")]),
            "/a/next": .init(301, headers: [("Location", "/final?x=1")]),
            "/final": .init(200, body: "done"),
        ])
        let (r, _, server) = try await probeLoopback(routes, path: "/a/start") {
            try HTTPProbeConfig(url: $0, mode: .web)
        }
        #expect(r.status == .success, "\(r.detail)")
        #expect(r.http?.redirects == 2)
        #expect(r.http?.statusCode == 200)
        #expect(server.requests.map { $0.split(separator: " ")[1] } == ["/a/start", "/a/next", "/final?x=1"])
    }

    @Test func webModeRedirectLimitAndNoFollow() async throws {
        let loop = LoopbackHTTPBehavior.routes(["/loop": .init(302, headers: [("Location", "/loop")])])
        let (limited, _, server) = try await probeLoopback(loop, path: "/loop") {
            try HTTPProbeConfig(url: $0, mode: .web, maxRedirects: 3)
        }
        #expect(limited.status == .failure)
        #expect(limited.reason == .redirect)
        #expect(limited.http?.redirects == 3)
        #expect(server.acceptedConnections == 4)
        let (unfollowed, _, _) = try await probeLoopback(loop, path: "/loop") {
            try HTTPProbeConfig(url: $0, mode: .web, followRedirects: false)
        }
        #expect(unfollowed.status == .success)
        #expect(unfollowed.http?.location == "/loop")
    }

    @Test func chunkedBody() async throws {
        let raw = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nSuc\r\n4;x=y\r\ncess\r\n0\r\n\r\n"
        let (r, _, _) = try await probeLoopback(.raw(raw)) {
            try HTTPProbeConfig(url: $0, mode: .captive(.bodyEquals("Success")))
        }
        #expect(r.status == .success, "\(r.detail)")
        #expect(r.http?.bodyBytes == 7)
    }

    @Test func ipv6Loopback() async throws {
        let (r, _, _) = try await probeLoopback(.status(204), host: "::1")
        #expect(r.status == .success, "\(r.detail)")
        #expect(r.family == .ipv6)
        #expect(r.address == "::1")
    }

    @Test func boundToLoopbackInterface() async throws {
        let (r, _, _) = try await probeLoopback(.status(204)) { try HTTPProbeConfig(url: $0, interface: "lo") }
        #expect(r.status == .success, "\(r.detail)")
        let (missing, _, _) = try await probeLoopback(.status(204)) {
            try HTTPProbeConfig(url: $0, interface: "rxnosuchif0")
        }
        #expect(missing.status == .failure)
        #expect(missing.reason == .unreachable, "\(missing.detail)")
    }
}

/// Captive checks behave like the operating systems': GET, every 3xx and 511 are portal signals.
@Suite struct PortalSignalTests {
    @Test func theDefaultGETSeesOpenNDSsRedirect() async throws {
        let (r, _, server) = try await probeLoopback(.openNDSPortal(), path: "/generate_204")
        #expect(r.status == .portal)
        #expect(r.reason == .redirect)
        #expect(r.http?.statusCode == 307)
        #expect(server.requests.first?.hasPrefix("GET /generate_204 ") == true)
    }

    @Test func headWhenAskedGets511WhichIsAPortalToo() async throws {
        let (r, _, server) = try await probeLoopback(.openNDSPortal(), path: "/generate_204") {
            try HTTPProbeConfig(url: $0, method: .head)
        }
        #expect(server.requests.first?.hasPrefix("HEAD ") == true)
        #expect(r.status == .portal)
        #expect(r.reason == .networkAuthenticationRequired)
        #expect(r.detail.contains("511"), "\(r.detail)")
    }

    @Test(arguments: [301, 302, 303, 307, 308])
    func everyRedirectIsAPortalSignal(_ code: Int) async throws {
        let (r, _, _) = try await probeLoopback(
            .status(code, "Moved", headers: [("Location", "http://192.0.2.1/login")]))
        #expect(r.status == .portal)
        #expect(r.reason == .redirect)
        #expect(r.http?.location == "http://192.0.2.1/login")
    }

    @Test func a511IsAPortalInWebModeToo() async throws {
        let (r, _, _) = try await probeLoopback(.status(511, "Network Authentication Required")) {
            try HTTPProbeConfig(url: $0, mode: .web)
        }
        #expect(r.status == .portal)
        #expect(r.reason == .networkAuthenticationRequired)
    }

    @Test func otherServerErrorsStayPlainFailures() async throws {
        let (r, _, _) = try await probeLoopback(.status(503, "Service Unavailable"))
        #expect(r.status == .failure)
        #expect(r.reason == .httpStatus)
    }
}
