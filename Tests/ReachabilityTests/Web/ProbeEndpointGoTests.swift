import Foundation
import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// `/probe` requests read as blackbox_exporter's Go reads them: the timeout header through
/// `strconv.ParseFloat`, the query through `url.ParseQuery` (first value wins), a target URL's
/// user information as basic auth, a body past the limit as a failed regex, a 204's length.
/// Each row is what the independent lab saw Debian's blackbox 0.23 answer.
@Suite struct ProbeEndpointGoTests {
    let base = ProbeEndpointTests()

    @Test(
        arguments: [
            ("1_0", 10.0), ("1.5", 1.5), (".5", 0.5), ("1e1", 10), ("0x1p4", 16), ("Inf", .infinity),
            ("-infinity", -.infinity), ("+INF", .infinity), ("1_000.5", 1000.5),
        ] as [(String, Double)])
    func parseFloatAsGo(text: String, value: Double) {
        #expect(GoParsing.parseFloat(text) == value, "\(text)")
    }

    @Test(arguments: ["", "0x10", "1__0", "_1", "1_", "1e", "abc", "1e400", "0x", "--1", "1.2.3", "1 "])
    func parseFloatRefusesAsGo(text: String) {
        #expect(GoParsing.parseFloat(text) == nil, "\(text)")
    }

