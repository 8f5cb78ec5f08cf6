import Foundation
import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// The library's front door, against loopback servers (no path monitor: the test host's own
/// network is not what is measured).
@Suite struct ReachabilityFrontDoorTests {
    func lab(_ probes: [Probe], mode: ProbeMode = .parallel, trust: Bool = true) -> Reachability {
        var c = Reachability.Configuration(
            probes: probes, probeMode: mode, timeout: .seconds(2), interval: .milliseconds(300),
            pathMonitoring: false)
        c.trustsLocalTargets = trust
        return Reachability(configuration: c)
    }

    @Test func checkIsOneRoundWithTheSeedsFields() async throws {
        let server = try LoopbackHTTPServer(behavior: .status(204))
        defer { server.stop() }
        let status = await lab([.http(server.url("/generate_204"))]).check()
        #expect(status.state == .full)
        #expect(status.isReachable)
        #expect(status.reason == nil)
        #expect(status.connectionType == .unknown)  // no path monitor
        #expect(status.probes.map(\.result.status) == [.success])
    }

    @Test func aLoopbackAnswerProvesNothingUnlessTrusted() async throws {
        let server = try LoopbackHTTPServer(behavior: .status(204))
        defer { server.stop() }
        let status = await lab([.http(server.url("/generate_204"))], trust: false).check()
        #expect(status.state == .limited)
        #expect(status.reason == .unproven)
        #expect(!status.isReachable)
    }

    @Test func aPortalIsAPortal() async throws {
        let server = try LoopbackHTTPServer(behavior: .openNDSPortal())
        defer { server.stop() }
        let status = await lab([.http(server.url("/generate_204"))]).check()
        #expect(status.state == .portal)
        #expect(status.reason == .probe(.redirect))
    }

    @Test func badProbesAreReportedAndFailWithTheirReason() async {
        let r = lab([.http("ftp://nowhere/"), .dns("1.2.3.4"), .tcp("host", port: 0)])
        #expect(r.configuration.problems.count == 3, "\(r.configuration.problems)")
        let status = await r.check()
        #expect(status.probes.allSatisfy { $0.result.reason == .error })
        #expect(status.state == .limited)
    }

    @Test func theStreamRunsWhileSubscribedAndStopsWhenTheLastOneGoes() async throws {
        let listener = try TCPTestListener()
        defer { listener.stop() }
        let r = lab([.tcp("127.0.0.1", port: listener.address.port)])
        #expect(!r.isMonitoring)
        let first = Task { () -> [ConnectivityState] in
            var seen: [ConnectivityState] = []
            for await s in r.statusStream {
                seen.append(s.state)
                if seen.count == 2 { break }
            }
            return seen
        }
        let second = Task { () -> ConnectivityState? in
            for await s in r.statusStream { return s.state }
            return nil
        }
        #expect(await first.value == [.full, .full])
        #expect(await second.value == .full)
        // Both ended: monitoring stops (bounded wait, not a timing claim).
        for _ in 0..<400 where r.isMonitoring { try await Task.sleep(for: .milliseconds(10)) }
        #expect(!r.isMonitoring)
    }

    @Test func theDefaultSetIsTheExportersDefaultProbes() throws {
        #expect(Reachability.Configuration.default.probes.map(\.name) == Probe.defaultSet.map(\.name))
        let flags = try FlagParser(ProbeFlags.specs).parse(ProbeFlags.defaultArguments)
        let fromFlags = try ProbeFlags.probes(flags, environment: [:])
        #expect(fromFlags.map(\.name) == Probe.defaultSet.map(\.name))
        #expect(fromFlags.map(\.type) == Probe.defaultSet.map(\.spec.type))
    }

    @Test func probeModesMapToPolicies() {
        #expect(ProbeMode.parallel.policy == .parallel)
        #expect(ProbeMode.httpOnly.policy == .http)
        #expect(ProbeMode.icmpOnly.policy == .icmp)
        #expect(ProbeMode.quorum(2).policy == .quorum(minimum: 2, fraction: nil))
    }

    /// The README's library section is the example program, character for character.
    @Test func theReadmeShowsTheExampleAsBuilt() throws {
        let root = RepositoryRoot.url
        let example = try String(
            contentsOf: root.appendingPathComponent("Examples/EmbedReachability/main.swift"), encoding: .utf8)
        #expect(ReadmeTests.readme.contains("```swift\n" + example + "```"))
        #expect(example.split(separator: "\n", omittingEmptySubsequences: false).count <= 30)
    }
}
