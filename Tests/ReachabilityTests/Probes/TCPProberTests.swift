import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

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

    // MARK: - What a handshake proves (docs/evidence.md)

    /// A box that completes every handshake (the canary port connects too) voids the probe:
    /// `intercepted`; a canary that is refused, as on a real server, leaves it a success.
    @Test func aCanaryThatConnectsMeansTheHandshakeWasIntercepted() async throws {
        let target = try TCPTestListener(host: "127.0.0.1")
        let canary = try TCPTestListener(host: "127.0.0.1")
        defer {
            target.stop()
            canary.stop()
        }
        let intercepted = await TCPProber(
            config: try TCPProbeConfig(target: target.address.description, canaryPort: canary.address.port)
        ).probe(deadline: .now + .seconds(3))
        #expect(intercepted.status == .failure && intercepted.reason == .intercepted, "\(intercepted.detail)")
        #expect(intercepted.detail.contains("port \(canary.address.port) (which no server offers) connected too"))
        #expect(canary.accepted(reaching: 1) == 1)
        let closed = try TCPTestListener(host: "127.0.0.1", listening: false)
        let real = await TCPProber(
            config: try TCPProbeConfig(target: target.address.description, canaryPort: closed.address.port)
        ).probe(deadline: .now + .seconds(3))
        #expect(real.status == .success, "\(real.detail)")
        // canary_port 0 in the file is no canary; a canary on the target's own port is none either.
        #expect(try TCPProbeConfig(target: "127.0.0.1:22", canaryPort: nil).canaryPort == nil)
        #expect(try TCPProbeConfig(target: "127.0.0.1:1").canaryPort == nil)
        #expect(try TCPProbeConfig(target: "127.0.0.1:22").canaryPort == 1)
        #expect(try TCPProbeConfig(target: "127.0.0.1:443").canaryPort == nil, "local evidence anyway")
    }

    /// With `expect`, the server's first bytes decide: its banner proves; a silent socket (what a
    /// middlebox gives), a closed one or another banner is `banner_mismatch`. No canary then.
    @Test func anExpectedBannerDecides() async throws {
        let ssh = try TCPTestListener(host: "127.0.0.1", greeting: Array("SSH-2.0-OpenSSH_9.2\r\n".utf8))
        let silent = try TCPTestListener(host: "127.0.0.1", holdsOpen: true)
        let web = try TCPTestListener(host: "127.0.0.1", greeting: Array("HTTP/1.1 400 Bad Request\r\n\u{1B}[2J".utf8))
        let closes = try TCPTestListener(host: "127.0.0.1")
        defer {
            for l in [ssh, silent, web, closes] { l.stop() }
        }
        func probe(_ l: TCPTestListener) async throws -> ProbeResult {
            let config = try TCPProbeConfig(target: l.address.description, expect: "^SSH-2\\.0-")
            #expect(config.canaryPort == nil)
            return await TCPProber(config: config).probe(deadline: .now + .milliseconds(500))
        }
        let good = try await probe(ssh)
        #expect(good.status == .success, "\(good.detail)")
        #expect(good.detail.hasSuffix(#", banner "SSH-2.0-OpenSSH_9.2" matches /^SSH-2\.0-/"#), "\(good.detail)")
        let quiet = try await probe(silent)
        #expect(quiet.reason == .bannerMismatch, "\(quiet.detail)")
        #expect(quiet.detail.contains("but no byte came before the deadline"), "\(quiet.detail)")
        let other = try await probe(web)
        #expect(other.reason == .bannerMismatch)
        #expect(other.detail.contains(#"its banner "HTTP/1.1 400 Bad Request" does not match"#), "\(other.detail)")
        let closed = try await probe(closes)
        #expect(closed.detail.contains("before the server closed the connection"), "\(closed.detail)")
        #expect(throws: ProbeConfigError.self) { try TCPProbeConfig(target: "127.0.0.1:22", expect: "(unclosed") }
    }
}
