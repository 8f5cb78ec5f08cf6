import ReachabilityTestSupport
import Synchronization
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// Every kind's prober keeps the `Prober` contract (Probes/Prober.swift): against a target that
/// never answers it ends by its deadline with a failure (a `timeout`, or its own word for it), it ends at once when cancelled, it
/// reports its own type, and what it sent is charged to the round's `TrafficMeter`. The cases
/// are the kinds' types (`ProbeKind.all`): a new kind fails here until it has a silent target.
@Suite struct ProberContractTests {
    static let types = ProbeKind.all.flatMap(\.types)

    /// A prober of `type` aimed at something that never answers (held open by `hold` until the
    /// test ends): a listener that accepts and says nothing, a DNS server that keeps silent, an
    /// address the test namespace drops.
    static func silentProber(
        _ type: ProbeType, engine: ICMPEngine, hold: inout [AnyObject]
    ) throws -> any Prober {
        switch type {
        case .http, .https:
            let server = try LoopbackHTTPServer(behavior: .silent)
            hold.append(server)
            return HTTPProber(try HTTPProbeConfig(url: "\(type.rawValue)://127.0.0.1:\(server.port)/"))
        case .tcp:
            let server = try LoopbackHTTPServer(behavior: .silent)
            hold.append(server)
            return TCPProber(config: try TCPProbeConfig(target: "127.0.0.1:\(server.port)", expect: "^SSH-"))
        case .dns:
            let server = try DNSTestServer(behaviour: .silence)
            hold.append(server)
            return DNSProber(
                config: try DNSProbeConfig(name: "example.com", server: "127.0.0.1:\(server.address.port)"))
        case .icmp:
            return ICMPProber(.init(host: "127.0.2.1", count: 1, mode: .raw), engine: engine)
        case .mtu:
            return MTUProber(.init(host: "127.0.2.1", mode: .raw), engine: engine)
        case .doh:
            let server = try LoopbackHTTPServer(behavior: .silent)
            hold.append(server)
            return DoHProber(
                config: try DoHProbeConfig(name: "example.com", url: "https://127.0.0.1:\(server.port)/dns-query"))
        }
    }

    static let dropRules = """
        table inet t {
          chain in { type filter hook input priority 0; policy accept;
            ip daddr 127.0.2.0/24 icmp type echo-request drop
          }
        }
        """

    @Test(arguments: types)
    func aSilentTargetEndsByTheDeadlineChargedAndTyped(type: ProbeType) async throws {
        try await withICMPNamespace { ns async throws in
            try ns.nft(Self.dropRules)
            let engine = ICMPEngine(networkNamespace: ns.path)
            defer { engine.close() }
            var hold: [AnyObject] = []
            let prober = try Self.silentProber(type, engine: engine, hold: &hold)
            #expect(prober.type == type)
            let meter = TrafficMeter()
            let start = ContinuousClock.now
            let result = await TrafficMeter.$current.withValue(meter) {
                await prober.probe(deadline: start + .milliseconds(400))
            }
            let elapsed = ContinuousClock.now - start
            // A timeout, or the kind's own word for silence (TCP: connected, but no banner).
            #expect(result.status == .failure && result.reason != nil, "\(type): \(result.detail)")
            #expect(type == .tcp || result.reason == .timeout, "\(type): \(result.detail)")
            #expect(elapsed < .milliseconds(1_400), "\(type) ended \(elapsed) after a 400 ms deadline")
            #expect(meter.total.sentPackets > 0, "\(type): what it sent is charged to the round")
            withExtendedLifetime(hold) {}
        }
    }

    @Test(arguments: types)
    func aCancelledRoundEndsAtOnce(type: ProbeType) async throws {
        try await withICMPNamespace { ns async throws in
            try ns.nft(Self.dropRules)
            let engine = ICMPEngine(networkNamespace: ns.path)
            defer { engine.close() }
            var hold: [AnyObject] = []
            let prober = try Self.silentProber(type, engine: engine, hold: &hold)
            let start = ContinuousClock.now
            let round = Task { await prober.probe(deadline: .now + .seconds(20)) }
            try await Task.sleep(for: .milliseconds(200))
            round.cancel()
            let result = await round.value
            #expect(ContinuousClock.now - start < .seconds(5), "\(type) ended long before its deadline")
            #expect(!result.succeeded, "\(type): \(result.detail)")
            withExtendedLifetime(hold) {}
        }
    }
}
