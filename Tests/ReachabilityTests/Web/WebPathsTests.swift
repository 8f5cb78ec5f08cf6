import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// `--web.route-prefix`, `--web.external-url` and `--web.telemetry-path`: what they accept, what
/// the routes then serve, and links that stay inside the prefix whatever it is.
@Suite struct WebPathsTests {
    @Test func flagsAndTheirErrors() throws {
        #expect(try WebPaths(routePrefix: nil, externalURL: nil, telemetryPath: nil) == WebPaths())
        #expect(try WebPaths(routePrefix: "/rx/", externalURL: nil, telemetryPath: nil).prefix == "/rx")
        #expect(try WebPaths(routePrefix: "rx", externalURL: nil, telemetryPath: nil).prefix == "/rx")
        #expect(try WebPaths(routePrefix: "/", externalURL: nil, telemetryPath: nil).prefix == "")
        // The external URL's path is the default prefix; an explicit prefix wins.
        let external = try WebPaths(routePrefix: nil, externalURL: "https://proxy.example/a/rx/", telemetryPath: nil)
        #expect(external.prefix == "/a/rx" && external.externalURL == "https://proxy.example/a/rx/")
        #expect(
            try WebPaths(routePrefix: "/", externalURL: "https://proxy.example/rx/", telemetryPath: nil).prefix == "")
        #expect(try WebPaths(routePrefix: nil, externalURL: "http://h:8080", telemetryPath: nil).prefix == "")
        #expect(try WebPaths(routePrefix: nil, externalURL: nil, telemetryPath: "/x/metrics").telemetry == "/x/metrics")

        let refused: [(String?, String?, String?, String)] = [
            ("/r x", nil, nil, "'--web.route-prefix': a path holds letters"),
            ("/rx/../a", nil, nil, "without '.' or '..' segments"),
            ("/%2e", nil, nil, "'--web.route-prefix'"),
            ("/a?b", nil, nil, "'--web.route-prefix'"),
            (String(repeating: "a", count: 300), nil, nil, "up to 256 characters"),
            (nil, "proxy.example/rx", nil, "an absolute http:// or https:// URL"),
            (nil, "ftp://h/rx", nil, "an absolute http:// or https:// URL"),
            (nil, "https:///rx", nil, "it needs a host"),
            (nil, "https://user:pw@h/rx", nil, "no user"),
            (nil, "https://h/rx?x=1", nil, "no user, query or fragment"),
            (nil, "https://h/r x/", nil, "'--web.external-url': a path holds letters"),
            (nil, nil, "/", "'--web.telemetry-path': it must name a path of its own"),
            (nil, nil, "/-/healthy", "it must name a path of its own"),
            (nil, nil, "debug/probe", "it must name a path of its own"),
            (nil, nil, "/m:x", "'--web.telemetry-path': a path holds letters"),
        ]
        for (prefix, url, telemetry, message) in refused {
            #expect(throws: WebPaths.Invalid.self) {
                try WebPaths(routePrefix: prefix, externalURL: url, telemetryPath: telemetry)
            }
            do {
                _ = try WebPaths(routePrefix: prefix, externalURL: url, telemetryPath: telemetry)
            } catch {
                #expect(error.message.contains(message), "\(error.message)")
            }
        }
        // A user's password in the URL is not echoed back.
        do {
            _ = try WebPaths(routePrefix: nil, externalURL: "https://user:hunter2@h/rx", telemetryPath: nil)
        } catch { #expect(!error.message.contains("hunter2"), "\(error.message)") }
    }

    @Test func linksStayRelative() {
        #expect(WebPaths.link(from: "/", to: "/metrics") == "./metrics")
        #expect(WebPaths.link(from: "/", to: "/x/metrics") == "./x/metrics")
        #expect(WebPaths.link(from: "/debug/probe", to: "/") == "../")
        #expect(WebPaths.link(from: "/", to: "/") == "./")
    }

    private func get(_ routes: WebRoutes, _ target: String) async -> HTTPResponse {
        await routes.handle(HTTPRequest(method: "GET", target: target))
    }

    @Test func routesUnderAPrefix() async throws {
        let registry = MetricsRegistry()
        registry.gauge("demo_value", help: "A value.", labels: ["k"]).labels("v").set(1)
        var routes = WebRoutes(registry: registry)
        routes.paths = try WebPaths(routePrefix: "/rx", externalURL: nil, telemetryPath: "/stats")
        routes.add { $0.path == "/-/reload" ? HTTPResponse(status: 204, text: "") : nil }
        #expect(await get(routes, "/rx/stats").status == 200)
        #expect(
            String(decoding: await get(routes, "/rx/stats?x=1").body, as: UTF8.self).contains("demo_value{k=\"v\"} 1"))
        #expect(await get(routes, "/rx/metrics").status == 404, "another telemetry path leaves /metrics a 404")
        #expect(await get(routes, "/stats").status == 404)
        #expect(await get(routes, "/metrics").status == 404)
        #expect(await get(routes, "/rx/-/healthy").status == 200)
        #expect(await get(routes, "/rx/-/ready").status == 200)
        #expect(await get(routes, "/rx/-/reload").status == 204, "added routes see the route without the prefix")
        #expect(await get(routes, "/rxy/-/healthy").status == 404)
        #expect(await get(routes, "/-/healthy").status == 404)
        let landing = String(decoding: await get(routes, "/rx/").body, as: UTF8.self)
        #expect(landing.contains("href=\"./stats\"") && landing.contains("href=\"./-/healthy\""), "\(landing)")
        #expect(!landing.contains("href=\"/"), "no absolute link: \(landing)")
        // The prefix without its slash, and the root, lead to the prefix.
        let bare = await get(routes, "/rx")
        #expect(bare.status == 302 && bare.headers.contains { $0.name == "Location" && $0.value == "rx/" })
        let root = await get(routes, "/")
        #expect(root.status == 302 && root.headers.contains { $0.name == "Location" && $0.value == "./rx/" })
        // Without a prefix, nothing moves.
        let plain = WebRoutes(registry: registry)
        #expect(await get(plain, "/metrics").status == 200)
        #expect(await get(plain, "/rx/metrics").status == 404)
    }

    @Test func exposureWarning() throws {
        let open = WebExposure(nil)
        let v4 = try #require(SocketAddress(ip: "0.0.0.0", port: 10361))
        let v6 = try #require(SocketAddress(ip: "::", port: 10361))
        let lan = try #require(SocketAddress(ip: "192.0.2.1", port: 10361))
        for loopback in ["127.0.0.1", "127.3.2.1", "::1", "::ffff:127.0.0.1"] {
            #expect(open.warning(try #require(SocketAddress(ip: loopback, port: 1))) == nil, "\(loopback)")
        }
        for address in [v4, v6, lan] {
            #expect(open.warning(address)?.hasPrefix("serving without TLS or authentication") == true)
        }
        #expect(!open.tls && !open.auth)
        var passwords = WebConfig()
        passwords.users = ["prometheus": "$2y$10$x"]
        let cleartext = WebExposure(passwords)
        #expect(cleartext.auth && !cleartext.tls)
        #expect(cleartext.warning(lan)?.hasPrefix("serving without TLS on a non-loopback address") == true)
    }
}
