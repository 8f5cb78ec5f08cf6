import Glibc
import ReachabilityTestSupport
import Synchronization
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

@Suite struct HTTPServerTests {
    /// A server on 127.0.0.1 port 0 serving a registry, with short timeouts for the hostile cases.
    static func startServer(
        maxConnections: Int = 64, requestTimeout: Duration = .milliseconds(300),
        idleTimeout: Duration = .seconds(5), bigBody: Int = 0, slowPath: String? = nil
    ) throws -> (HTTPServer, UInt16, MetricsRegistry) {
        let registry = MetricsRegistry()
        registry.gauge("demo_value", help: "A value.", labels: ["k"]).labels("v").set(42)
        var options = HTTPServer.Options()
        options.maxConnections = maxConnections
        options.requestTimeout = requestTimeout
        options.idleTimeout = idleTimeout
        options.maxConnectionsPerIP = maxConnections
        var routes = WebRoutes(registry: registry)
        if let slowPath {
            routes.add { request in
                guard request.path == slowPath else { return nil }
                usleep(800_000)
                return HTTPResponse(status: 200, text: "slow\n")
            }
        }
        if bigBody > 0 {
            let body = [UInt8](repeating: UInt8(ascii: "x"), count: bigBody)
            routes.add { $0.path == "/big" ? HTTPResponse(status: 200, body: body) : nil }
        }
        let server = try HTTPServer(
            listen: ListenAddress(host: "127.0.0.1", port: 0), options: options, logger: Logger(level: .error)
        ) { [routes] in await routes.handle($0) }
        server.start()
        return (server, server.boundAddress.port, registry)
    }

    /// RFC 9110 §12.5.3: an explicit `gzip;q=0` wins over `*`.
    @Test(arguments: [
        ("gzip", true), ("*", true), ("gzip;q=0.5", true), ("identity", false), ("*, gzip;q=0", false),
        ("gzip;q=0, *", false), ("*;q=0", false), ("br, *;q=0.1", true), ("GZIP; Q=0", false), ("gzip;q=x", false),
    ])
    func gzipFollowsTheWeights(header: String, gzip: Bool) {
        let request = HTTPRequest(method: "GET", target: "/metrics", headers: [("Accept-Encoding", header)])
        #expect(HTTPServer.acceptsGzip(request) == gzip)
    }