    @Test func theTimeoutHeaderAsBlackboxReadsIt() throws {
        var m = try #require(
            try BlackboxModuleFile.parse(Array("modules:\n  m:\n    prober: icmp\n".utf8), file: "b").modules["m"])
        let offset = Duration.milliseconds(500)
        func seconds(_ header: String?) -> Double? {
            guard case .success(let t) = ProbeEndpoint.timeout(header: header, module: m, offset: offset) else {
                return nil
            }
            return t.secondsValue
        }
        #expect(seconds("") == 119.5, "an empty header is no header")
        #expect(seconds("1_0") == 9.5)
        #expect(seconds("0x10") == nil, "500: Go wants a p exponent")
        #expect(seconds("NaN") == 0)
        #expect(seconds("Inf") == 0, "Go's Duration overflows: at once")
        #expect(seconds("1e12") == 0)
        #expect(seconds("7200") == 3600)
        m.timeout = .seconds(5)
        #expect(seconds("Inf") == 5)
        #expect(seconds("-Inf") == 5)
    }

    @Test func theQueryAsGoParsesIt() {
        #expect(GoParsing.query("/probe?target=a&target=b&module=m") == ["target": "a", "module": "m"])
        #expect(GoParsing.query("/probe?target=&target=b") == ["target": ""])
        #expect(GoParsing.query("/probe?target=http://h/%zz&module=m") == ["module": "m"])
        #expect(GoParsing.query("/probe?a;b=1&c=d+e%2B") == ["c": "d e+"])
        #expect(GoParsing.query("/probe") == [:])
    }

    @Test func repeatedAndMalformedParameters() async throws {
        let server = try LoopbackHTTPServer(
            behavior: .routes(["/ok": .init(200, "OK", body: "ok"), "/404": .init(404, "Not Found")]))
        defer { server.stop() }
        let e = try base.endpoint(
            "modules:\n  http_2xx:\n    prober: http\n  http_404:\n    prober: http\n    http: {valid_status_codes: [404]}\n"
        )
        let ok = ProbeEndpointTests.escaped("http://127.0.0.1:\(server.port)/ok")
        let missing = ProbeEndpointTests.escaped("http://127.0.0.1:\(server.port)/404")
        let first = await base.get(e, "module=http_2xx&target=\(ok)&target=\(missing)")
        #expect(base.samples(first.text)["probe_success"] == 1, "the first target wins")
        let firstModule = await base.get(e, "module=http_404&module=http_2xx&target=\(missing)")
        #expect(base.samples(firstModule.text)["probe_success"] == 1, "the first module wins")
        #expect(await base.get(e, "module=http_2xx&target=&target=\(ok)") == (400, "Target parameter is missing\n"))
        #expect(
            await base.get(e, "module=http_2xx&target=http://127.0.0.1:\(server.port)/%zz")
                == (400, "Target parameter is missing\n"))
        let c1 = await base.get(e, "module=http_2xx&target=" + ProbeEndpointTests.escaped("http://h/\u{85}"))
        #expect(c1.status == 400, "a C1 control character is a control character")
    }

    @Test func userInformationIsBasicAuth() async throws {
        let server = try LoopbackHTTPServer(behavior: .routes(["/u": .init(204, "No Content")]))
        defer { server.stop() }
        let e = try base.endpoint(
            """
            modules:
              http_2xx:
                prober: http
              with_auth:
                prober: http
                http: {basic_auth: {username: mod, password: ule}}
              with_header:
                prober: http
                http: {headers: {Authorization: Token t}}
            """)
        let target = ProbeEndpointTests.escaped("http://us%3Aer:p%40ss@127.0.0.1:\(server.port)/u")
        let plain = await base.get(e, "module=http_2xx&target=\(target)")
        #expect(base.samples(plain.text)["probe_success"] == 1)
        #expect(base.samples(plain.text)["probe_http_content_length"] == 0, "Go: a 204 has no body: 0")
        _ = await base.get(e, "module=with_auth&target=\(target)")
        _ = await base.get(e, "module=with_header&target=\(target)")
        let auth = server.requests.map { head in
            head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("authorization:") }.map(String.init)
        }
        let expected = "Authorization: Basic " + Data("us:er:p@ss".utf8).base64EncodedString()
        #expect(auth == [expected, expected, "Authorization: Token t"])
        let backslash = await base.get(
            e, "module=http_2xx&target=" + ProbeEndpointTests.escaped("http://10.0.0.1\\@127.0.0.1:\(server.port)/u"))
        #expect(base.samples(backslash.text)["probe_success"] == 0, "Go refuses a backslash in user information")
        let debug = await base.get(e, "module=http_2xx&debug=true&target=\(target)")
        #expect(!debug.text.contains("p@ss") && !debug.text.contains("p%40ss"))
    }

    @Test func aBodyPastTheLimitFailsTheRegex() async throws {
        let server = try LoopbackHTTPServer(
            behavior: .routes([
                "/big": .init(200, "OK", body: String(repeating: "x", count: 4096)),
                "/evil": .init(200, "OK", body: String(repeating: "x", count: 64) + "!"),
            ]))
        defer { server.stop() }
        let e = try base.endpoint(
            """
            modules:
              checked:
                prober: http
                http: {body_size_limit: 1KiB, fail_if_body_matches_regexp: [zzz]}
              unchecked:
                prober: http
                http: {body_size_limit: 1KiB}
              hostile:
                prober: http
                http: {fail_if_body_matches_regexp: ['(x+)+$']}
            """)
        let target = ProbeEndpointTests.escaped("http://127.0.0.1:\(server.port)/big")
        let checked = base.samples(await base.get(e, "module=checked&target=\(target)").text)
        #expect(checked["probe_success"] == 0 && checked["probe_failed_due_to_regex"] == 1)
        let unchecked = base.samples(await base.get(e, "module=unchecked&target=\(target)").text)
        #expect(unchecked["probe_success"] == 0 && unchecked["probe_failed_due_to_regex"] == 0)
        // A pattern PCRE2's match limit cannot decide on this body fails its check.
        let evil = ProbeEndpointTests.escaped("http://127.0.0.1:\(server.port)/evil")
        let hostile = await base.get(e, "module=hostile&debug=true&target=\(evil)")
        #expect(hostile.text.contains("probe_failed_due_to_regex 1"))
        #expect(hostile.text.contains("match limit"))
    }

    @Test func aModuleThatCannotProbeWritesItsMetrics() async throws {
        let e = try base.endpoint(
            "modules:\n  ca:\n    prober: http\n    http: {tls_config: {ca_file: /nonexistent/ca.crt}}\n")
        let r = await base.get(e, "module=ca&target=https://127.0.0.1:1/")
        let s = base.samples(r.text)
        #expect(s["probe_success"] == 0)
        #expect(s["probe_http_status_code"] == 0 && s["probe_failed_due_to_regex"] == 0)
        #expect(s[#"probe_http_duration_seconds{phase="resolve"}"#] != nil)
        #expect(s[#"probe_http_duration_seconds{phase="connect"}"#] == nil, "blackbox stops at resolve")
        #expect(s[#"reachability_probe_result_info{status="failure",reason="error"}"#] == 1)
    }

    /// `reachability_probe_result_info` follows blackbox's checks when they overrule the prober.
    @Test func theResultInfoAgreesWithProbeSuccess() async throws {
        let server = try LoopbackHTTPServer(behavior: .routes(["/ok": .init(200, "OK", body: "ok")]))
        defer { server.stop() }
        let e = try base.endpoint("modules:\n  tls_only:\n    prober: http\n    http: {fail_if_not_ssl: true}\n")
        let r = base.samples(
            await base.get(
                e, "module=tls_only&target=" + ProbeEndpointTests.escaped("http://127.0.0.1:\(server.port)/ok")
            )
            .text)
        #expect(r["probe_success"] == 0)
        #expect(r[#"reachability_probe_result_info{status="failure",reason="tls"}"#] == 1)
    }

    /// One client cannot take every place (ATTACKS: shared budgets): `--modules.max-concurrent`
    /// is per client address (an IPv6 client by its /64), eight times that for all clients.
    @Test func placesArePerClient() async throws {
        let server = try LoopbackHTTPServer(behavior: .silent)
        defer { server.stop() }
        var options = ProbeEndpoint.Options()
        options.maxConcurrent = 1
        let e = try base.endpoint("modules:\n  http_2xx:\n    prober: http\n", options: options)
        let slow = "/probe?target=" + ProbeEndpointTests.escaped("http://127.0.0.1:\(server.port)/")
        func get(from client: String) async -> Int {
            var r = HTTPRequest(
                method: "GET", target: slow, headers: [(name: "X-Prometheus-Scrape-Timeout-Seconds", value: "2")])
            r.client = client
            return await e.route(r)?.status ?? 0
        }
        // Eight clients hold a place each: a second request of one of them, and a ninth client, are
        // refused; the eight answer once their probes time out.
        let holders = (1...8).map { "192.0.2.\($0)" }
        async let held = withTaskGroup(of: Int.self) { group in
            for c in holders { group.addTask { await get(from: c) } }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        try await Task.sleep(for: .milliseconds(400))
        #expect(await get(from: "192.0.2.1") == 503, "the same client again")
        #expect(await get(from: "2001:db8::1") == 503, "all places are taken")
        #expect(await held == Array(repeating: 200, count: 8))
        #expect(ProbeEndpoint.clientKey("2001:db8:0:1::5") == ProbeEndpoint.clientKey("2001:db8:0:1:ffff::9"))
        #expect(ProbeEndpoint.clientKey("2001:db8:0:1::5") != ProbeEndpoint.clientKey("2001:db8:0:2::5"))
        #expect(ProbeEndpoint.clientKey("::ffff:192.0.2.1") == "192.0.2.1")
    }

    /// With a scraper's place held by another client, the scraper still gets its own.
    @Test func anotherClientsFloodLeavesTheScraperItsPlace() async throws {
        let silent = try LoopbackHTTPServer(behavior: .silent)
        defer { silent.stop() }
        let ok = try LoopbackHTTPServer(behavior: .routes(["/": .init(200, "OK", body: "ok")]))
        defer { ok.stop() }
        var options = ProbeEndpoint.Options()
        options.maxConcurrent = 2
        let e = try base.endpoint("modules:\n  http_2xx:\n    prober: http\n", options: options)
        func get(_ port: UInt16, from client: String) async -> Int {
            var r = HTTPRequest(
                method: "GET", target: "/probe?target=" + ProbeEndpointTests.escaped("http://127.0.0.1:\(port)/"),
                headers: [(name: "X-Prometheus-Scrape-Timeout-Seconds", value: "2")])
            r.client = client
            return await e.route(r)?.status ?? 0
        }
        async let flood = withTaskGroup(of: Int.self) { group in
            for _ in 0..<10 { group.addTask { await get(silent.port, from: "127.0.0.9") } }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        try await Task.sleep(for: .milliseconds(300))
        #expect(await get(ok.port, from: "127.0.0.1") == 200, "the scraper's probe runs")
        let statuses = await flood
        #expect(statuses.filter { $0 == 200 }.count == 2 && statuses.filter { $0 == 503 }.count == 8)
    }
}
