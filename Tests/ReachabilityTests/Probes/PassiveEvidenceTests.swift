import Glibc
import ReachabilityTestSupport
import Synchronization
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// Passive evidence's rules, pure: what counts, what is receiving, stalled or quiet, per scope.
@Suite struct PassiveEvidenceTests {
    static func socket(
        to destination: [UInt8] = [203, 0, 113, 9], from source: [UInt8] = [198, 51, 100, 2],
        state: UInt8 = TCPSocketInfo.established, retransmits: UInt8 = 0, unacked: UInt32 = 0,
        lastReceived: UInt32 = 100, bytes: UInt64? = 5000, bound: UInt32 = 0
    ) -> TCPSocketInfo {
        TCPSocketInfo(
            family: destination.count == 4 ? .ipv4 : .ipv6, state: state, source: source, destination: destination,
            sourcePort: 40000, destinationPort: 443, boundInterface: bound, retransmits: retransmits,
            unacked: unacked, lastDataReceived: lastReceived, lastAckReceived: lastReceived, bytesReceived: bytes,
            totalRetransmits: UInt32(retransmits))
    }

    static let settings = PassiveEvidence.Settings(freshness: .seconds(10), stallRetransmits: 2)

    @Test func eachConnectionIsReceivingStalledQuietOrNotCounted() {
        func kind(_ s: TCPSocketInfo) -> PassiveEvidence.Kind? { PassiveEvidence.classify(s, settings: Self.settings) }
        #expect(kind(Self.socket()) == .receiving)
        #expect(kind(Self.socket(lastReceived: 10_001)) == .quiet, "older than the window")
        #expect(kind(Self.socket(bytes: 0)) == .quiet, "never received anything")
        #expect(kind(Self.socket(retransmits: 3, unacked: 2, lastReceived: 12_000)) == .stalled)
        #expect(
            kind(Self.socket(retransmits: 1, unacked: 2, lastReceived: 12_000)) == .quiet, "one timeout is not a stall")
        #expect(kind(Self.socket(retransmits: 3, unacked: 0, lastReceived: 12_000)) == .quiet, "nothing outstanding")
        #expect(kind(Self.socket(retransmits: 3, unacked: 2, lastReceived: 50)) == .receiving, "data still comes in")
        #expect(kind(Self.socket(state: TCPSocketInfo.synSent, retransmits: 1)) == .stalled, "a SYN sent again")
        #expect(kind(Self.socket(state: TCPSocketInfo.synSent)) == nil, "a connection just starting")
        for local: [UInt8] in [[10, 1, 2, 3], [192, 168, 1, 1], [127, 0, 0, 1], [172, 20, 0, 1], [100, 64, 0, 1]] {
            #expect(kind(Self.socket(to: local)) == nil, "\(local): not beyond the gateway")
        }
    }

    @Test func publicMeansBeyondEveryLocalRange() {
        let v6 = { (s: String) in SocketAddress(ip: s)!.addressBytes }
        for a in ["2001:db8::1", "2606:4700::1111", "::ffff:203.0.113.1"] {
            #expect(PassiveEvidence.isPublic(v6(a)), "\(a)")
        }
        for a in ["::1", "::", "fe80::1", "fd00::1", "fc00::1", "ff02::1", "::ffff:10.0.0.1"] {
            #expect(!PassiveEvidence.isPublic(v6(a)), "\(a)")
        }
        #expect(PassiveEvidence.isPublic([8, 8, 8, 8]) && !PassiveEvidence.isPublic([224, 0, 0, 1]))
        #expect(!PassiveEvidence.isPublic([1, 2, 3]), "a short address counts as nothing")
    }

    @Test func scopesGroupBySourceAddressOrBoundInterface() {
        let sockets = [
            Self.socket(from: [198, 51, 100, 2]),  // eth0, receiving
            Self.socket(from: [100, 64, 0, 7], retransmits: 4, unacked: 1, lastReceived: 30_000),  // wwan0, stalled
            Self.socket(from: [0, 0, 0, 0], lastReceived: 20_000, bound: 7),  // bound to wwan0, quiet
            Self.socket(
                to: SocketAddress(ip: "2001:db8::9")!.addressBytes,
                from: SocketAddress(ip: "2001:db8:1::2")!.addressBytes),
            Self.socket(to: [192, 168, 1, 10]),  // not counted
        ]
        let s = PassiveEvidence.summarize(
            sockets, settings: Self.settings, uplinks: ["eth0", "wwan0", "wlan0"],
            interfaceOfAddress: [[198, 51, 100, 2]: "eth0", [100, 64, 0, 7]: "wwan0"], interfaceOfIndex: [7: "wwan0"])
        #expect(s[.overall] == PassiveSummary(receiving: 2, stalled: 1, quiet: 1, freshestReceive: .milliseconds(100)))
        #expect(s[.family(.ipv4)]?.receiving == 1 && s[.family(.ipv6)]?.receiving == 1)
        #expect(s[.uplink("eth0")] == PassiveSummary(receiving: 1, freshestReceive: .milliseconds(100)))
        #expect(s[.uplink("wwan0")] == PassiveSummary(stalled: 1, quiet: 1, freshestReceive: .seconds(20)))
        #expect(s[.uplink("wwan0")]?.isStalling == true && s[.uplink("eth0")]?.isStalling == false)
        #expect(s[.uplink("wlan0")] == PassiveSummary(), "an uplink with no connection: zeros, not absent")
    }

    /// The dump decoder reads kernel bytes: truncated or lying lengths end a datagram, never crash.
    @Test func theDecoderSurvivesArbitraryBytes() {
        var generator = SystemRandomNumberGenerator()
        var out: [TCPSocketInfo] = []
        for size in [0, 3, 16, 20, 72, 88, 200, 4096] {
            for _ in 0..<300 {
                var bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
                if size >= 16 {
                    // Mostly plausible headers: a socket message whose length is in or past the buffer.
                    bytes.withUnsafeMutableBytes {
                        $0.storeBytes(of: UInt32.random(in: 0...UInt32(size + 8)), toByteOffset: 0, as: UInt32.self)
                        $0.storeBytes(of: SockDiag.sockDiagByFamily, toByteOffset: 4, as: UInt16.self)
                    }
                }
                _ = bytes.withUnsafeBytes { SockDiag.decode($0, into: &out) }
            }
        }
        // A well-formed message: one IPv4 socket with tcp_info.
        let size = 16 + 72 + 4 + 232
        var m = [UInt8](repeating: 0, count: size)
        m.withUnsafeMutableBytes { r in
            r.storeBytes(of: UInt32(size), toByteOffset: 0, as: UInt32.self)
            r.storeBytes(of: SockDiag.sockDiagByFamily, toByteOffset: 4, as: UInt16.self)
            r[16] = 2  // AF_INET
            r[17] = 1  // established
            r.storeBytes(of: UInt16(443).bigEndian, toByteOffset: 16 + 6, as: UInt16.self)
            for (i, b) in [203, 0, 113, 9].enumerated() { r[16 + 24 + i] = UInt8(b) }
            r.storeBytes(of: UInt16(236), toByteOffset: 16 + 72, as: UInt16.self)
            r.storeBytes(of: SockDiag.inetDiagInfo, toByteOffset: 16 + 74, as: UInt16.self)
            let t = 16 + 76
            r[t + 2] = 3  // retransmits
            r.storeBytes(of: UInt32(2), toByteOffset: t + 24, as: UInt32.self)
            r.storeBytes(of: UInt32(4321), toByteOffset: t + 52, as: UInt32.self)
            r.storeBytes(of: UInt64(99), toByteOffset: t + 128, as: UInt64.self)
        }
        var one: [TCPSocketInfo] = []
        #expect(m.withUnsafeBytes { SockDiag.decode($0, into: &one) } == .more)
        #expect(one.count == 1)
        #expect(one.first?.destination == [203, 0, 113, 9] && one.first?.destinationPort == 443)
        #expect(one.first?.retransmits == 3 && one.first?.unacked == 2 && one.first?.lastDataReceived == 4321)
        #expect(one.first?.bytesReceived == 99)
        // The same connection on a dual-stack IPv6 socket (::ffff:…) is an IPv4 one.
        let mappedSize = 16 + 72
        var v6 = [UInt8](repeating: 0, count: mappedSize)
        v6.withUnsafeMutableBytes { r in
            r.storeBytes(of: UInt32(mappedSize), toByteOffset: 0, as: UInt32.self)
            r.storeBytes(of: SockDiag.sockDiagByFamily, toByteOffset: 4, as: UInt16.self)
            r[16] = 10  // AF_INET6
            r[17] = 1
            for base in [16 + 8, 16 + 24] {
                r[base + 10] = 0xFF
                r[base + 11] = 0xFF
            }
            for (i, b) in [198, 51, 100, 2].enumerated() { r[16 + 8 + 12 + i] = UInt8(b) }
            for (i, b) in [203, 0, 113, 9].enumerated() { r[16 + 24 + 12 + i] = UInt8(b) }
        }
        var mapped: [TCPSocketInfo] = []
        _ = v6.withUnsafeBytes { SockDiag.decode($0, into: &mapped) }
        #expect(mapped.first?.family == .ipv4 && mapped.first?.destination == [203, 0, 113, 9])
        #expect(mapped.first?.source == [198, 51, 100, 2])
    }

    /// This process's own sockets (its probes') are never evidence: the read leaves them out.
    @Test func theExportersOwnConnectionsAreLeftOut() throws {
        let listener = try TCPTestListener(holdsOpen: true)
        defer { listener.stop() }
        let port = listener.address.port
        let client = try RawTCPClient(port: port)
        _ = listener.accepted(reaching: 1)
        let all = try SockDiag.tcpSockets()
        let own = SockDiag.ownSocketInodes()
        let mine = all.filter { $0.sourcePort == port || $0.destinationPort == port }
        #expect(mine.count >= 2, "both ends of the loopback connection are in the dump")
        #expect(mine.allSatisfy { own.contains($0.inode) }, "\(mine.map(\.inode)) not in \(own.count) own inodes")
        guard case .success(let others) = PassiveWatch.readOthers() else {
            Issue.record("read failed")
            return
        }
        #expect(!others.contains { $0.sourcePort == port || $0.destinationPort == port })
        withExtendedLifetime(client) {}
    }
}

