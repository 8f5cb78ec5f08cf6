import Foundation
import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// DNS over HTTPS against a real DoH server: Debian's dnsdist (DoH over HTTP/1.1 through h2o)
/// in a namespace the test creates, answering from its own rules with no upstream:
/// `www.example.com` is 192.0.2.7, `portal.example.com` 10.0.0.7 (what a portal would say),
/// every other name NXDOMAIN. The prober runs on a `NetnsExecutor`, so its sockets are made in
/// the namespace, where only loopback exists.
@Suite(.serialized) struct DoHNamespaceTests {
    static let port = 8443

    /// dnsdist started in `netns` with the test CA's `valid` certificate (127.0.0.1, ::1,
    /// localhost); stopped (by PID) when released.
    final class DoHServer {
        let process = Process()
        let directory: String

        init(in netns: ScratchNetns, certificates: TestCertificates) throws {
            directory =
                FileManager.default.temporaryDirectory.appendingPathComponent("rx-doh-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let conf = """
                setSecurityPollSuffix("")
                addDOHLocal("127.0.0.1:\(DoHNamespaceTests.port)", "\(certificates.valid.certificate)", "\(certificates.valid.key)", "/dns-query")
                addAction(QNameRule("www.example.com."), SpoofAction({"192.0.2.7"}))
                addAction(QNameRule("portal.example.com."), SpoofAction({"10.0.0.7"}))
                addAction(AllRule(), RCodeAction(DNSRCode.NXDOMAIN))

                """
            guard FileManager.default.createFile(atPath: "\(directory)/dnsdist.conf", contents: Data(conf.utf8)) else {
                throw TestSupportError("cannot write dnsdist.conf")
            }
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [
                "ip", "netns", "exec", netns.name, "dnsdist", "--supervised", "--disable-syslog", "-C",
                "\(directory)/dnsdist.conf",
            ]
            process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
            process.standardError = FileHandle(forWritingAtPath: "/dev/null")
            try process.run()
            // Ready when it listens (at most 10 s).
            for _ in 0..<100 {
                if (try? netns.run(["sh", "-c", "ss -Hltn 'sport = :\(DoHNamespaceTests.port)' | grep -q ."])) != nil {
                    return
                }
                guard process.isRunning else { break }
                Thread.sleep(forTimeInterval: 0.1)
            }
            stop()
            throw TestSupportError(
                "dnsdist did not listen on :\(DoHNamespaceTests.port) (is Debian's dnsdist installed?)")
        }

        func stop() {
            // SIGKILL: a child of the test process may inherit a mask that blocks SIGTERM.
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
            try? FileManager.default.removeItem(atPath: directory)
        }

        deinit { stop() }
    }

    /// Runs one round of a DoH probe of `name` inside a namespace served by dnsdist.
    static func probe(
        _ name: String, path: String = "/dns-query", caFile: String? = nil, insecure: Bool = false,
        expect: DNSAnswerExpectation? = nil
    ) async throws -> ProbeResult {
        let certificates = try TestCertificates.shared()
        let netns = try ScratchNetns()
        defer { netns.remove() }
        try netns.run(["ip", "link", "set", "lo", "up"])
        let server = try DoHServer(in: netns, certificates: certificates)
        defer { server.stop() }
        let config = try DoHProbeConfig(
            name: name, url: "https://127.0.0.1:\(port)\(path)", expectAnswer: expect,
            caFile: insecure ? nil : (caFile ?? certificates.caFile), insecureSkipVerify: insecure)
        let executor = try NetnsExecutor(namespacePath: netns.path)
        defer { executor.shutdown() }
        let meter = TrafficMeter()
        return await withTaskExecutorPreference(executor) {
            await TrafficMeter.$current.withValue(meter) {
                await DoHProber(config: config).probe(deadline: .now + .seconds(3))
            }
        }
    }

    @Test func anAnswerOverVerifiedHTTPSSucceeds() async throws {
        let r = try await Self.probe("www.example.com", expect: .addresses(["192.0.2.7"]))
        #expect(r.status == .success, "\(r.detail)")
        #expect(r.dns?.addresses == ["192.0.2.7"] && r.dns?.transport == "https" && r.dns?.rcode == 0)
        #expect(r.address == "127.0.0.1" && r.family == .ipv4)
        #expect(r.http?.statusCode == 200 && r.http?.tlsVersion != nil && r.http?.certificateNotAfter != nil)
        #expect(r.phases[.tls] != nil && r.phases[.connect] != nil, "\(r.phases)")
    }

    @Test func nxdomainIsTheDNSProbesReason() async throws {
        let r = try await Self.probe("nowhere.example.com")
        #expect(r.status == .failure && r.reason == .nxdomain, "\(r.detail)")
        #expect(r.detail.contains("NXDOMAIN"), "\(r.detail)")
    }

    @Test func aPrivateAnswerIsAPortal() async throws {
        let r = try await Self.probe("portal.example.com")
        #expect(r.status == .portal && r.reason == .privateAddress, "\(r.detail)")
    }

    @Test func anAnswerOutsideTheExpectationFails() async throws {
        let r = try await Self.probe("www.example.com", expect: .addresses(["192.0.2.8"]))
        #expect(r.reason == .answerMismatch, "\(r.detail)")
    }

    /// The server's certificate is not trusted by the system's store: the round fails at TLS.
    @Test func anUntrustedCertificateFailsAtTLS() async throws {
        let r = try await Self.probe("www.example.com", caFile: "/etc/ssl/certs/ca-certificates.crt")
        #expect(r.status == .failure && r.reason == .tls, "\(r.detail)")
    }

    @Test func anotherPathIsAnHTTPStatus() async throws {
        let r = try await Self.probe("www.example.com", path: "/nope")
        #expect(r.status == .failure && r.reason == .httpStatus, "\(r.detail)")
        #expect(r.detail.contains("www.example.com @https://127.0.0.1"), "\(r.detail)")
    }
}
