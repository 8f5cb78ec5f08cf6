import Foundation
import Glibc
import ReachabilityTestSupport
import Synchronization
import Testing

/// The built binary against a loopback HTTP server whose behaviour the test switches.
@Suite(.serialized) struct ReachabilityEndToEndTests {
    enum Mode: Int { case noContent, loginPage, silent }

    final class Switch: Sendable {
        let mode = Atomic<Int>(Mode.noContent.rawValue)
        func set(_ m: Mode) { mode.store(m.rawValue, ordering: .relaxed) }
        var behavior: LoopbackHTTPBehavior {
            LoopbackHTTPBehavior { [self] c in
                switch Mode(rawValue: mode.load(ordering: .relaxed))! {
                case .noContent: LoopbackHTTPBehavior.status(204).run(c)
                case .loginPage:
                    LoopbackHTTPBehavior.status(200, body: "<html><form action=/login>Sign in</form></html>").run(c)
                case .silent: LoopbackHTTPBehavior.silent.run(c)
                }
            }
        }
    }

    static func value(_ metrics: String, _ series: String) -> Double? {
        for line in metrics.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }

    static func state(_ metrics: String) -> String? {
        ["unknown", "none", "portal", "limited", "full"].first {
            value(metrics, "reachability_connectivity_state{state=\"\($0)\"}") == 1
        }
    }

    /// Scrapes until the state is `want`; returns every (state, failures+portal signals) seen on the way.
    func waitForState(_ exporter: ExporterProcess, _ want: String, counting: (String) -> Double, timeout: Double = 30)
        throws -> [(String, Double)]
    {
        var seen: [(String, Double)] = []
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let m = try exporter.get("/metrics").body
            if let s = Self.state(m) {
                seen.append((s, counting(m)))
                if s == want { return seen }
            }
            usleep(50_000)
        }
        throw TestFailure("state \(want) not reached in \(timeout) s; saw \(seen.suffix(5))")
    }

    @Test func verdictFollowsTheServer() throws {
        let sw = Switch()
        let server = try LoopbackHTTPServer(behavior: sw.behavior)
        defer { server.stop() }
        let url = server.url("/generate_204")
        let exporter = try ExporterProcess([
            "--web.listen-address=127.0.0.1:0", "--no-path.monitor", "--probe.trust-local-targets",
            "--probe.http=\(url)",
            "--probe.interval=500ms", "--probe.timeout=300ms", "--probe.fail-after=2",
            "--probe.recover-after=2", "--probe.fast-recheck=0",
        ])
        try exporter.waitListening()
        let target = "{probe=\"http\",target=\"\(url)\"}"
        let failures: (String) -> Double = { m in
            (Self.value(m, "reachability_probe_failures_total{probe=\"http\",target=\"\(url)\",reason=\"timeout\"}")
                ?? 0)
                + (Self.value(
                    m,
                    "reachability_probe_portal_signals_total{probe=\"http\",target=\"\(url)\",reason=\"http_status\"}")
                    ?? 0)
        }
        _ = try waitForState(exporter, "full", counting: failures)

        sw.set(.loginPage)
        let toPortal = try waitForState(exporter, "portal", counting: failures)
        // Hysteresis: never portal before two portal rounds.
        #expect(toPortal.allSatisfy { $0.0 != "portal" || $0.1 >= 2 }, "\(toPortal)")

        sw.set(.noContent)
        _ = try waitForState(exporter, "full", counting: failures)

        sw.set(.silent)
        let before = failures(try exporter.get("/metrics").body)
        let toLimited = try waitForState(exporter, "limited", counting: failures)
        #expect(toLimited.allSatisfy { $0.0 != "limited" || $0.1 - before >= 2 }, "\(toLimited)")

        sw.set(.noContent)
        _ = try waitForState(exporter, "full", counting: failures)

        let m = try exporter.get("/metrics").body
        #expect(Self.value(m, "reachability_state_transitions_total{from=\"full\",to=\"portal\"}") == 1)
        #expect(Self.value(m, "reachability_state_transitions_total{from=\"portal\",to=\"full\"}") == 1)
        #expect(Self.value(m, "reachability_state_transitions_total{from=\"full\",to=\"limited\"}") == 1)
        #expect(Self.value(m, "reachability_state_transitions_total{from=\"limited\",to=\"full\"}") == 1)
        #expect(Self.value(m, "reachability_internet_reachable") == 1)
        #expect((Self.value(m, "reachability_probes_total\(target)") ?? 0) >= 8)
        #expect(Self.value(m, "reachability_http_status_code\(target)") == 204)
        #expect(m.contains("reachability_connectivity_info{scope=\"overall\",state=\"full\",reason=\"\"} 1"))
        try Promtool.checkMetrics(m)
        #expect(try exporter.stop().status == 0)
    }

    @Test func checkExitCodes() throws {
        let sw = Switch()
        let server = try LoopbackHTTPServer(behavior: sw.behavior)
        defer { server.stop() }
        let base = [
            "check", "--no-path.monitor", "--probe.trust-local-targets", "--probe.http=\(server.url("/"))",
            "--probe.timeout=300ms", "--probe.interval=1s",
        ]
        let full = try ExporterProcess.run(base)
        #expect(full.status == 0, "\(full.stdout)")
        #expect(full.stdout.hasPrefix("full\n"))
        sw.set(.loginPage)
        let portal = try ExporterProcess.run(base)
        #expect(portal.status == 3, "\(portal.stdout)")
        #expect(portal.stdout.hasPrefix("portal (http_status)"))
        sw.set(.silent)
        let limited = try ExporterProcess.run(base + ["--output=json"])
        #expect(limited.status == 2, "\(limited.stdout)")
        #expect(limited.stdout.hasPrefix("{\"state\":\"limited\",\"reason\":\"timeout\""))
    }

    @Test func checkSaysNoneWithoutARouteInsideANamespace() throws {
        let ns = "rx-e2e-\(getpid())"
        guard shell("ip netns add \(ns) && ip -n \(ns) link set lo up") == 0 else {
            throw TestFailure("cannot create a network namespace (needs root)")
        }
        defer { _ = shell("ip netns del \(ns)") }
        // Only loopback (which never counts as a path): the path decides `none` without any traffic.
        let r = try ExporterProcess.run(
            ["--probe.tcp=127.0.0.1:9"].reduce(["exec", ns, ExporterProcess.binaryPath, "check"]) { $0 + [$1] },
            executable: "/usr/sbin/ip", prefix: ["netns"])
        #expect(r.status == 4, "\(r.stdout) \(r.stderr)")
        #expect(r.stdout.hasPrefix("none (no_interface)"), "\(r.stdout)")
        #expect(r.stdout.contains("no path"), "the probe was not sent: \(r.stdout)")
    }

    @Test func refusesPublicDefaultsUnderTheHarness() throws {
        let r = try ExporterProcess.run(["--web.listen-address=127.0.0.1:0"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("refusing to probe the public default targets"))
        let c = try ExporterProcess.run(["check"])
        #expect(c.status == 64)
    }
}

@discardableResult
func shell(_ command: String) -> Int32 {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/bin/sh")
    p.arguments = ["-c", command]
    p.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
    p.standardError = FileHandle(forWritingAtPath: "/dev/null")
    guard (try? p.run()) != nil else { return -1 }
    p.waitUntilExit()
    return p.terminationStatus
}
