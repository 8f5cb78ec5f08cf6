import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// What real probes against loopback servers count on their meter (the byte-exact comparison
/// with an nftables counter is the uplink lab's, `scripts/lab uplinks`).
@Suite struct ProbeTrafficTests {
    @Test(arguments: ["127.0.0.1", "::1"])
    func aTCPConnectCountsItsHandshakeAndClose(host: String) async throws {
        let listener = try TCPTestListener(host: host)
        defer { listener.stop() }
        let prober = TCPProber(config: try TCPProbeConfig(target: listener.address.description))
        let meter = TrafficMeter()
        let r = await TrafficMeter.$current.withValue(meter) { await prober.probe(deadline: .now + .seconds(3)) }
        #expect(r.status == .success, "\(r.detail)")
        let t = meter.total
        let header: UInt64 = host == "::1" ? 40 + 20 : 20 + 20
        // SYN, ACK, then FIN and the last ACK (or a FIN after the peer's), and ACKs of what the
        // listener sent before the close: 3 to 6 out; SYN-ACK, maybe the listener's byte and
        // its FIN, and the answer to ours: 2 to 5 in (CI saw both ends of these ranges).
        #expect((3...6).contains(t.sentPackets) && (2...5).contains(t.receivedPackets), "\(t)")
        #expect(t.sentBytes >= t.sentPackets * header && t.sentBytes <= t.sentPackets * (header + 12) + 20, "\(t)")
        #expect(t.receivedBytes >= t.receivedPackets * header, "\(t)")
    }

    @Test func aRefusedConnectCountsItsSYNAndTheReset() async throws {
        let bound = try TCPTestListener(host: "127.0.0.1", listening: false)
        let prober = TCPProber(config: try TCPProbeConfig(target: bound.address.description))
        let meter = TrafficMeter()
        let r = await TrafficMeter.$current.withValue(meter) { await prober.probe(deadline: .now + .seconds(3)) }
        #expect(r.reason == .refused)
        #expect(meter.total.sentPackets >= 1 && meter.total.sentBytes >= 60, "\(meter.total)")
    }

    @Test func aDNSQueryOverUDPCountsEachDatagramWithItsHeaders() async throws {
        let server = try DNSTestServer(host: "127.0.0.1", behaviour: .answer(["192.0.2.7"]))
        defer { server.stop() }
        let config = try DNSProbeConfig(
            name: "www.example.com", queryType: .a, server: server.address.description, allowPrivateAnswers: false,
            retransmitInterval: .seconds(2))
        let meter = TrafficMeter()
        let r = await TrafficMeter.$current.withValue(meter) {
            await DNSProber(config: config).probe(deadline: .now + .seconds(3))
        }
        #expect(r.status == .success, "\(r.detail)")
        let t = meter.total
        // One query: 12 header + the name (17) + type and class (4), an OPT record maybe; 28 of headers.
        #expect(t.sentPackets == 1 && t.receivedPackets == 1, "\(t)")
        #expect(t.sentBytes >= 28 + 33 && t.sentBytes <= 28 + 33 + 11, "\(t)")
        #expect(t.receivedBytes > t.sentBytes, "the answer repeats the question and adds a record: \(t)")
    }

    @Test func echoesCountOnlyWhatWasSent() async throws {
        let engine = ICMPEngine()
        defer { engine.close() }
        let meter = TrafficMeter()
        let outcome = await TrafficMeter.$current.withValue(meter) {
            await engine.echo(to: SocketAddress(ip: "127.0.0.1")!, mode: .raw, deadline: .now + .seconds(3))
        }
        guard case .reply = outcome else {
            Issue.record("no reply: \(outcome)")
            return
        }
        #expect(meter.total == TrafficCount(sentPackets: 1, sentBytes: 84, receivedPackets: 1, receivedBytes: 84))
        // Outside a probe nothing counts anywhere.
        _ = await engine.echo(to: SocketAddress(ip: "127.0.0.1")!, mode: .raw, deadline: .now + .seconds(3))
        #expect(meter.total.sentPackets == 1)
    }
}
