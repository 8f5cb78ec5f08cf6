import ReachabilityTestSupport
import Testing

@testable import Reachability

@Suite struct TCPProberTests {
    private func prober(_ target: String, family: FamilyPreference = .any, interface: String? = nil) throws -> TCPProber
    {
        TCPProber(config: try TCPProbeConfig(target: target, family: family, interface: interface))
    }

    @Test(arguments: ["127.0.0.1", "::1"])
    func connectsToListener(host: String) async throws {
        let listener = try TCPTestListener(host: host)
        defer { listener.stop() }
        let budget = Duration.seconds(3)
        let (r, elapsed) = await timedProbe(try prober(listener.address.description), budget: budget)
        #expect(r.status == .success, "\(r.detail)")
        #expect(r.reason == nil)
        #expect(r.address == host)
        #expect(r.family == listener.address.ipFamily)
        #expect(r.phases[.resolve] != nil && r.phases[.connect] != nil)
        #expect(elapsed < budget)
    }

    @Test(arguments: ["127.0.0.1", "::1"])
    func closedPortIsRefused(host: String) async throws {
        let bound = try TCPTestListener(host: host, listening: false)
        let budget = Duration.seconds(3)
        let (r, elapsed) = await timedProbe(try prober(bound.address.description), budget: budget)
        #expect(r.status == .failure)
        #expect(r.reason == .refused, "\(r.detail)")
        #expect(r.address == host)
        #expect(elapsed < budget)
    }

    @Test func localhostNameWithIPv4Family() async throws {
        let listener = try TCPTestListener(host: "127.0.0.1")
        defer { listener.stop() }
        let budget = Duration.seconds(3)
        let (r, elapsed) = await timedProbe(
            try prober("localhost:\(listener.address.port)", family: .ipv4), budget: budget)
        #expect(r.status == .success, "\(r.detail)")
        #expect(r.address == "127.0.0.1" && r.family == .ipv4)
        #expect(elapsed < budget + dnsDeadlineSlack)
    }

    @Test func addressesAreTriedInOrder() async throws {
        let closed = try TCPTestListener(host: "::1", listening: false)
        let open = try TCPTestListener(host: "127.0.0.1")
        defer { open.stop() }
        let p = try prober("localhost:1")
        let start = ContinuousClock.now
        let r = await p.connectFirst(
            of: [closed.address, open.address], start: start, phases: [:], deadline: start + .seconds(3))
        #expect(r.status == .success, "\(r.detail)")
        #expect(r.address == "127.0.0.1")
        let both = await p.connectFirst(
            of: [closed.address, closed.address], start: start, phases: [:], deadline: .now + .seconds(3))
        #expect(both.reason == .refused)
        #expect(both.detail.components(separatedBy: "Connection refused").count == 3, "\(both.detail)")
    }

    @Test func boundToInterface() async throws {
        let listener = try TCPTestListener(host: "127.0.0.1")
        defer { listener.stop() }
        let (r, _) = await timedProbe(try prober(listener.address.description, interface: "lo"), budget: .seconds(3))
        #expect(r.status == .success, "\(r.detail)")
        let (e, elapsed) = await timedProbe(
            try prober(listener.address.description, interface: "rxnosuch0"), budget: .seconds(3))
        #expect(e.reason == .error, "\(e.detail)")
        #expect(e.detail.contains("SO_BINDTODEVICE"))
        #expect(elapsed < .seconds(1))
    }

    @Test func passedDeadlineFailsAtOnce() async throws {
        let listener = try TCPTestListener(host: "127.0.0.1")
        defer { listener.stop() }
        let r = await (try prober(listener.address.description)).probe(deadline: .now - .milliseconds(1))
        #expect(r.reason == .timeout, "\(r.detail)")
    }

    @Test func manyRoundsAgainstOneListener() async throws {
        // The prober closes each connection and the listener accepts them all, so every round
        // succeeds (a listener that never accepted would fill its backlog and time out).
        let listener = try TCPTestListener(host: "127.0.0.1")
        defer { listener.stop() }
        let p = try prober(listener.address.description)
        for round in 0..<100 {
            let (r, _) = await timedProbe(p, budget: .seconds(5))
            #expect(r.status == .success, "round \(round): \(r.detail)")
            if r.status != .success { break }
        }
    }
}
