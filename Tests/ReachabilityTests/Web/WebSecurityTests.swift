import Foundation
import Glibc
import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// `--web.config.file` in the exporter-toolkit format: what is refused, and TLS, client
/// certificates, basic auth, headers and gzip end to end with curl against the real server.
@Suite struct WebSecurityTests {
    let certs: TestCertificates
    let dir = ScratchDirectory()
    init() throws { certs = try TestCertificates.shared() }

    func write(_ text: String, name: String = "web.yml") -> String {
        let path = "\(dir.path)/\(name)"
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
        return path
    }

    static func error(_ path: String) -> String? {
        do throws(ConfigError) {
            _ = try WebConfig.load(path: path)
            return nil
        } catch { return error.description }
    }

    @Test func refusesWhatTheToolkitRefuses() throws {
        let hash = try #require(PasswordHash.bcrypt("pw", cost: 4))
        #expect(PasswordHash.isBcrypt(hash) && PasswordHash.verify(password: Array("pw".utf8), hash: hash))
        #expect(!PasswordHash.verify(password: Array("nope".utf8), hash: hash))
        let unknown = write("tls_server_config:\n  cert_file: a\n  keyfile: b\n")
        #expect(Self.error(unknown)?.contains("tls_server_config.keyfile: expected one of the keys") == true)
        let missing = write("tls_server_config:\n  cert_file: /nonexistent.pem\n  key_file: /nonexistent.key\n")
        #expect(
            Self.error(missing)?.contains(
                "tls_server_config.cert_file: expected a readable PEM file, found /nonexistent.pem") == true)
        let mismatch = write(
            "tls_server_config:\n  cert_file: \(certs.valid.certificate)\n  key_file: \(certs.wrongHost.key)\n")
        #expect(
            Self.error(mismatch)?.contains(
                "key_file: expected a setting OpenSSL accepts, found OpenSSL refused the key: key values mismatch")
                == true, "\(Self.error(mismatch) ?? "")")
        let plain = write("basic_auth_users:\n  alice: secret\n")
        let message = Self.error(plain) ?? ""
        #expect(
            message.contains("basic_auth_users.alice: expected a bcrypt hash") && !message.contains("secret"),
            "\(message)")
        let header = write("http_server_config:\n  headers:\n    X-Frame-Options: allow\n")
        #expect(Self.error(header)?.contains("expected one of deny, sameorigin") == true)
        let auth = write(
            "tls_server_config: {cert_file: \(certs.valid.certificate), key_file: \(certs.valid.key), client_auth_type: RequireAndVerifyClientCert}\n"
        )
        #expect(Self.error(auth)?.contains("needs client_ca_file") == true)
        // HTTP/2 is not served: asking for it is an error, not a silent HTTP/1.1.
        let h2 = write("http_server_config:\n  http2: true\n")
        #expect(
            Self.error(h2)
                == "\(h2):2:10: http_server_config.http2: expected false or no key: this exporter serves HTTP/1.1 only, "
                + "found true (remove http2, or set it to false; Prometheus scrapes over HTTP/1.1)")
        #expect(Self.error(write("http_server_config:\n  http2: false\n")) == nil)
    }

    /// Runs curl (loopback only) and returns its exit status and output (headers and body).
    func curl(_ args: [String]) throws -> (Int32, String) { try Self.runCurl(args) }

    static func runCurl(_ args: [String]) throws -> (Int32, String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        p.arguments = ["-sS", "-i", "--max-time", "5"] + args
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    func start(_ config: String, options: HTTPServer.Options = HTTPServer.Options()) throws -> (HTTPServer, UInt16) {
        let security = try WebSecurity(path: write(config), logger: Logger(level: .error))
        let registry = MetricsRegistry()
        for i in 0..<200 { registry.gauge("demo_value", help: "A value.", labels: ["k"]).labels("v\(i)").set(42) }
        let routes = WebRoutes(registry: registry)
        let server = try HTTPServer(
            listen: ListenAddress(host: "127.0.0.1", port: 0), options: options, security: security,
            logger: Logger(level: .error)
        ) { await routes.handle($0) }
        server.start()
        return (server, server.boundAddress.port)
    }

    @Test func tlsBasicAuthHeadersAndGzip() throws {
        let hash = try #require(PasswordHash.bcrypt("s3cret", cost: 4))
        let (server, port) = try start(
            """
            tls_server_config:
              cert_file: \(certs.valid.certificate)
              key_file: \(certs.valid.key)
              min_version: TLS12
            http_server_config:
              headers: {X-Content-Type-Options: nosniff}
            basic_auth_users:
              rx: \(hash)
            """)
        defer { server.shutdown() }
        let url = "https://127.0.0.1:\(port)/metrics"
        let (ok, good) = try curl(["--cacert", certs.caFile, "-u", "rx:s3cret", url])
        #expect(ok == 0 && good.hasPrefix("HTTP/1.1 200") && good.contains("demo_value"), "\(good.prefix(300))")
        #expect(good.lowercased().contains("x-content-type-options: nosniff"))
        let (_, wrong) = try curl(["--cacert", certs.caFile, "-u", "rx:nope", url])
        #expect(wrong.hasPrefix("HTTP/1.1 401") && wrong.contains("WWW-Authenticate: Basic"), "\(wrong.prefix(300))")
        let (_, none) = try curl(["--cacert", certs.caFile, url])
        #expect(none.hasPrefix("HTTP/1.1 401"))
        let (_, other) = try curl(["--cacert", certs.caFile, "-u", "rx:s3cret", "https://127.0.0.1:\(port)/-/healthy"])
        #expect(other.hasPrefix("HTTP/1.1 200"), "authentication applies to every endpoint, and passes")
        let (plainStatus, plain) = try curl(["http://127.0.0.1:\(port)/metrics"])
        #expect(
            plainStatus == 0 && plain.hasPrefix("HTTP/1.0 400") && plain.contains("HTTP request to an HTTPS server")
                && !plain.contains("demo_value"), "plain HTTP on the TLS port gets a 400 and no metrics: \(plain)")
        let (_, gz) = try curl(["--cacert", certs.caFile, "-u", "rx:s3cret", "--compressed", url])
        #expect(
            gz.contains("Content-Encoding: gzip") && gz.contains("Vary: Accept-Encoding") && gz.contains("demo_value"))
    }

    /// The last body compressed is reused only for the very same render: a changed registry is
    /// compressed anew, and concurrent gzip scrapes all decompress to a whole exposition.
    @Test func gzipFollowsTheRegistry() async throws {
        let registry = MetricsRegistry()
        let gauge = registry.gauge("demo_value", help: "A value.", labels: ["k"])
        for i in 0..<200 { gauge.labels("v\(i)").set(1) }
        let routes = WebRoutes(registry: registry)
        let server = try HTTPServer(listen: ListenAddress(host: "127.0.0.1", port: 0), logger: Logger(level: .error)) {
            await routes.handle($0)
        }
        server.start()
        defer { server.shutdown() }
        let url = "http://127.0.0.1:\(server.boundAddress.port)/metrics"
        let (_, first) = try curl(["--compressed", url])
        #expect(first.contains("Content-Encoding: gzip") && first.contains("demo_value{k=\"v7\"} 1\n"))
        gauge.labels("v7").set(2)
        let (_, second) = try curl(["--compressed", url])
        #expect(second.contains("Content-Encoding: gzip") && second.contains("demo_value{k=\"v7\"} 2\n"))
        let outputs = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<6 { group.addTask { try Self.runCurl(["--compressed", url]).1 } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(
            outputs.allSatisfy { $0.contains("demo_value{k=\"v199\"} 1\n") && $0.contains("demo_value{k=\"v7\"} 2") })
    }

    @Test func clientCertificatesWhenRequired() throws {
        let (server, port) = try start(
            """
            tls_server_config:
              cert_file: \(certs.valid.certificate)
              key_file: \(certs.valid.key)
              client_auth_type: RequireAndVerifyClientCert
              client_ca_file: \(certs.caFile)
            """)
        defer { server.shutdown() }
        let url = "https://127.0.0.1:\(port)/metrics"
        let (without, _) = try curl(["--cacert", certs.caFile, url])
        #expect(without != 0, "no client certificate: refused")
        let (with, body) = try curl([
            "--cacert", certs.caFile, "--cert", certs.client.certificate, "--key", certs.client.key, url,
        ])
        #expect(with == 0 && body.hasPrefix("HTTP/1.1 200"), "\(body.prefix(200))")
        let (selfSigned, _) = try curl([
            "--cacert", certs.caFile, "--cert", certs.selfSigned.certificate, "--key", certs.selfSigned.key, url,
        ])
        #expect(selfSigned != 0, "a certificate the CA did not sign: refused")
    }

    @Test func clientAllowedSANs() throws {
        func serve(_ san: String) throws -> (HTTPServer, UInt16) {
            try start(
                "tls_server_config: {cert_file: \(certs.valid.certificate), key_file: \(certs.valid.key), "
                    + "client_auth_type: RequireAndVerifyClientCert, client_ca_file: \(certs.caFile), client_allowed_sans: [\(san)]}\n"
            )
        }
        let args = ["--cacert", certs.caFile, "--cert", certs.client.certificate, "--key", certs.client.key]
        let (allowed, port) = try serve("prometheus.rx-test")
        defer { allowed.shutdown() }
        #expect(try curl(args + ["https://127.0.0.1:\(port)/-/healthy"]).1.hasPrefix("HTTP/1.1 200"))
        let (other, port2) = try serve("grafana.rx-test")
        defer { other.shutdown() }
        #expect(try curl(args + ["https://127.0.0.1:\(port2)/-/healthy"]).0 != 0, "a SAN not in the list: refused")
    }

    @Test func aChangedFileTakesEffectAndABrokenEditKeepsTheLastGood() async throws {
        let first = try #require(PasswordHash.bcrypt("one", cost: 4))
        let second = try #require(PasswordHash.bcrypt("two", cost: 4))
        let (server, port) = try start("basic_auth_users:\n  rx: \(first)\n")
        defer { server.shutdown() }
        let url = "http://127.0.0.1:\(port)/-/healthy"
        #expect(try curl(["-u", "rx:one", url]).1.hasPrefix("HTTP/1.1 200"))
        _ = write("basic_auth_users:\n  rx: \(second)\n")
        // Waiting off the cooperative pool (2 threads here): a blocking sleep stalls every test beside it.
        try await Task.sleep(for: .milliseconds(1100))
        #expect(
            try curl(["-u", "rx:two", url]).1.hasPrefix("HTTP/1.1 200"), "the new password works without a restart")
        #expect(try curl(["-u", "rx:one", url]).1.hasPrefix("HTTP/1.1 401"))
        _ = write("basic_auth_users:\n  rx: not-a-hash\n")
        try await Task.sleep(for: .milliseconds(1100))
        #expect(
            try curl(["-u", "rx:two", url]).1.hasPrefix("HTTP/1.1 200"), "a broken edit keeps the last good settings")
    }

    /// Found by a hostile review: truncating the web config at run time turned TLS and basic
    /// auth off. Such a reload is refused like a broken file, and an empty file at start too.
    @Test func aReloadThatTurnsProtectionOffIsRefused() async throws {
        let hash = try #require(PasswordHash.bcrypt("pw", cost: 4))
        let full =
            "tls_server_config: {cert_file: \(certs.valid.certificate), key_file: \(certs.valid.key)}\nbasic_auth_users:\n  rx: \(hash)\n"
        let (server, port) = try start(full)
        defer { server.shutdown() }
        let url = "https://127.0.0.1:\(port)/-/healthy"
        let ca = ["--cacert", certs.caFile]
        #expect(try curl(ca + ["-u", "rx:pw", url]).1.hasPrefix("HTTP/1.1 200"))
        for (cut, why) in [
            ("", "emptied"),
            (
                "tls_server_config: {cert_file: \(certs.valid.certificate), key_file: \(certs.valid.key)}\n",
                "users dropped"
            ),
            ("basic_auth_users:\n  rx: \(hash)\n", "TLS dropped"),
        ] {
            _ = write(cut)
            try await Task.sleep(for: .milliseconds(1100))
            #expect(try curl(ca + [url]).1.hasPrefix("HTTP/1.1 401"), "\(why): still a password")
            #expect(try curl(["http://127.0.0.1:\(port)/-/healthy"]).1.contains("HTTPS server"), "\(why): still TLS")
        }
        #expect(Self.error(write(""))?.contains("an empty file") == true)
        #expect(WebSecurity.downgrade(from: try WebConfig.load(path: write(full)), to: WebConfig()) == "TLS")
    }

    /// Found by a second review: a reload from RequireAndVerifyClientCert to a weaker mode, or
    /// cut before client_allowed_sans, turned client-certificate checks off.
    @Test func weakeningClientCertificatesIsADowngrade() throws {
        func config(_ auth: TLSServerContext.ClientAuth?, sans: [String] = []) throws -> WebConfig {
            var c = WebConfig()
            guard let auth else { return c }
            var text = "tls_server_config:\n  cert_file: \(certs.valid.certificate)\n  key_file: \(certs.valid.key)\n"
            text += "  client_auth_type: \(auth.rawValue)\n  client_ca_file: \(certs.caFile)\n"
            if !sans.isEmpty { text += "  client_allowed_sans: [\(sans.joined(separator: ", "))]\n" }
            c = try WebConfig.load(path: write(text, name: "c\(UInt32.random(in: 0...UInt32.max)).yml"))
            return c
        }
        let strict = try config(.requireAndVerify, sans: ["good"])
        #expect(WebSecurity.downgrade(from: strict, to: try config(.request, sans: [])) != nil)
        #expect(WebSecurity.downgrade(from: strict, to: try config(.requireAny, sans: ["good"])) != nil)
        #expect(WebSecurity.downgrade(from: strict, to: try config(.verifyIfGiven)) != nil)
        #expect(WebSecurity.downgrade(from: strict, to: try config(.requireAndVerify)) == "client_allowed_sans")
        #expect(WebSecurity.downgrade(from: strict, to: try config(.requireAndVerify, sans: ["other"])) == nil)
        #expect(WebSecurity.downgrade(from: try config(.request), to: try config(.requireAndVerify)) == nil)
        #expect(WebSecurity.cost("$2b$12$abc") == 12 && WebSecurity.cost("junk") == 0)
    }

    /// The exporter-toolkit's own examples load unchanged: its docs/web-config.yml (files next to
    /// it, users; with `basic_auth_excluded_paths` as proposed there, our extension) and its
    /// inline-PEM shape (`cert: |`, `key: |`, as in its testdata), here with this suite's
    /// certificates. The excluded paths are
    /// served without a password; everything else still needs one.
    @Test func theToolkitExamplesLoad() throws {
        let pem = { (path: String) throws -> String in
            try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map { "    \($0)" }
                .joined(separator: "\n")
        }
        let inline = write(
            """
            tls_server_config:
              cert: |
            \(try pem(certs.valid.certificate))
              key: |
            \(try pem(certs.valid.key))
              client_auth_type: "VerifyClientCertIfGiven"
              client_ca: |
            \(try pem(certs.caFile))

            """, name: "inline.yml")
        let loaded = try WebConfig.load(path: inline)
        #expect(loaded.tls?.settings.clientAuth == .verifyIfGiven)
        #expect(loaded.files == [inline], "inline PEM reads no other file")

        let hash = try #require(PasswordHash.bcrypt("pw", cost: 4))
        _ = FileManager.default.createFile(
            atPath: "\(dir.path)/server.crt", contents: FileManager.default.contents(atPath: certs.valid.certificate))
        _ = FileManager.default.createFile(
            atPath: "\(dir.path)/server.key", contents: FileManager.default.contents(atPath: certs.valid.key))
        let documented = write(
            """
            # TLS and basic authentication configuration example.
            #
            # Additionally, a certificate and a key file are needed.
            tls_server_config:
              cert_file: server.crt
              key_file: server.key

            # Usernames and passwords required to connect.
            basic_auth_users:
              alice: \(hash)
              bob: \(hash)

            # Exclude /-/healthy and /-/ready from basic authentication
            basic_auth_excluded_paths:
            - /-/healthy
            - /-/ready

            """, name: "web-config.yml")
        let config = try WebConfig.load(path: documented)
        #expect(config.tls != nil && config.users.count == 2)
        #expect(config.authExcludedPaths == ["/-/healthy", "/-/ready"])
        let security = try WebSecurity(path: documented, logger: Logger(level: .error))
        let running = security.current()
        #expect(security.authorize(HTTPRequest(method: "GET", target: "/-/healthy"), config: running) == .allow)
        #expect(security.authorize(HTTPRequest(method: "GET", target: "/-/ready?x=1"), config: running) == .allow)
        #expect(security.authorize(HTTPRequest(method: "GET", target: "/metrics"), config: running) == .unauthorized)
        #expect(security.authorize(HTTPRequest(method: "GET", target: "/-/healthy/"), config: running) == .unauthorized)
        // Excluding one more path while users are configured is a weakening a reload refuses.
        var wider = config
        wider.authExcludedPaths.insert("/metrics")
        #expect(WebSecurity.downgrade(from: config, to: wider) == "basic auth on /metrics")
        #expect(WebSecurity.downgrade(from: wider, to: config) == nil)
        let bad = write("basic_auth_excluded_paths: [metrics]\n", name: "bad.yml")
        #expect(
            Self.error(bad)
                == "\(bad):1:29: basic_auth_excluded_paths[0]: expected a path such as /-/healthy, found \"metrics\"")
    }

    /// Found by a hostile review: a flood of wrong passwords from one address locked out the
    /// real scraper (a global limit). An address block that has not failed has one check on
    /// credit, then shares the failing blocks' rate (`BcryptBudget`); an unknown user costs the
    /// same bcrypt as a known one (so timing tells nothing), and counts against the same bound.
    @Test func aFloodFromOneClientDoesNotLockOutAnother() throws {
        let hash = try #require(PasswordHash.bcrypt("pw", cost: 4))
        let security = try WebSecurity(path: write("basic_auth_users:\n  rx: \(hash)\n"), logger: Logger(level: .error))
        let config = security.current()
        func request(_ user: String, _ password: String) -> HTTPRequest {
            let token = Base64.encode(Array("\(user):\(password)".utf8))
            return HTTPRequest(method: "GET", target: "/metrics", headers: [("Authorization", "Basic \(token)")])
        }
        var outcomes: [WebSecurity.Decision] = []
        for _ in 0..<8 {
            outcomes.append(security.authorize(request("rx", "guess"), config: config, client: "10.0.0.66"))
        }
        #expect(outcomes.first == .unauthorized)
        #expect(outcomes.contains(.busy), "the flooding client is bounded")
        #expect(security.authorize(request("rx", "pw"), config: config, client: "10.0.0.1") == .allow)
        let fresh = try WebSecurity(path: write("basic_auth_users:\n  rx: \(hash)\n"), logger: Logger(level: .error))
        var unknown: [WebSecurity.Decision] = []
        for _ in 0..<6 {
            unknown.append(fresh.authorize(request("nobody", "pw"), config: config, client: "10.0.0.7"))
        }
        #expect(unknown.first == .unauthorized)
        #expect(unknown.contains(.busy), "an unknown user is checked (and bounded) like a known one")
    }

    // MARK: - Hostile TLS clients

    /// A TLS server with a short handshake deadline, for the hostile clients below.
    func startTLS(requestTimeout: Duration) throws -> (HTTPServer, UInt16) {
        var options = HTTPServer.Options()
        options.requestTimeout = requestTimeout
        options.maxConnectionsPerIP = options.maxConnections
        return try start(
            "tls_server_config: {cert_file: \(certs.valid.certificate), key_file: \(certs.valid.key)}\n",
            options: options)
    }

    /// The first bytes of a ClientHello: a handshake record of 512 bytes announced, 6 sent.
    static let clientHelloStart: [UInt8] = [0x16, 0x03, 0x01, 0x02, 0x00, 0x01]

    /// Waits (bounded) until the server holds `count` connections or fewer.
    func waitForConnections(_ server: HTTPServer, atMost count: Int, within: Duration) -> Bool {
        let clock = ContinuousClock()
        let end = clock.now + within
        while clock.now < end {
            if server.activeConnections <= count { return true }
            usleep(20_000)
        }
        return server.activeConnections <= count
    }

    @Test func garbageBeforeTheClientHelloIsClosedAtOnce() throws {
        let (server, port) = try startTLS(requestTimeout: .seconds(5))
        defer { server.shutdown() }
        for garbage in ["GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", "\u{0}\u{1}\u{2}\u{3}\u{4}\u{5}\u{6}\u{7}"] {
            let c = try RawTCPClient(port: port, timeoutMS: 3000)
            c.send(garbage)
            let clock = ContinuousClock()
            let start = clock.now
            let (text, closed) = c.read()
            #expect(closed && !text.contains("demo_value"), "closed, nothing served: \(text.prefix(80))")
            // Refused on the first record, not at the handshake deadline (5 s).
            #expect(clock.now - start < .seconds(2))
        }
        #expect(waitForConnections(server, atMost: 0, within: .seconds(2)))
    }

    @Test func halfOpenAndTrickledHandshakesEndAtTheDeadline() throws {
        let (server, port) = try startTLS(requestTimeout: .milliseconds(600))
        defer { server.shutdown() }
        let clock = ContinuousClock()
        let start = clock.now
        let halfOpen = try RawTCPClient(port: port, timeoutMS: 4000)
        halfOpen.send(Self.clientHelloStart)
        let silent = try RawTCPClient(port: port, timeoutMS: 4000)
        // A trickle: one byte of the announced record every 100 ms; the deadline counts from the
        // start of the handshake, not from the last byte, so the trickle does not extend it.
        let trickle = try RawTCPClient(port: port, timeoutMS: 4000)
        trickle.send(Self.clientHelloStart)
        var trickleClosedAt: Duration?
        for _ in 0..<30 {
            usleep(100_000)
            trickle.send([0x03])
            var probe = pollfd(fd: trickle.fd, events: Int16(POLLIN), revents: 0)
            if poll(&probe, 1, 0) > 0 {
                trickleClosedAt = clock.now - start
                break
            }
        }
        #expect(halfOpen.read().closed && silent.read().closed)
        let trickleTime = try #require(trickleClosedAt, "a trickled handshake was still open after 3 s")
        #expect(trickleTime < .seconds(2), "\(trickleTime)")
        #expect(waitForConnections(server, atMost: 0, within: .seconds(1)))
    }

    @Test func aClientVanishingMidHandshakeIsForgottenAtOnce() throws {
        let (server, port) = try startTLS(requestTimeout: .seconds(10))
        defer { server.shutdown() }
        for _ in 0..<50 {
            let c = try RawTCPClient(port: port)
            c.send(Self.clientHelloStart)
        }  // each client is closed here: its descriptor goes, mid-handshake
        #expect(waitForConnections(server, atMost: 0, within: .seconds(2)), "\(server.activeConnections) left")
    }

    /// Hundreds of half-open handshakes hold a descriptor each; a real client's scrape over TLS
    /// is still answered at once, and they all end at the deadline.
    @Test func halfOpenHandshakesCannotTakeTheEndpointAway() throws {
        let (server, port) = try startTLS(requestTimeout: .seconds(3))
        defer { server.shutdown() }
        var slow: [RawTCPClient] = []
        for i in 0..<300 {
            let c = try RawTCPClient(port: port)
            if i % 2 == 0 { c.send(Self.clientHelloStart) }
            slow.append(c)
        }
        usleep(100_000)
        let clock = ContinuousClock()
        let start = clock.now
        let (status, body) = try curl(["--cacert", certs.caFile, "https://127.0.0.1:\(port)/metrics"])
        #expect(status == 0 && body.hasPrefix("HTTP/1.1 200") && body.contains("demo_value"), "\(body.prefix(200))")
        // A hang bound, not a performance claim: the scrape does not wait for the deadline.
        #expect(clock.now - start < .seconds(2))
        #expect(server.activeConnections >= 300)
        #expect(waitForConnections(server, atMost: 0, within: .seconds(5)), "\(server.activeConnections) left")
        #expect(slow[0].read().closed)
    }
}
