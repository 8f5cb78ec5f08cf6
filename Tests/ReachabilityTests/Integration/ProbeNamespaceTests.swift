import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// Faults that loopback cannot produce, made inside network namespaces each test creates and
/// deletes (`ScratchNetns`). The probe runs on a `NetnsExecutor`, whose thread has entered the
/// namespace, so the prober's sockets are created there. Targets are loopback addresses of the
/// namespace: even if a socket were created outside by mistake, nothing would leave the host
/// (and the test would fail, seeing `refused` instead of the fault).
@Suite(.serialized) struct ProbeNamespaceTests {
    /// Runs one round of `prober` inside `netns`.
    private func probeInside(_ netns: ScratchNetns, _ prober: some Prober, budget: Duration) async throws -> (
        result: ProbeResult, elapsed: Duration
    ) {
        let executor = try NetnsExecutor(namespacePath: netns.path)
        defer { executor.shutdown() }
        return await withTaskExecutorPreference(executor) { await timedProbe(prober, budget: budget) }
    }

    @Test(arguments: ["127.0.0.1", "::1"])
    func droppedSYNTimesOut(host: String) async throws {
        let netns = try ScratchNetns()
        defer { netns.remove() }
        try netns.run(["ip", "link", "set", "lo", "up"])
        try netns.run(
            ["nft", "-f", "-"],
            input: "table inet rx { chain in { type filter hook input priority 0; tcp dport 9 drop; }; }")
        let target = HostPort(host: host, port: 9).description
        let budget = Duration.milliseconds(500)
        let (r, elapsed) = try await probeInside(
            netns, TCPProber(config: try TCPProbeConfig(target: target)), budget: budget)
        #expect(r.reason == .timeout, "\(r.detail)")
        #expect(r.address == host)
        #expect(elapsed >= budget)
        #expect(elapsed <= budget + dnsDeadlineSlack, "took \(elapsed)")
    }

    @Test(arguments: ["127.0.0.1", "::1"])
    func noRouteIsUnreachable(host: String) async throws {
        // A fresh namespace has lo down and no routes at all, not even to loopback.
        let netns = try ScratchNetns()
        defer { netns.remove() }
        let target = HostPort(host: host, port: 9).description
        let budget = Duration.seconds(2)
        let (tcp, tcpElapsed) = try await probeInside(
            netns, TCPProber(config: try TCPProbeConfig(target: target)), budget: budget)
        #expect(tcp.reason == .unreachable, "\(tcp.detail)")
        #expect(tcpElapsed < budget)
        let dns = DNSProber(
            config: try DNSProbeConfig(name: "www.example.com", server: HostPort(host: host, port: 53).description))
        let (d, dnsElapsed) = try await probeInside(netns, dns, budget: budget)
        #expect(d.reason == .unreachable, "\(d.detail)")
        #expect(dnsElapsed < budget)
    }

    @Test func droppedDNSQueryTimesOut() async throws {
        let netns = try ScratchNetns()
        defer { netns.remove() }
        try netns.run(["ip", "link", "set", "lo", "up"])
        try netns.run(
            ["nft", "-f", "-"],
            input: "table inet rx { chain in { type filter hook input priority 0; udp dport 53 drop; }; }")
        let dns = DNSProber(
            config: try DNSProbeConfig(
                name: "www.example.com", server: "127.0.0.1", retransmitInterval: .milliseconds(100)))
        let budget = Duration.milliseconds(500)
        let (r, elapsed) = try await probeInside(netns, dns, budget: budget)
        #expect(r.reason == .timeout, "\(r.detail)")
        #expect(r.detail.contains("no reply to 3 queries"))
        // Two thirds of the budget over UDP, then the TCP fallback finds no server.
        #expect(r.detail.contains("over TCP too"), "\(r.detail)")
        #expect(elapsed >= budget * 2 / 3 && elapsed <= budget + dnsDeadlineSlack, "took \(elapsed)")
    }
}
