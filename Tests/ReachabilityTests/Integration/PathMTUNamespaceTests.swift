import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// Path MTU and gateway checks against the kernel, in three namespaces each test creates and
/// deletes: client A — router R — target C, where R's link to C carries 1410 bytes.
///
///     A a0 198.18.61.2 / 2001:db8:61::2 ── r0 R r1 (MTU 1410) ── c0 C 198.18.62.2 / 2001:db8:62::2
///
/// Benchmark and documentation addresses, nothing routes out of the namespaces. R reports
/// "fragmentation needed" / "packet too big" unless a test filters them (the black hole).
@Suite(.serialized) struct PathMTUNamespaceTests {
    struct Lab {
        let a: ScratchNetns
        let r: ScratchNetns
        let c: ScratchNetns
        var all: [ScratchNetns] { [a, r, c] }

        init() throws {
            a = try ScratchNetns()
            r = try ScratchNetns()
            c = try ScratchNetns()
            do {
                for ns in all {
                    try ns.run(["ip", "link", "set", "lo", "up"])
                    // No duplicate address detection: a tentative link-local address stalls neighbour discovery.
                    try ns.run([
                        "sysctl", "-q", "-w", "net.ipv4.ping_group_range=0 2147483647",
                        "net.ipv6.conf.default.accept_dad=0", "net.ipv6.conf.all.accept_dad=0",
                    ])
                }
                try a.run(["ip", "link", "add", "a0", "type", "veth", "peer", "name", "r0", "netns", r.name])
                try c.run([
                    "ip", "link", "add", "c0", "mtu", "1410", "type", "veth", "peer", "name", "r1", "netns", r.name,
                ])
                try r.run(["ip", "link", "set", "r1", "mtu", "1410"])
                try r.run(["sysctl", "-q", "-w", "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1"])
                for (ns, dev, v4, v6) in [
                    (a, "a0", "198.18.61.2/24", "2001:db8:61::2/64"), (r, "r0", "198.18.61.1/24", "2001:db8:61::1/64"),
                    (r, "r1", "198.18.62.1/24", "2001:db8:62::1/64"), (c, "c0", "198.18.62.2/24", "2001:db8:62::2/64"),
                ] {
                    try ns.run(["ip", "addr", "add", v4, "dev", dev])
                    try ns.run(["ip", "-6", "addr", "add", v6, "dev", dev, "nodad"])
                    try ns.run(["ip", "link", "set", dev, "up"])
                }
                try a.run(["ip", "route", "add", "default", "via", "198.18.61.1"])
                try a.run(["ip", "-6", "route", "add", "default", "via", "2001:db8:61::1"])
                try c.run(["ip", "route", "add", "default", "via", "198.18.62.1"])
                try c.run(["ip", "-6", "route", "add", "default", "via", "2001:db8:62::1"])
            } catch {
                remove()
                throw error
            }
        }

        func remove() { for ns in all { ns.remove() } }

        /// R drops the "too big" errors it would send: a path-MTU black hole.
        func filterTooBig() throws {
            try r.run(
                ["nft", "-f", "-"],
                input: """
                    table inet rxmtu {
                      chain out {
                        type filter hook output priority 0;
                        icmp type destination-unreachable icmp code frag-needed drop
                        icmpv6 type packet-too-big drop
                      }
                    }
                    """)
        }

        func measure(_ host: String, mode: ICMPSocketMode, expect: Int = 1500) async -> ProbeResult {
            let engine = ICMPEngine(networkNamespace: a.path)
            defer { engine.close() }
            let prober = MTUProber(.init(host: host, expect: expect, mode: mode), engine: engine)
            return await prober.probe(deadline: .now + .seconds(2))
        }
    }

    @Test(arguments: [
        ("198.18.62.2", ICMPSocketMode.raw), ("198.18.62.2", .datagram), ("2001:db8:62::2", .raw),
        ("2001:db8:62::2", .datagram),
    ])
    func aReportingRouterGivesTheExactMTU(host: String, mode: ICMPSocketMode) async throws {
        let lab = try Lab()
        defer { lab.remove() }
        let r = await lab.measure(host, mode: mode)
        #expect(r.mtu == 1410, "\(r.detail)")
        #expect(r.reason == .mtu && r.status == .failure)
        #expect(r.detail.contains("a router reported next-hop MTU 1410"), "\(r.detail)")
        // With the expectation met, the same path passes.
        let ok = await lab.measure(host, mode: mode, expect: 1410)
        #expect(ok.status == .success && ok.mtu == 1410, "\(ok.detail)")
    }

