import CShim
import Glibc
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// ICMP behaviour that needs a network namespace of its own: ping sockets (the sysctl is per
/// namespace), missing permissions, firewall drops and rejects, and missing routes. Sockets are
/// opened inside the namespace with `setns` on a short-lived thread (`ICMPEngine(networkNamespace:)`),
/// so the test process itself never moves. Each namespace holds only loopback.
@Suite struct ICMPNamespaceTests {
    static func probe(
        _ host: String, _ engine: ICMPEngine, mode: ICMPSocketMode, count: Int = 1,
        within timeout: Duration = .seconds(5)
    ) async -> ProbeResult {
        let p = ICMPProber(.init(host: host, count: count, spacing: .milliseconds(2), mode: mode), engine: engine)
        return await p.probe(deadline: .now + timeout)
    }

    @Test(arguments: [("127.0.0.1", IPFamily.ipv4), ("::1", .ipv6)])
    func datagramSocketsWhereTheSysctlAllowsThem(host: String, family: IPFamily) async throws {
        try await withICMPNamespace(allowPingSockets: true) { ns async throws in
            let engine = ICMPEngine(networkNamespace: ns.path)
            defer { engine.close() }
            #expect(try engine.socketKind(family: family, mode: .auto) == .datagram, "auto prefers ping sockets")
            let r = await Self.probe(host, engine, mode: .datagram, count: 3)
            #expect(r.status == .success, "\(r.detail)")
            #expect(r.icmp?.received == 3)
            #expect(r.icmp?.ttl == 64, "TTL / hop limit from IP_RECVTTL / IPV6_RECVHOPLIMIT in a fresh namespace")
        }
    }

    @Test func datagramRefusedWithoutTheSysctlAndAutoFallsBackToRaw() async throws {
        try await withICMPNamespace(allowPingSockets: false) { ns async throws in
            let engine = ICMPEngine(networkNamespace: ns.path)
            defer { engine.close() }
            let r = await Self.probe("127.0.0.1", engine, mode: .datagram)
            #expect(r.reason == .permission)
            #expect(r.detail.contains("ping_group_range=\"0 2147483647\""), "\(r.detail)")
            #expect(try engine.socketKind(family: .ipv4, mode: .auto) == .raw)
            let auto = await Self.probe("127.0.0.1", engine, mode: .auto)
            #expect(auto.status == .success, "\(auto.detail)")
        }
    }

