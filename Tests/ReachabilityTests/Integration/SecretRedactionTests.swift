import Foundation
import Glibc
import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// Found by a hostile review (#41): a probe URL's `user:password` and a scalar
/// `basic_auth_users` were quoted by check-config, flag errors, the start error, the reload log
/// line and the 500 body of `POST /-/reload`. Every path now shows `<credentials>` or the
/// value's shape. All probes target 127.0.0.1.
@Suite(.serialized) struct SecretRedactionTests {
    static let secret = "s3cret"
    static let url = "http://alice:s3cret@127.0.0.1:1/"
    static let urlProbe = "probes:\n  - name: a\n    type: http\n    target: \(url)\n"
    static let scalarUsers = "basic_auth_users: \"alice:s3cret\"\n"

    @Test func errorsAreBuiltWithoutTheSecret() throws {
        do throws(ConfigError) {
            _ = try ConfigLoader.parse(Array(Self.urlProbe.utf8), file: "rx.yml")
            Issue.record("loaded")
        } catch {
            #expect(!error.description.contains(Self.secret), "\(error)")
            #expect(error.description.contains("http://<credentials>@127.0.0.1:1/"), "\(error)")
        }
        do throws(ConfigError) {
            _ = try WebConfig.parse(Array(Self.scalarUsers.utf8), file: "web.yml")
            Issue.record("loaded")
        } catch {
            #expect(
                error.description
                    == "web.yml:1:19: basic_auth_users: expected a map of user name: bcrypt hash, found a string (not shown: it may be a secret)"
            )
        }
        do throws(ConfigError) {
            _ = try WebConfig.parse(Array("basic_auth_users:\n  \"alice:s3cret\": x\n".utf8), file: "web.yml")
            Issue.record("loaded")
        } catch { #expect(!error.description.contains(Self.secret), "\(error)") }
        #expect(!UsageError("invalid value \(Self.url.debugDescription)").description.contains(Self.secret))
        #expect(!ProbeConfigError(.target, "bad \(Self.url)").description.contains(Self.secret))
        #expect(
            Redaction.userinfo(in: "a https://u:p@h:1/x and ftp://q@r")
                == "a https://<credentials>@h:1/x and ftp://<credentials>@r")
        // A hand-written password may hold "/", "?" or "#" (found by review: quoted in full).
        for url in ["http://user:pa#ss@proxy:3128", "http://user:p/w?x@proxy:3128/", "\"http://u:a#b@h\" is bad"] {
            let shown = Redaction.userinfo(in: url)
            #expect(!shown.contains("pa#ss") && !shown.contains("p/w?x") && !shown.contains("a#b"), "\(shown)")
            #expect(shown.contains("<credentials>@"), "\(shown)")
        }
        // Headers that may carry a credential stay with their origin across redirects.
        for name in ["Authorization", "Cookie", "X-API-Key", "X-Auth-Token", "PRIVATE-TOKEN", "X-Session-Id"] {
            #expect(HTTPProbeConfig.isCredentialHeader(name), "\(name)")
        }
        #expect(!HTTPProbeConfig.isCredentialHeader("X-Probe") && !HTTPProbeConfig.isCredentialHeader("Accept"))
        #expect(Redaction.isSecret(path: "probes[0].http.headers.Authorization"))
        #expect(Redaction.isSecret(path: "tls_server_config.key") && !Redaction.isSecret(path: "probes[0].target"))
    }

    @Test func checkConfigFlagsAndStartShowNoSecret() throws {
        let dir = ScratchDirectory()
        let file = dir.path + "/rx.yml"
        let web = dir.path + "/web.yml"
        try Self.urlProbe.write(toFile: file, atomically: true, encoding: .utf8)
        try Self.scalarUsers.write(toFile: web, atomically: true, encoding: .utf8)
        let runs: [([String], Int32)] = [
            (["check-config", file], 78),
            (["--probe.http=\(Self.url)", "--web.listen-address=127.0.0.1:0"], 64),
            (["--probe.http.proxy-url=http://alice:s3cret@127.0.0.1:99999/", "--probe.http=http://127.0.0.1:1/"], 64),
            (["--config.file=\(file)", "--web.listen-address=127.0.0.1:0"], 78),
            (["--probe.tcp=127.0.0.1:1", "--web.config.file=\(web)", "--web.listen-address=127.0.0.1:0"], 78),
        ]
        for (args, status) in runs {
            let run = try ExporterProcess.run(args)
            #expect(run.status == status, "\(args): \(run.stderr)")
            #expect(!(run.stdout + run.stderr).contains(Self.secret), "\(args): \(run.stdout)\(run.stderr)")
            #expect(!run.stderr.isEmpty, "\(args)")
        }
    }

    @Test func reloadLogAndBodyShowNoSecret() throws {
        let listener = try TCPTestListener()
        defer { listener.stop() }
        let dir = ScratchDirectory()
        let file = dir.path + "/rx.yml"
        let web = dir.path + "/web.yml"
        let good = "probes:\n  - name: a\n    type: tcp\n    target: \"127.0.0.1:\(listener.address.port)\"\n"
        try good.write(toFile: file, atomically: true, encoding: .utf8)
        try "basic_auth_excluded_paths: []\n".write(toFile: web, atomically: true, encoding: .utf8)
        let exporter = try ExporterProcess([
            "--web.listen-address=127.0.0.1:0", "--config.file=\(file)", "--web.config.file=\(web)",
            "--web.enable-lifecycle", "--no-path.monitor",
        ])
        let port = try exporter.waitListening()
        try Self.urlProbe.write(toFile: file, atomically: true, encoding: .utf8)
        let posted = try ConfigEndToEndTests.request(port, "POST", "/-/reload")
        #expect(posted.status == 500, "\(posted)")
        #expect(posted.body.contains("<credentials>") && !posted.body.contains(Self.secret), "\(posted.body)")
        try exporter.waitForLog("configuration reload failed")
        // The web configuration is read again when it changes: its failure is logged too.
        try Self.scalarUsers.write(toFile: web, atomically: true, encoding: .utf8)
        // It is re-read at most once a second, when a connection comes: knock until it is (bounded).
        for _ in 0..<60 where !exporter.stderr.contains("web configuration not reloaded") {
            _ = try? exporter.get("/metrics")
            usleep(100_000)
        }
        try exporter.waitForLog("basic_auth_users: expected a map of user name: bcrypt hash, found a string")
        #expect(!exporter.stderr.contains(Self.secret), "\(exporter.stderr)")
        _ = try exporter.stop()
    }
}