    @Test func metricsHeadAndErrors() throws {
        let (server, port, _) = try Self.startServer()
        defer { server.shutdown() }
        let c = try RawTCPClient(port: port)
        c.send("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        let r = c.readResponse()
        #expect(r.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(r.contains("Content-Type: text/plain; version=0.0.4; charset=utf-8"))
        #expect(r.contains("demo_value{k=\"v\"} 42\n"))
        c.send("HEAD /metrics HTTP/1.1\r\n\r\n")
        let head = c.read { $0.hasSuffix("\r\n\r\n") }.text
        #expect(head.hasPrefix("HTTP/1.1 200 OK"))
        #expect(!head.contains("Content-Length: 0\r\n"))
        c.send("DELETE /metrics HTTP/1.1\r\n\r\n")
        let r405 = c.readResponse()
        #expect(r405.hasPrefix("HTTP/1.1 405") && r405.contains("Allow: GET, HEAD"))
        c.send("GET /nope HTTP/1.1\r\n\r\n")
        #expect(c.readResponse().hasPrefix("HTTP/1.1 404"))
        c.send("GET / HTTP/1.1\r\nConnection: close\r\n\r\n")
        let landing = c.read()
        #expect(landing.text.contains("<a href=\"./metrics\">"))
        #expect(landing.closed)
    }

    @Test func openMetricsByAccept() throws {
        let (server, port, _) = try Self.startServer()
        defer { server.shutdown() }
        let c = try RawTCPClient(port: port)
        c.send(
            "GET /metrics HTTP/1.1\r\nAccept: application/openmetrics-text;version=1.0.0\r\nConnection: close\r\n\r\n")
        let r = c.read().text
        #expect(r.contains("Content-Type: application/openmetrics-text; version=1.0.0; charset=utf-8"))
        #expect(r.hasSuffix("# EOF\n"))
    }

    @Test func pipelinedRequestsInOneWrite() throws {
        let (server, port, _) = try Self.startServer()
        defer { server.shutdown() }
        let c = try RawTCPClient(port: port)
        c.send(
            "GET /-/healthy HTTP/1.1\r\n\r\nGET /-/ready HTTP/1.1\r\n\r\nGET /-/healthy HTTP/1.1\r\nConnection: close\r\n\r\n"
        )
        let all = c.read()
        #expect(all.closed)
        #expect(all.text.occurrences(ofBytes: "HTTP/1.1 200 OK") == 3)
    }

    static let hostileCases: [Case] = [
        ("\u{0}\u{1}\u{2}\u{3}\r\n\r\n", "HTTP/1.1 400"),
        ("GET /" + String(repeating: "a", count: 10000) + " HTTP/1.1\r\n\r\n", "HTTP/1.1 414"),
        ("GET / HTTP/1.1\r\nX: " + String(repeating: "b", count: 40000) + "\r\n\r\n", "HTTP/1.1 431"),
        ("GET / HTTP/9.9\r\n\r\n", "HTTP/1.1 505"),
        // No line end yet, but no method either: refused at once, not at the request deadline.
        ("\u{16}\u{3}\u{1}\u{2}\u{0}\u{1}", "HTTP/1.1 400"),
        ("G\u{7f}T", "HTTP/1.1 400"),
    ].map(Case.init)

    @Test(arguments: hostileCases)
    func hostileRequestsGetAnErrorAndAClose(_ row: Case) throws {
        let (payload, expected) = (row.input, row.expected)
        let (server, port, _) = try Self.startServer()
        defer { server.shutdown() }
        let c = try RawTCPClient(port: port)
        c.send(payload)
        let r = c.read()
        #expect(r.text.hasPrefix(expected))
        #expect(r.closed)
        // The server still serves others.
        let d = try RawTCPClient(port: port)
        d.send("GET /-/healthy HTTP/1.1\r\nConnection: close\r\n\r\n")
        #expect(d.read().text.hasPrefix("HTTP/1.1 200"))
    }

    @Test func slowClientGets408AndIsClosed() throws {
        let (server, port, _) = try Self.startServer(requestTimeout: .milliseconds(300))
        defer { server.shutdown() }
        let c = try RawTCPClient(port: port)
        let clock = ContinuousClock()
        let start = clock.now
        c.send("GET /metrics HTTP/1.1\r\nHo")
        let r = c.read()
        #expect(r.text.hasPrefix("HTTP/1.1 408"))
        #expect(r.closed)
        #expect(clock.now - start >= .milliseconds(250))
    }

    @Test func idleKeepAliveConnectionIsClosed() throws {
        let (server, port, _) = try Self.startServer(idleTimeout: .milliseconds(300))
        defer { server.shutdown() }
        let c = try RawTCPClient(port: port)
        c.send("GET /-/healthy HTTP/1.1\r\n\r\n")
        #expect(c.readResponse().hasPrefix("HTTP/1.1 200"))
        let rest = c.read()
        #expect(rest.closed && rest.text.isEmpty)
    }

    @Test func halfClosedClientStillGetsItsResponse() throws {
        let (server, port, _) = try Self.startServer()
        defer { server.shutdown() }
        let c = try RawTCPClient(port: port)
        c.send("GET /metrics HTTP/1.1\r\n\r\n")
        c.shutdownWrite()
        let r = c.read()
        #expect(r.text.hasPrefix("HTTP/1.1 200") && r.text.contains("demo_value"))
        #expect(r.closed)
    }

    @Test func clientVanishingMidResponseDoesNotHurtTheServer() throws {
        let (server, port, _) = try Self.startServer(bigBody: 8 << 20)
        defer { server.shutdown() }
        for _ in 0..<5 {
            let c = try RawTCPClient(port: port)
            c.send("GET /big HTTP/1.1\r\n\r\n")
            var one = [UInt8](repeating: 0, count: 100)
            _ = recv(c.fd, &one, 100, 0)
            // Reset instead of FIN: SO_LINGER 0 then close happens in deinit.
            var lg = linger(l_onoff: 1, l_linger: 0)
            setsockopt(c.fd, SOL_SOCKET, SO_LINGER, &lg, socklen_t(MemoryLayout<linger>.size))
        }
        let d = try RawTCPClient(port: port)
        d.send("GET /-/healthy HTTP/1.1\r\nConnection: close\r\n\r\n")
        #expect(d.read().text.hasPrefix("HTTP/1.1 200"))
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(5)
        while server.activeConnections > 0 && clock.now < deadline { usleep(10_000) }
        #expect(server.activeConnections == 0)
    }

    /// Scrapes sharing a render share one gzip; scrapes of an older render, arriving while a
    /// newer one is compressed, each get the gzip of their own body.
    @Test func sharedGzipIsOfTheSameBody() async throws {
        let (server, _, _) = try Self.startServer()
        defer { server.shutdown() }
        let older = Array(String(repeating: "older render line\n", count: 4000).utf8)
        let newer = Array(String(repeating: "newer render line\n", count: 4000).utf8)
        let results = await withTaskGroup(of: (Bool, [UInt8]?).self) { group in
            for i in 0..<40 {
                let isNewer = i % 2 == 0
                group.addTask {
                    (isNewer, await server.compressed(isNewer ? newer : older, shared: isNewer ? 1_000_002 : 1_000_001))
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 40)
        for (isNewer, gz) in results {
            #expect(gz.flatMap { Gzip.decompress($0) } == (isNewer ? newer : older))
        }
        // Kept: the newest serial's; an unshared body is compressed on its own.
        #expect(await server.compressed(newer, shared: 1_000_002).flatMap { Gzip.decompress($0) } == newer)
        #expect(await server.compressed(older, shared: nil).flatMap { Gzip.decompress($0) } == older)
    }

    /// At the limit the oldest connection not being answered gives way to the new one.
    @Test func atTheLimitTheOldestIdleConnectionGivesWay() throws {
        let (server, port, _) = try Self.startServer(maxConnections: 2)
        defer { server.shutdown() }
        let a = try RawTCPClient(port: port)
        let b = try RawTCPClient(port: port)
        a.send("GET /-/healthy HTTP/1.1\r\n\r\n")
        b.send("GET /-/healthy HTTP/1.1\r\n\r\n")
        #expect(a.readResponse().hasPrefix("HTTP/1.1 200"))
        #expect(b.readResponse().hasPrefix("HTTP/1.1 200"))
        let c = try RawTCPClient(port: port)
        c.send("GET /-/healthy HTTP/1.1\r\n\r\n")
        #expect(c.readResponse().hasPrefix("HTTP/1.1 200"))
        #expect(a.read().closed, "the oldest idle connection was closed to make room")
        b.send("GET /-/healthy HTTP/1.1\r\n\r\n")
        #expect(b.readResponse().hasPrefix("HTTP/1.1 200"))
    }

    /// Only when every connection is being answered is a new one refused with 503.
    @Test func whenEveryConnectionIsBeingAnsweredANewOneGets503() throws {
        let (server, port, _) = try Self.startServer(maxConnections: 2, slowPath: "/slow")
        defer { server.shutdown() }
        let a = try RawTCPClient(port: port)
        let b = try RawTCPClient(port: port)
        a.send("GET /slow HTTP/1.1\r\n\r\n")
        b.send("GET /slow HTTP/1.1\r\n\r\n")
        usleep(200_000)
        let c = try RawTCPClient(port: port)
        let r = c.read()
        #expect(r.text.hasPrefix("HTTP/1.1 503"))
        #expect(r.closed)
        #expect(a.readResponse().hasPrefix("HTTP/1.1 200"))
        #expect(b.readResponse().hasPrefix("HTTP/1.1 200"))
    }

    /// Hundreds of clients holding half-sent request heads cost no scrape: a complete request
    /// is answered at once, and the slow ones still get their 408 at the deadline.
    @Test func slowClientsCannotTakeTheEndpointAway() throws {
        let (server, port, _) = try Self.startServer(maxConnections: 1024, requestTimeout: .seconds(3))
        defer { server.shutdown() }
        var slow: [RawTCPClient] = []
        for _ in 0..<400 {
            let c = try RawTCPClient(port: port)
            c.send("GET /metrics HTTP/1.1\r\nHost: x\r\n")
            slow.append(c)
        }
        usleep(100_000)
        let clock = ContinuousClock()
        let start = clock.now
        let scrape = try RawTCPClient(port: port)
        scrape.send("GET /metrics HTTP/1.1\r\n\r\n")
        let response = scrape.readResponse()
        #expect(response.hasPrefix("HTTP/1.1 200") && response.contains("demo_value"))
        // A hang bound, not a performance claim: the scrape must not wait for the slow clients' deadline.
        #expect(clock.now - start < .seconds(2))
        #expect(server.activeConnections >= 400)
        #expect(slow[0].read().text.hasPrefix("HTTP/1.1 408"))
    }

    @Test func concurrentScrapesAllSucceed() async throws {
        let (server, port, registry) = try Self.startServer()
        defer { server.shutdown() }
        let family = registry.counter("demo_events_total", help: "Events.", labels: ["n"])
        let failures = await withTaskGroup(of: Int.self) { group in
            for t in 0..<8 {
                group.addTask {
                    guard let c = try? RawTCPClient(port: port) else { return 1 }
                    var failed = 0
                    for i in 0..<50 {
                        family.labels(String(t)).inc()
                        c.send("GET /metrics HTTP/1.1\r\n\r\n")
                        let r = c.readResponse()
                        if !r.hasPrefix("HTTP/1.1 200") || !r.contains("demo_value{k=\"v\"} 42") { failed += 1 }
                        if i == 49 && !r.contains("demo_events_total{n=\"\(t)\"}") { failed += 1 }
                    }
                    return failed
                }
            }
            return await group.reduce(0, +)
        }
        #expect(failures == 0)
    }

    @Test func shutdownClosesIdleConnectionsPromptly() throws {
        let (server, port, _) = try Self.startServer(idleTimeout: .seconds(30))
        let c = try RawTCPClient(port: port)
        c.send("GET /-/healthy HTTP/1.1\r\n\r\n")
        #expect(c.readResponse().hasPrefix("HTTP/1.1 200"))
        let clock = ContinuousClock()
        let start = clock.now
        server.shutdown(grace: .seconds(3))
        #expect(clock.now - start < .seconds(1))
        #expect(c.read().closed)
        #expect(throws: (any Error).self) { _ = try RawTCPClient(port: port) }
    }

    @Test(arguments: [
        (":10361", "", UInt16(10361)), ("127.0.0.1:0", "127.0.0.1", 0), ("[::1]:9", "::1", 9),
        ("localhost:80", "127.0.0.1", 80),
    ])
    func listenAddresses(text: String, host: String, port: UInt16) throws {
        #expect(try ListenAddress.parse(text) == ListenAddress(host: host, port: port))
    }

    @Test(arguments: ["10361", "::1:80", "example.com:80", "127.0.0.1:99999", "[::1:80", "1.2.3.4:x"])
    func badListenAddresses(text: String) {
        #expect(throws: ListenAddress.Invalid.self) { try ListenAddress.parse(text) }
    }
}