    @Test func neitherPingNorRawSocketsGivesAPermissionErrorThatSaysHowToFixIt() async throws {
        try await withICMPNamespace(allowPingSockets: false) { ns async throws in
            let path = ns.path
            // CAP_NET_RAW (13) dropped on the opening thread only: it acts like an unprivileged daemon.
            let engine = ICMPEngine { domain, type, proto in
                do throws(Errno) {
                    return try NetworkNamespace.onDedicatedThread(
                        namespace: path, prepare: { _ = cshim_drop_thread_capability(13) }
                    ) {
                        ICMPEngine.openSocket(domain, type, proto)
                    }
                } catch {
                    return .failure(error)
                }
            }
            defer { engine.close() }
            #expect(throws: ICMPSocketError.self) { try engine.socketKind(family: .ipv4, mode: .auto) }
            let r = await Self.probe("127.0.0.1", engine, mode: .auto)
            #expect(r.status == .failure && r.reason == .permission)
            #expect(r.detail.contains("net.ipv4.ping_group_range"), "\(r.detail)")
            #expect(
                r.detail.contains("cap_net_raw") && r.detail.contains("AmbientCapabilities=CAP_NET_RAW"), "\(r.detail)")
            #expect(r.icmp?.sent == 0)
        }
    }

    @Test(arguments: [ICMPSocketMode.raw, .datagram])
    func droppedRequestsTimeOutAtTheDeadline(mode: ICMPSocketMode) async throws {
        try await withICMPNamespace(allowPingSockets: true) { ns async throws in
            try ns.nft(
                """
                table inet t {
                  chain in { type filter hook input priority 0; policy accept;
                    icmp type echo-request drop
                    icmpv6 type echo-request drop
                  }
                }
                """)
            let engine = ICMPEngine(networkNamespace: ns.path)
            defer { engine.close() }
            for host in ["127.0.0.1", "::1"] {
                let start = ContinuousClock.now
                let r = await Self.probe(host, engine, mode: mode, count: 3, within: .milliseconds(600))
                let elapsed = ContinuousClock.now - start
                #expect(r.status == .failure && r.reason == .timeout, "\(host): \(r.detail)")
                // On a loaded machine a spaced echo may find the short deadline already gone: not sent.
                #expect((r.icmp?.sent ?? 0) >= 1 && r.icmp?.received == 0)
                #expect(elapsed >= .milliseconds(590) && elapsed < .milliseconds(2600), "\(elapsed)")
                let family: IPFamily = host == "::1" ? .ipv6 : .ipv4
                #expect(
                    try engine.socket(family: family, mode: mode, interface: nil).pendingCount == 0,
                    "timed-out echoes are forgotten")
            }
        }
    }

    @Test(arguments: [ICMPSocketMode.raw, .datagram])
    func aFirewallRejectingTheSendIsPermission(mode: ICMPSocketMode) async throws {
        try await withICMPNamespace(allowPingSockets: true) { ns async throws in
            try ns.nft(
                """
                table inet t {
                  chain out { type filter hook output priority 0; policy accept;
                    icmp type echo-request drop
                    icmpv6 type echo-request drop
                  }
                }
                """)
            let engine = ICMPEngine(networkNamespace: ns.path)
            defer { engine.close() }
            for host in ["127.0.0.1", "::1"] {
                if host == "::1", mode == .datagram {
                    // Linux drops the error of an IPv6 ping socket's send (icmpv6_push_pending_frames
                    // ignores it), so the firewall drop looks like plain loss there.
                    let r = await Self.probe(host, engine, mode: mode, count: 2, within: .milliseconds(300))
                    #expect(r.reason == .timeout, "\(r.detail)")
                    continue
                }
                let r = await Self.probe(host, engine, mode: mode, count: 2, within: .seconds(8))
                #expect(r.reason == .permission, "\(host): \(r.detail)")
                #expect(r.duration < .seconds(4), "fails at once, not at the deadline")
                #expect(r.icmp?.sent == 0)
            }
        }
    }

    @Test(arguments: [ICMPSocketMode.raw, .datagram])
    func anICMPUnreachableReplyIsUnreachable(mode: ICMPSocketMode) async throws {
        try await withICMPNamespace(allowPingSockets: true) { ns async throws in
            try ns.nft(
                """
                table inet t {
                  chain in { type filter hook input priority 0; policy accept;
                    icmp type echo-request reject with icmp type host-unreachable
                    icmpv6 type echo-request reject with icmpv6 type admin-prohibited
                  }
                }
                """)
            let engine = ICMPEngine(networkNamespace: ns.path)
            defer { engine.close() }
            let v4 = await Self.probe("127.0.0.1", engine, mode: mode, count: 2, within: .seconds(8))
            #expect(v4.reason == .unreachable, "\(v4.detail)")
            #expect(v4.detail.contains("destination unreachable (host unreachable) from 127.0.0.1"), "\(v4.detail)")
            #expect(v4.icmp?.sent == 2 && v4.duration < .seconds(4))
            let v6 = await Self.probe("::1", engine, mode: mode, count: 2, within: .seconds(8))
            #expect(v6.reason == .unreachable, "\(v6.detail)")
            #expect(v6.detail.contains("administratively prohibited"), "\(v6.detail)")
        }
    }

    /// One shared socket, some targets rejected and the rest answering. A ping socket with
    /// IP_RECVERR latches every ICMP error and fails the *next* send with it, whatever its target:
    /// the answering targets must not inherit the rejected ones' errors.
    @Test(arguments: [ICMPSocketMode.raw, .datagram])
    func rejectedTargetsDoNotSpoilTheirNeighbours(mode: ICMPSocketMode) async throws {
        try await withICMPNamespace(allowPingSockets: true) { ns async throws in
            try ns.nft(
                """
                table inet t {
                  chain in { type filter hook input priority 0; policy accept;
                    ip daddr 127.0.1.0/24 icmp type echo-request reject with icmp type host-unreachable
                  }
                }
                """)
            let engine = ICMPEngine(networkNamespace: ns.path)
            defer { engine.close() }
            let results = await withTaskGroup(of: (Int, ProbeResult).self) { group in
                for i in 1...60 {
                    let host = i % 2 == 0 ? "127.0.1.\(i)" : "127.0.0.\(i)"
                    group.addTask { (i, await Self.probe(host, engine, mode: mode, count: 4, within: .seconds(5))) }
                }
                var all: [(Int, ProbeResult)] = []
                for await r in group { all.append(r) }
                return all
            }
            for (i, r) in results {
                if i % 2 == 0 {
                    #expect(r.reason == .unreachable && r.icmp?.sent == 4, "\(r.address ?? "?"): \(r.detail)")
                } else {
                    #expect(r.icmp?.received == 4, "\(r.address ?? "?"): \(r.detail)")
                }
            }
        }
    }

    @Test(arguments: [ICMPSocketMode.raw, .datagram])
    func noRouteIsUnreachableAtOnce(mode: ICMPSocketMode) async throws {
        // Inside a namespace with only loopback there is no route to these documentation
        // addresses: sendto fails with ENETUNREACH and nothing leaves.
        try await withICMPNamespace(allowPingSockets: true) { ns async throws in
            let engine = ICMPEngine(networkNamespace: ns.path)
            defer { engine.close() }
            for host in ["192.0.2.1", "2001:db8::1"] {
                let r = await Self.probe(host, engine, mode: mode, count: 3, within: .seconds(8))
                #expect(r.reason == .unreachable, "\(host): \(r.detail)")
                #expect(r.detail.contains("unreachable"), "\(r.detail)")
                #expect(r.duration < .seconds(4))
            }
        }
    }

    @Test func anyFamilyFallsBackWhenTheFirstFamilyHasNoRoute() async throws {
        try await withICMPNamespace(allowPingSockets: true) { ns async throws in
            let engine = ICMPEngine(networkNamespace: ns.path)
            defer { engine.close() }
            let addresses = try [#require(SocketAddress(ip: "2001:db8::1")), #require(SocketAddress(ip: "127.0.0.1"))]
            let any = ICMPProber(.init(host: "dual.example", count: 2, spacing: .zero, mode: .raw), engine: engine)
            let r = await any.ping(addresses, deadline: .now + .seconds(5))
            #expect(r.status == .success, "\(r.detail)")
            #expect(r.address == "127.0.0.1" && r.family == .ipv4)
            #expect(
                r.detail.hasSuffix("(2001:db8::1 was unreachable: sending to 2001:db8::1: \(Errno(ENETUNREACH)))"),
                "\(r.detail)")
            // With an explicit family there is no fallback.
            let v6 = ICMPProber(.init(host: "dual.example", family: .ipv6, count: 1, mode: .raw), engine: engine)
            let r6 = await v6.ping(addresses, deadline: .now + .seconds(5))
            #expect(r6.reason == .unreachable && r6.address == "2001:db8::1")
        }
    }

    @Test func twoHundredFiftyTargetsThroughOnePingSocket() async throws {
        try await withICMPNamespace(allowPingSockets: true) { ns async throws in
            let engine = ICMPEngine(networkNamespace: ns.path)
            defer { engine.close() }
            let results = await withTaskGroup(of: ProbeResult.self) { group in
                for i in 1...250 {
                    group.addTask {
                        await Self.probe("127.0.0.\(i)", engine, mode: .datagram, count: 2, within: .seconds(8))
                    }
                }
                var all: [ProbeResult] = []
                for await r in group { all.append(r) }
                return all
            }
            #expect(
                results.allSatisfy { $0.icmp?.received == 2 },
                "\(results.filter { $0.icmp?.received != 2 }.map(\.detail).prefix(3))")
            #expect(Set(results.compactMap(\.address)).count == 250)
        }
    }

    @Test func aBusySequenceNumberIsSkippedAndLateEchoesStillTimeOut() async throws {
        try await withICMPNamespace(allowPingSockets: true) { ns async throws in
            try ns.nft(
                """
                table inet t {
                  chain in { type filter hook input priority 0; policy accept;
                    ip daddr 127.0.0.2 icmp type echo-request drop
                  }
                }
                """)
            let engine = ICMPEngine(networkNamespace: ns.path)
            defer { engine.close() }
            let socket = try engine.socket(family: .ipv4, mode: .datagram, interface: nil)
            async let dropped = Self.probe("127.0.0.2", engine, mode: .datagram, within: .seconds(1))
            // Wait (bounded) until the dropped echo is pending, then aim the counter at its number.
            var busy: UInt16?
            for _ in 0..<200 where busy == nil {
                busy = socket.state.withLock { $0.pending.keys.first }
                if busy == nil { await Reactor.shared.sleep(until: .now + .milliseconds(5)) }
            }
            let sequence = try #require(busy)
            socket.state.withLock { $0.nextSequence = sequence }
            let ok = await Self.probe("127.0.0.1", engine, mode: .datagram)
            #expect(ok.status == .success, "\(ok.detail)")
            #expect(socket.state.withLock { $0.nextSequence } == sequence &+ 2, "the busy number was skipped")
            let late = await dropped
            #expect(late.reason == .timeout)
        }
    }

    /// Forged replies (IP_HDRINCL, so the source address can be chosen) reach a raw socket that
    /// has an echo pending: only the one with the right source, identifier, sequence and nonce counts.
    @Test func forgedOrStaleRepliesDoNotCompleteAnEcho() async throws {
        try await withICMPNamespace(allowPingSockets: false) { ns async throws in
            try ns.nft(
                """
                table inet t {
                  chain in { type filter hook input priority 0; policy accept; ip daddr 127.0.0.2 icmp type echo-request drop; }
                }
                """)
            let engine = ICMPEngine(networkNamespace: ns.path)
            defer { engine.close() }
            let socket = try engine.socket(family: .ipv4, mode: .raw, interface: nil)
            let forger = try NetworkNamespace.run(inNamespaceAt: ns.path) {
                Glibc.socket(AF_INET, Int32(SOCK_RAW.rawValue), Int32(IPPROTO_RAW))
            }
            try #require(forger >= 0)
            defer { close(forger) }
            let echo = Task { await Self.probe("127.0.0.2", engine, mode: .raw, count: 1, within: .seconds(3)) }
            var pending: (UInt16, UInt64)?
            for _ in 0..<200 where pending == nil {
                pending = socket.state.withLock { s in s.pending.first.map { ($0.key, $0.value.nonce) } }
                if pending == nil { await Reactor.shared.sleep(until: .now + .milliseconds(5)) }
            }
            let (sequence, nonce) = try #require(pending)
            func forge(from source: [UInt8], identifier: UInt16, sequence: UInt16, nonce: UInt64) {
                var icmp = ICMPPacket.echoRequest(
                    family: .ipv4, identifier: identifier, sequence: sequence, nonce: nonce, payloadSize: 56)
                icmp[0] = 0
                icmp[2] = 0
                icmp[3] = 0
                let sum = ICMPPacket.checksum(icmp)
                icmp[2] = UInt8(sum >> 8)
                icmp[3] = UInt8(sum & 0xff)
                let packet =
                    ICMPPacketTests.ipv4Header(source: source, destination: [127, 0, 0, 1], payloadLength: icmp.count)
                    + icmp
                let to = SocketAddress(ip: "127.0.0.1")!
                let sent = packet.withUnsafeBytes { b in
                    to.withSockAddr { sendto(forger, b.baseAddress, b.count, 0, $0, $1) }
                }
                #expect(sent == packet.count, "forged send: \(Errno.current)")
            }
            // stale nonce
            forge(from: [127, 0, 0, 2], identifier: socket.identifier, sequence: sequence, nonce: nonce ^ 1)
            // wrong source
            forge(from: [127, 0, 0, 3], identifier: socket.identifier, sequence: sequence, nonce: nonce)
            // wrong identifier
            forge(from: [127, 0, 0, 2], identifier: socket.identifier &+ 1, sequence: sequence, nonce: nonce)
            // wrong sequence
            forge(from: [127, 0, 0, 2], identifier: socket.identifier, sequence: sequence &+ 1, nonce: nonce)
            await Reactor.shared.sleep(until: .now + .milliseconds(100))
            #expect(socket.pendingCount == 1, "no forged reply matched")
            forge(from: [127, 0, 0, 2], identifier: socket.identifier, sequence: sequence, nonce: nonce)
            let r = await echo.value
            #expect(
                r.status == .success, "the exact forgery is accepted, so the rejections above were real: \(r.detail)")
            #expect(r.icmp?.ttl == 64)
        }
    }

    @Test func cancellationAndEngineCloseEndEchoesAtOnce() async throws {
        try await withICMPNamespace(allowPingSockets: true) { ns async throws in
            try ns.nft(
                """
                table inet t {
                  chain in { type filter hook input priority 0; policy accept; icmp type echo-request drop; }
                }
                """)
            let engine = ICMPEngine(networkNamespace: ns.path)
            defer { engine.close() }
            let task = Task { await Self.probe("127.0.0.1", engine, mode: .raw, count: 3, within: .seconds(30)) }
            let socket = try engine.socket(family: .ipv4, mode: .raw, interface: nil)
            for _ in 0..<200 where socket.pendingCount < 3 {
                await Reactor.shared.sleep(until: .now + .milliseconds(5))
            }
            task.cancel()
            let cancelled = await task.value
            #expect(cancelled.reason == .error && cancelled.duration < .seconds(5), "\(cancelled.detail)")
            #expect(socket.pendingCount == 0)

            let closing = Task { await Self.probe("127.0.0.1", engine, mode: .raw, count: 1, within: .seconds(30)) }
            let second = try engine.socket(family: .ipv4, mode: .raw, interface: nil)
            for _ in 0..<200 where second.pendingCount < 1 {
                await Reactor.shared.sleep(until: .now + .milliseconds(5))
            }
            engine.close()
            let closed = await closing.value
            #expect(closed.reason == .error && closed.detail.contains("closed"), "\(closed.detail)")
            #expect(second.isRetired)
            // The engine opens a fresh socket afterwards.
            #expect(try engine.socket(family: .ipv4, mode: .raw, interface: nil) !== second)
        }
    }
}