/// The service: metrics per scope, and one re-check when a scope begins to stall.
@Suite struct PassiveWatchTests {
    @Test func aStallStartsOneRoundAndTheMetricsSayIt() async throws {
        let script = Mutex<[[TCPSocketInfo]]>([
            [PassiveEvidenceTests.socket()],
            [PassiveEvidenceTests.socket(retransmits: 3, unacked: 1, lastReceived: 15_000)],
            [PassiveEvidenceTests.socket(retransmits: 4, unacked: 1, lastReceived: 16_000)],
            [PassiveEvidenceTests.socket()],
        ])
        let rechecks = Atomic<Int>(0)
        let registry = MetricsRegistry()
        let watch = PassiveWatch(
            config: PassiveConfig(mode: .observe, interval: .milliseconds(200)), path: OpenPathGate(),
            logger: Logger(level: .error), uplinks: { [] }, recheck: { rechecks.add(1, ordering: .relaxed) },
            publish: PassiveMetrics(registry: registry).publish,
            read: { .success(script.withLock { $0.count > 1 ? $0.removeFirst() : $0[0] }) })
        let task = Task { try await watch.run() }
        defer { task.cancel() }
        var lines: [String] = []
        for _ in 0..<40 {
            try await Task.sleep(for: .milliseconds(100))
            if script.withLock({ $0.count }) == 1 {
                lines = RecorderReloadTests.lines(registry, "reachability_passive_connections{scope=\"overall\"")
                if lines.contains("reachability_passive_connections{scope=\"overall\",state=\"receiving\"} 1") { break }
            }
        }
        #expect(rechecks.load(ordering: .relaxed) == 1, "stalling twice in a row re-checks once")
        #expect(lines.contains("reachability_passive_connections{scope=\"overall\",state=\"receiving\"} 1"), "\(lines)")
        #expect(
            RecorderReloadTests.lines(registry, "reachability_passive_stall_rechecks_total") == [
                "reachability_passive_stall_rechecks_total 1"
            ])
        #expect(
            RecorderReloadTests.lines(registry, "reachability_passive_sockets") == ["reachability_passive_sockets 1"])
    }

    /// Stalls that come and go re-check at most once per gap (the probe interval).
    @Test func rechecksAreSpacedByTheGap() async throws {
        for (gap, expected) in [(Duration.zero, 2), (.seconds(60), 1)] {
            let stall = PassiveEvidenceTests.socket(retransmits: 3, unacked: 1, lastReceived: 15_000)
            let script = Mutex<[[TCPSocketInfo]]>([[stall], [PassiveEvidenceTests.socket()], [stall], []])
            let rechecks = Atomic<Int>(0)
            let watch = PassiveWatch(
                config: PassiveConfig(mode: .observe, interval: .milliseconds(200)), path: OpenPathGate(),
                logger: Logger(level: .error), uplinks: { [] }, recheck: { rechecks.add(1, ordering: .relaxed) },
                publish: { _ in }, recheckGap: { gap },
                read: { .success(script.withLock { $0.count > 1 ? $0.removeFirst() : $0[0] }) })
            let task = Task { try await watch.run() }
            for _ in 0..<40 where script.withLock({ $0.count }) > 1 { try await Task.sleep(for: .milliseconds(100)) }
            try await Task.sleep(for: .milliseconds(300))
            task.cancel()
            #expect(rechecks.load(ordering: .relaxed) == expected, "gap \(gap)")
        }
    }
}
