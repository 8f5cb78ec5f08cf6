import Foundation
import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// `/probe` as blackbox_exporter answers it: parameters, status codes, timeout, metric names and
/// values, against loopback servers (blackbox's behaviour: docs/probe-endpoint.md).
@Suite struct ProbeEndpointTests {
    func endpoint(_ yaml: String, options: ProbeEndpoint.Options = .init()) throws -> ProbeEndpoint {
        ProbeEndpoint(try BlackboxModuleFile.parse(Array(yaml.utf8), file: "blackbox.yml"), options: options)
    }

    func get(_ e: ProbeEndpoint, _ query: String, headers: [(name: String, value: String)] = []) async -> (
        status: Int, text: String
    ) {
        let r = await e.route(HTTPRequest(method: "GET", target: "/probe?" + query, headers: headers))
        return (r?.status ?? 0, r.map { String(decoding: $0.body, as: UTF8.self) } ?? "")
    }

    /// `name value` lines of an exposition, by series text (`name{labels}`).
    func samples(_ text: String) -> [String: Double] {
        var out: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " ") else { continue }
            out[String(line[..<space])] = Double(line[line.index(after: space)...])
        }
        return out
    }

    static func escaped(_ s: String) -> String {
        s.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? s
    }

    /// blackbox's `getTimeout`, row by row of what Debian's blackbox measured (docs/probe-endpoint.md).
    @Test(
        arguments: [
            (nil, nil, 119.5), (nil, 3.0, 3), ("0.3", nil, 0), ("0.3", 3.0, 3), ("2", nil, 1.5), ("2", 3.0, 1.5),
            ("10", nil, 9.5), ("10", 3.0, 3), ("-5", nil, 0), ("-5", 3.0, 3), ("0", nil, 119.5),
        ] as [(String?, Double?, Double)])
    func timeouts(header: String?, module: Double?, seconds: Double) throws {
        var m = try #require(
            try BlackboxModuleFile.parse(Array("modules:\n  m:\n    prober: icmp\n".utf8), file: "b").modules["m"])
        m.timeout = module.map { .milliseconds(Int64($0 * 1000)) }
        guard case .success(let t) = ProbeEndpoint.timeout(header: header, module: m, offset: .milliseconds(500)) else {
            Issue.record("refused")
            return
        }
        #expect(abs(t.secondsValue - seconds) < 1e-9, "\(header ?? "nil") \(module ?? 0): \(t)")
        guard case .failure = ProbeEndpoint.timeout(header: "abc", module: m, offset: .zero) else {
            Issue.record("abc accepted")
            return
        }
    }

    @Test func blackboxsStatusCodes() async throws {
        let e = try endpoint("modules:\n  http_2xx:\n    prober: http\n    http:\n      headers: {Host: a.example}\n")
        #expect(await get(e, "target=x&module=nope") == (400, "Unknown module \"nope\"\n"))
        #expect(await get(e, "module=http_2xx") == (400, "Target parameter is missing\n"))
        #expect(await get(e, "target=") == (400, "Target parameter is missing\n"), "no module means http_2xx")
        let bad = await get(e, "target=x", headers: [("X-Prometheus-Scrape-Timeout-Seconds", "abc")])
        #expect(bad.status == 500 && bad.text.hasPrefix("Failed to parse timeout from Prometheus header: "))
        #expect(
            await get(e, "target=x&hostname=b.example")
                == (
                    400,
                    "host header defined both in module configuration (a.example) and with URL-parameter 'hostname' (b.example)\n"
                ))
        let post = await e.route(HTTPRequest(method: "POST", target: "/probe?target=x"))
        #expect(post?.status == 405)
        #expect(await e.route(HTTPRequest(method: "GET", target: "/probes")) == nil)
    }

    @Test func httpModules() async throws {
        let server = try LoopbackHTTPServer(
            behavior: .routes([
                "/ok": .init(
                    200, "OK", headers: [("Access-Control-Allow-Origin", "*")], body: "Download the latest version here"
                ),
                "/db": .init(200, "OK", body: "Could not connect to database"),
                "/moved": .init(302, "Found", headers: [("Location", "/ok")]),
                "/missing": .init(404, "Not Found"),
            ]))
        defer { server.stop() }
        let e = try endpoint(
            """
            modules:
              http_2xx:
                prober: http
              http_example:
                prober: http
                http:
                  preferred_ip_protocol: ip4
                  valid_http_versions: ["HTTP/1.1"]
                  fail_if_body_matches_regexp: ["Could not connect to database"]
                  fail_if_header_not_matches:
                    - {header: Access-Control-Allow-Origin, regexp: '(\\*|example\\.com)'}
              http_404:
                prober: http
                http: {valid_status_codes: [404]}
              http_no_follow:
                prober: http
                http: {follow_redirects: false}
              https_only:
                prober: http
                http: {fail_if_not_ssl: true}

            """)
        let ok = samples(await get(e, "target=" + Self.escaped(server.url("/ok"))).text)
        #expect(ok["probe_success"] == 1 && ok["probe_http_status_code"] == 200 && ok["probe_http_ssl"] == 0)
        #expect(ok["probe_ip_protocol"] == 4 && ok["probe_ip_addr_hash"] == 3_668_918_509, "127.0.0.1's FNV-1a")
        #expect(ok["probe_http_version"] == 1.1 && ok["probe_http_content_length"] == 32)
        #expect(ok["probe_failed_due_to_regex"] == 0 && ok["probe_http_redirects"] == 0)
        #expect(ok[#"probe_http_duration_seconds{phase="transfer"}"#] != nil)
        #expect(ok[#"reachability_probe_result_info{status="success",reason=""}"#] == 1)
        // Without a scheme, http:// is prefixed.
        let bare = samples(await get(e, "target=127.0.0.1:\(server.port)/ok").text)
        #expect(bare["probe_success"] == 1)
        let example = samples(await get(e, "module=http_example&target=" + Self.escaped(server.url("/ok"))).text)
        #expect(example["probe_success"] == 1)
        let db = samples(await get(e, "module=http_example&target=" + Self.escaped(server.url("/db"))).text)
        #expect(db["probe_success"] == 0 && db["probe_failed_due_to_regex"] == 1)
        let missing = samples(await get(e, "target=" + Self.escaped(server.url("/missing"))).text)
        #expect(missing["probe_success"] == 0 && missing["probe_http_status_code"] == 404)
        #expect(
            samples(await get(e, "module=http_404&target=" + Self.escaped(server.url("/missing"))).text)[
                "probe_success"] == 1)
        let moved = samples(await get(e, "target=" + Self.escaped(server.url("/moved"))).text)
        #expect(
            moved["probe_success"] == 1 && moved["probe_http_redirects"] == 1 && moved["probe_http_status_code"] == 200)
        let stay = samples(await get(e, "module=http_no_follow&target=" + Self.escaped(server.url("/moved"))).text)
        #expect(stay["probe_success"] == 0 && stay["probe_http_status_code"] == 302)
        #expect(
            samples(await get(e, "module=https_only&target=" + Self.escaped(server.url("/ok"))).text)["probe_success"]
                == 0)
    }

    /// blackbox's `http_post_2xx`: a POST with its body; a 303 answer is followed with a GET.
    @Test func postWithABody() async throws {
        let server = try LoopbackHTTPServer(
            behavior: .routes([
                "/api": .init(200, "OK", body: "{}"),
                "/form": .init(303, "See Other", headers: [("Location", "/api")]),
            ]))
        defer { server.stop() }
        let e = try endpoint(
            """
            modules:
              http_post_2xx:
                prober: http
                timeout: 5s
                http:
                  method: POST
                  headers:
                    Content-Type: application/json
                  body: '{}'

            """)
        let ok = samples(await get(e, "module=http_post_2xx&target=" + Self.escaped(server.url("/api"))).text)
        #expect(ok["probe_success"] == 1)
        let sent = try #require(server.requests.last)
        #expect(sent.hasPrefix("POST /api HTTP/1.1\r\n") && sent.contains("Content-Length: 2"), "\(sent)")
        let moved = samples(await get(e, "module=http_post_2xx&target=" + Self.escaped(server.url("/form"))).text)
        #expect(moved["probe_success"] == 1 && moved["probe_http_redirects"] == 1)
        #expect(server.requests.last?.hasPrefix("GET /api HTTP/1.1\r\n") == true, "\(server.requests)")
    }

    /// What the side-by-side lab found differing from blackbox, each pinned.
    @Test func asBlackboxOnTheEdges() async throws {
        let big = String(repeating: "x", count: 4096)
        let server = try LoopbackHTTPServer(
            behavior: .routes([
                "/plain": .init(200, "OK", body: "ok"),
                "/big": .init(200, "OK", body: big),
                "/moved": .init(301, "Moved", headers: [("Location", "/plain")], body: "moved here"),
            ]))
        defer { server.stop() }
        let e = try endpoint(
            """
            modules:
              no_header:
                prober: http
                http:
                  fail_if_header_matches: [{header: X-Lab, regexp: "^bad$"}]
              allow_missing:
                prober: http
                http:
                  fail_if_header_matches: [{header: X-Lab, regexp: "^bad$", allow_missing: true}]
              limited:
                prober: http
                http: {body_size_limit: 1KB}
              stay:
                prober: http
                http: {follow_redirects: false, valid_status_codes: [301]}
              http_2xx:
                prober: http

            """)
        #expect(
            samples(await get(e, "module=no_header&target=" + Self.escaped(server.url("/plain"))).text)["probe_success"]
                == 0)
        #expect(
            samples(await get(e, "module=allow_missing&target=" + Self.escaped(server.url("/plain"))).text)[
                "probe_success"] == 1)
        let limited = samples(await get(e, "module=limited&target=" + Self.escaped(server.url("/big"))).text)
        #expect(limited["probe_success"] == 0 && limited["probe_failed_due_to_regex"] == 0, "\(limited)")
        #expect(samples(await get(e, "target=" + Self.escaped(server.url("/big"))).text)["probe_success"] == 1)
        let stay = samples(await get(e, "module=stay&target=" + Self.escaped(server.url("/moved"))).text)
        #expect(stay["probe_success"] == 1 && stay["probe_http_redirects"] == 1, "\(stay)")
        #expect(stay["probe_http_uncompressed_body_length"] == 0)
        let closed = try TCPTestListener(listening: false)
        let none = samples(await get(e, "target=http://\(closed.address)/").text)
        #expect(
            none["probe_success"] == 0 && none["probe_http_content_length"] == 0 && none["probe_http_status_code"] == 0)
        let unparsable = samples(await get(e, "target=" + Self.escaped("http://[::1/")).text)
        #expect(unparsable["probe_success"] == 0 && unparsable["probe_http_status_code"] == 0, "\(unparsable)")
        #expect(unparsable.keys.filter { $0.hasPrefix("probe_http_duration_seconds") }.isEmpty, "\(unparsable)")
        #expect(none[#"probe_http_duration_seconds{phase="connect"}"#] != nil)
        let unknown = await e.route(HTTPRequest(method: "GET", target: "/probe?target=x&module=a%01b"))
        #expect(String(decoding: unknown?.body ?? [], as: UTF8.self) == "Unknown module \"a\\x01b\"\n")
        #expect(unknown?.headers.contains { $0.name == "X-Content-Type-Options" && $0.value == "nosniff" } == true)
        #expect(HTTPAnswerChecks.matches("^+OK", "OK then") && !HTTPAnswerChecks.matches("^+OK", "+OK then"))
    }

    @Test func aFailedProbeIsAMetricNotAnError() async throws {
        let closed = try TCPTestListener(listening: false)
        let e = try endpoint("modules:\n  tcp_connect:\n    prober: tcp\n  http_2xx:\n    prober: http\n")
        let refused = await get(e, "module=tcp_connect&target=\(closed.address)")
        #expect(refused.status == 200 && samples(refused.text)["probe_success"] == 0)
        #expect(samples(refused.text)[#"reachability_probe_result_info{status="failure",reason="refused"}"#] == 1)
        let noPort = await get(e, "module=tcp_connect&target=127.0.0.1")
        #expect(noPort.status == 200 && samples(noPort.text)["probe_success"] == 0)
        let badURL = await get(e, "target=" + Self.escaped("http://[::1/"))
        #expect(badURL.status == 200 && samples(badURL.text)["probe_success"] == 0)
    }

    @Test func tcpExpectReadsLines() async throws {
        let banner = try TCPTestListener(
            greeting: Array("220-mail.example ESMTP\r\n220 ready\r\n".utf8), holdsOpen: true)
        defer { banner.stop() }
        let e = try endpoint(
            """
            modules:
              smtp:
                prober: tcp
                tcp:
                  query_response:
                    - expect: "^220 "
              ssh:
                prober: tcp
                tcp:
                  query_response:
                    - expect: "^SSH-2.0-"

            """)
        let smtp = samples(await get(e, "module=smtp&target=\(banner.address)").text)
        #expect(smtp["probe_success"] == 1 && smtp["probe_failed_due_to_regex"] == 0)
        let ssh = samples(
            await get(
                e, "module=ssh&target=\(banner.address)", headers: [("X-Prometheus-Scrape-Timeout-Seconds", "1.5")]
            ).text)
        #expect(ssh["probe_success"] == 0 && ssh["probe_timeout_seconds"] == 1)
    }

    /// blackbox's `ssh_banner` and a `tls: true` module: expect, then send (with `\n`), over
    /// plain TCP and over TLS with the module's CA.
    @Test func tcpQueryResponse() async throws {
        let said = LockedLines()
        let behavior = LoopbackHTTPBehavior { c in
            _ = c.write("SSH-2.0-OpenSSH_9.2 Debian\r\n")
            var line: [UInt8] = []
            while let b = c.readExactly(1), b != [0x0A] { line += b }
            said.append(String(decoding: line, as: UTF8.self))
            _ = c.write("+OK done\r\n")
        }
        let plain = try LoopbackHTTPServer(behavior: behavior)
        defer { plain.stop() }
        let certs = try TestCertificates.shared()
        let tls = try LoopbackHTTPServer(tls: try certs.valid.identity(), behavior: behavior)
        defer { tls.stop() }
        let e = try endpoint(
            """
            modules:
              ssh_banner:
                prober: tcp
                tcp:
                  query_response:
                    - expect: "^SSH-2.0-([^ ]+)"
                      send: "SSH-2.0-blackbox-ssh-check ${1}"
                    - expect: '^\\+OK'
              tls_banner:
                prober: tcp
                tcp:
                  tls: true
                  tls_config: {ca_file: \(certs.caFile), server_name: localhost}
                  query_response:
                    - expect: "^SSH-2.0-"

            """)
        let ssh = samples(await get(e, "module=ssh_banner&target=127.0.0.1:\(plain.port)").text)
        #expect(ssh["probe_success"] == 1 && ssh["probe_failed_due_to_regex"] == 0, "\(ssh)")
        #expect(said.lines == ["SSH-2.0-blackbox-ssh-check OpenSSH_9.2"])
        let overTLS = samples(await get(e, "module=tls_banner&target=127.0.0.1:\(tls.port)").text)
        #expect(
            overTLS["probe_success"] == 1 && overTLS[#"probe_tls_version_info{version="TLS 1.3"}"#] == 1, "\(overTLS)")
        #expect(overTLS["probe_ssl_earliest_cert_expiry"] ?? 0 > 0)
        let plainAsTLS = samples(await get(e, "module=tls_banner&target=127.0.0.1:\(plain.port)").text)
        #expect(plainAsTLS["probe_success"] == 0)
        #expect(TCPDialog.expand("a ${1}-$2 $x ${9}", ["all", "one", "two"]) == "a one-two $x ")
    }

    @Test func dnsIsJudgedByRcode() async throws {
        let server = try DNSTestServer(behaviour: .rcode(3))
        defer { server.stop() }
        let e = try endpoint(
            """
            modules:
              nx_ok:
                prober: dns
                dns: {query_name: gone.example, query_type: A, valid_rcodes: [NXDOMAIN]}
              default:
                prober: dns
                dns: {query_name: gone.example, query_type: A}

            """)
        let target = server.address.description
        let nx = samples(await get(e, "module=nx_ok&target=\(target)").text)
        #expect(nx["probe_success"] == 1 && nx["probe_dns_query_succeeded"] == 1 && nx["probe_dns_answer_rrs"] == 0)
        #expect(samples(await get(e, "module=default&target=\(target)").text)["probe_success"] == 0)
    }

    /// blackbox's `dns_udp_example` validators, on the records as miekg writes them.
    @Test func dnsAnswerValidators() async throws {
        let server = try DNSTestServer(behaviour: .answer(["192.0.2.1", "192.0.2.2"]))
        defer { server.stop() }
        let e = try endpoint(
            """
            modules:
              pass:
                prober: dns
                dns:
                  query_name: www.example
                  query_type: A
                  validate_answer_rrs:
                    fail_if_not_matches_regexp: ['www\\.example\\.\\t[0-9]+\\tIN\\tA\\t192\\.0\\.2\\.[12]']
                    fail_if_none_matches_regexp: ['192\\.0\\.2\\.2$']
              fail:
                prober: dns
                dns:
                  query_name: www.example
                  query_type: A
                  validate_answer_rrs:
                    fail_if_matches_regexp: ['192\\.0\\.2\\.2']

            """)
        let target = server.address.description
        let pass = samples(await get(e, "module=pass&target=\(target)").text)
        #expect(
            pass["probe_success"] == 1 && pass["probe_dns_answer_rrs"] == 2 && pass["probe_dns_authority_rrs"] == 0,
            "\(pass)")
        let fail = await get(e, "module=fail&target=\(target)&debug=true")
        #expect(samples(fail.text)["probe_success"] == 0 && fail.text.contains("At least one RR matched regexp"))
    }

    @Test func allowListAndConcurrency() async throws {
        let server = try LoopbackHTTPServer(behavior: .silent)
        defer { server.stop() }
        var options = ProbeEndpoint.Options()
        options.allowed = try TargetAllowList(["192.0.2.0/24", "*.example.com"])
        let e = try endpoint("modules:\n  http_2xx:\n    prober: http\n", options: options)
        let refused = await get(e, "target=" + Self.escaped(server.url("/")))
        #expect(refused.status == 403 && refused.text.contains("is not allowed by --modules.allow-target"))
        #expect(options.allowed.allows(name: "a.example.com", address: nil))
        #expect(!options.allowed.allows(name: "example.com", address: nil))
        #expect(options.allowed.allows(name: nil, address: SocketAddress(ip: "::ffff:192.0.2.9")))
        #expect(!options.allowed.allows(name: nil, address: SocketAddress(ip: "192.0.3.1")))
        #expect(throws: TargetAllowList.Invalid.self) { try TargetAllowList(["10.0.0.0/33"]) }
        #expect(throws: TargetAllowList.Invalid.self) { try TargetAllowList(["a b"]) }

        var one = ProbeEndpoint.Options()
        one.maxConcurrent = 1
        let busy = try endpoint("modules:\n  http_2xx:\n    prober: http\n", options: one)
        let slow = "target=" + Self.escaped(server.url("/"))
        let headers = [(name: "X-Prometheus-Scrape-Timeout-Seconds", value: "1.5")]
        async let first = get(busy, slow, headers: headers)
        try await Task.sleep(for: .milliseconds(200))
        let second = await get(busy, slow, headers: headers)
        #expect(second == (503, "Too many probes in flight for this client (--modules.max-concurrent=1)\n"))
        #expect(await first.status == 200)
    }

    /// `debug=true` shows the module as written, but never a credential (blackbox shows `<secret>`).
    @Test func debugShowsNoSecret() async throws {
        let e = try endpoint(
            """
            modules:
              auth:
                prober: http
                http:
                  basic_auth: {username: u, password: hunter2}
                  headers:
                    X-Api-Key: k3y-value
              bearer:
                prober: http
                http:
                  bearer_token: t0ken-value
                  proxy_url: http://alice:pr0xy-pw@127.0.0.1:9/

            """)
        for module in ["auth", "bearer"] {
            let d = await get(
                e, "module=\(module)&target=" + Self.escaped("http://bob:t4rget-pw@127.0.0.1:9/") + "&debug=true")
            for secret in ["hunter2", "k3y-value", "t0ken-value", "pr0xy-pw", "t4rget-pw"] {
                #expect(!d.text.contains(secret), "\(module): \(secret) in \(d.text)")
            }
            #expect(d.text.contains("<secret>"), "\(d.text)")
        }
        #expect(
            Redaction.yamlSecrets(
                in: "  basic_auth: {username: u, password: p}\n  password: \"x y\"\n  key_file: k.pem")
                == "  basic_auth: {username: u, password: <secret>}\n  password: <secret>\n  key_file: k.pem")
    }

    @Test func debugOutput() async throws {
        let e = try endpoint("modules:\n  icmp:\n    prober: icmp\n    icmp: {preferred_ip_protocol: ip4}\n")
        let d = await get(e, "module=icmp&target=127.0.0.1&debug=true")
        #expect(d.status == 200)
        // blackbox's layout: each section after the last line of the one before, three blank lines.
        let logs = try #require(d.text.range(of: "\n\n\n\nMetrics that would have been returned:\n# HELP "))
        let module = try #require(d.text.range(of: "\n\n\n\nModule configuration:\n"))
        #expect(d.text.hasPrefix("Logs for the probe:\ntime=") && logs.upperBound < module.lowerBound)
        #expect(d.text[..<logs.lowerBound].contains("msg=\"Beginning probe\""))
        #expect(d.text[module.upperBound...] == "  icmp:\n    prober: icmp\n    icmp: {preferred_ip_protocol: ip4}\n\n")
    }
}

/// Lines a loopback server received, read by the test.
final class LockedLines: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []
    func append(_ line: String) { lock.withLock { stored.append(line) } }
    var lines: [String] { lock.withLock { stored } }
}