    @Test(arguments: [("198.18.62.2", ICMPSocketMode.raw), ("2001:db8:62::2", .datagram)])
    func aBlackHoleIsMeasuredWithin20Bytes(host: String, mode: ICMPSocketMode) async throws {
        let lab = try Lab()
        defer { lab.remove() }
        try lab.filterTooBig()
        let r = await lab.measure(host, mode: mode)
        #expect(r.mtu == 1400, "\(r.detail)")
        #expect(r.reason == .mtu)
        #expect(r.detail.contains("vanished"), "\(r.detail)")
        // A plain don't-fragment echo above the MTU simply times out there; below, it passes.
        let engine = ICMPEngine(networkNamespace: lab.a.path)
        defer { engine.close() }
        let overhead = MTUProber.overhead(host.contains(":") ? .ipv6 : .ipv4)
        for (size, succeeds) in [(1400, true), (1420, false)] {
            let p = ICMPProber(
                .init(host: host, count: 1, payloadSize: size - overhead, mode: mode, dontFragment: true),
                engine: engine)
            let e = await p.probe(deadline: .now + .milliseconds(500))
            #expect(e.succeeded == succeeds, "\(size): \(e.detail)")
        }
    }

    @Test(arguments: [ICMPSocketMode.raw, .datagram])
    func theLocalInterfaceMTUIsEMSGSIZE(mode: ICMPSocketMode) async throws {
        let lab = try Lab()
        defer { lab.remove() }
        try lab.a.run(["ip", "link", "set", "a0", "mtu", "1300"])
        let r = await lab.measure("198.18.62.2", mode: mode)
        #expect(r.mtu == 1300, "\(r.detail)")
        #expect(r.detail.contains("do not fit the local interface"), "\(r.detail)")
    }

    @Test(arguments: [("198.18.61.1", IPFamily.ipv4), ("2001:db8:61::1", .ipv6)])
    func theGatewayCheckSeesAnswerAndSilence(gateway: String, family: IPFamily) async throws {
        let lab = try Lab()
        defer { lab.remove() }
        let engine = ICMPEngine(networkNamespace: lab.a.path)
        defer { engine.close() }
        let prober = ICMPGatewayProber(engine: engine, networkNamespace: lab.a.path)
        let route = GatewayRoute(family: family, gateway: gateway, interface: "a0")
        // A link just brought up can lose the first neighbour solicitation (retransmitted after 1 s).
        var alive = await prober.check(route, deadline: .now + .seconds(1))
        for _ in 0..<2 where alive.rtt == nil { alive = await prober.check(route, deadline: .now + .seconds(1)) }
        #expect(alive.rtt != nil, "\(alive)")
        // The router goes silent on its LAN (ARP and neighbour discovery too), the link stays up.
        try lab.r.run(
            ["nft", "-f", "-"],
            input: "table netdev rxgw {\n chain in {\n  type filter hook ingress device r0 priority 0;\n  drop\n }\n}\n"
        )
        try lab.a.run(["ip", "neigh", "flush", "dev", "a0"])
        let gone = await prober.check(route, deadline: .now + .seconds(1))
        #expect(gone.rtt == nil)
        #expect(gone.neighbour?.isUnresolved == true, "\(gone)")
        let fault = FaultLocator.locate(
            Verdict(.limited, reason: .probe(.timeout)),
            entries: [RoundEntry(name: "x", type: .icmp, result: .failure(.timeout, "", duration: .zero))],
            route: route, check: gone)
        #expect(fault?.location == .gateway)
        #expect(
            fault?.detail.contains("no \(family == .ipv4 ? "ARP" : "neighbour discovery") reply") == true, "\(fault!)")
    }

    /// Routers announce themselves by link-local address (RA): `default via fe80::1 dev a0`. The
    /// echo carries no scope id; the socket's binding to the route's interface gives it one.
    @Test func aLinkLocalGatewayIsChecked() async throws {
        let lab = try Lab()
        defer { lab.remove() }
        try lab.r.run(["ip", "-6", "addr", "add", "fe80::61:1/64", "dev", "r0", "nodad"])
        let engine = ICMPEngine(networkNamespace: lab.a.path)
        defer { engine.close() }
        let prober = ICMPGatewayProber(engine: engine, networkNamespace: lab.a.path)
        let route = GatewayRoute(family: .ipv6, gateway: "fe80::61:1", interface: "a0")
        var check = await prober.check(route, deadline: .now + .seconds(1))
        for _ in 0..<2 where check.rtt == nil { check = await prober.check(route, deadline: .now + .seconds(1)) }
        #expect(check.rtt != nil, "\(check)")
    }

    @Test func theNeighbourTableIsReadOverRtnetlink() async throws {
        let lab = try Lab()
        defer { lab.remove() }
        try lab.a.run([
            "ip", "neigh", "replace", "198.18.61.7", "dev", "a0", "lladdr", "02:00:00:00:00:07", "nud", "permanent",
        ])
        try lab.a.run([
            "ip", "neigh", "replace", "2001:db8:61::7", "dev", "a0", "lladdr", "02:00:00:00:00:07", "nud", "stale",
        ])
        let read = { @Sendable (address: String) -> NeighbourState? in
            (try? NetworkNamespace.run(inNamespaceAt: lab.a.path) {
                NeighbourTable.state(of: address, interfaceIndex: InterfaceIndex.of("a0"))
            }) ?? nil
        }
        #expect(read("198.18.61.7") == .permanent)
        #expect(read("2001:db8:61::7") == .stale)
        #expect(read("198.18.61.8") == .absent)
    }
}
