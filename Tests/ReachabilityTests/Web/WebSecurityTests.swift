import Foundation
import ReachabilityTestSupport
import Testing

@testable import Reachability

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
    }

    /// Runs curl (loopback only) and returns its exit status and output (headers and body).
    func curl(_ args: [String]) throws -> (Int32, String) {
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

    func start(_ config: String) throws -> (HTTPServer, UInt16) {
        let security = try WebSecurity(path: write(config), logger: Logger(level: .error))
        let registry = MetricsRegistry()
        for i in 0..<200 { registry.gauge("demo_value", help: "A value.", labels: ["k"]).labels("v\(i)").set(42) }
        let routes = WebRoutes(registry: registry)
        let server = try HTTPServer(
            listen: ListenAddress(host: "127.0.0.1", port: 0), security: security, logger: Logger(level: .error)
        ) { routes.handle($0) }
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
        #expect(plainStatus != 0 && !plain.contains("demo_value"), "plain HTTP on the TLS port gets no metrics")
        let (_, gz) = try curl(["--cacert", certs.caFile, "-u", "rx:s3cret", "--compressed", url])
        #expect(
            gz.contains("Content-Encoding: gzip") && gz.contains("Vary: Accept-Encoding") && gz.contains("demo_value"))
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

    @Test func aChangedFileTakesEffectAndABrokenEditKeepsTheLastGood() throws {
        let first = try #require(PasswordHash.bcrypt("one", cost: 4))
        let second = try #require(PasswordHash.bcrypt("two", cost: 4))
        let (server, port) = try start("basic_auth_users:\n  rx: \(first)\n")
        defer { server.shutdown() }
        let url = "http://127.0.0.1:\(port)/-/healthy"
        #expect(try curl(["-u", "rx:one", url]).1.hasPrefix("HTTP/1.1 200"))
        _ = write("basic_auth_users:\n  rx: \(second)\n")
        usleep(1_100_000)
        #expect(
            try curl(["-u", "rx:two", url]).1.hasPrefix("HTTP/1.1 200"), "the new password works without a restart")
        #expect(try curl(["-u", "rx:one", url]).1.hasPrefix("HTTP/1.1 401"))
        _ = write("basic_auth_users:\n  rx: not-a-hash\n")
        usleep(1_100_000)
        #expect(
            try curl(["-u", "rx:two", url]).1.hasPrefix("HTTP/1.1 200"), "a broken edit keeps the last good settings")
    }
}
