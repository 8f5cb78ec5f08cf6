import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// The last-hop trace against the kernel, in a chain of namespaces each test creates and deletes:
///
///     A a0 ── R1 ── R2 ── R3 ── C c0  (198.18.7x.0/24, 2001:db8:7x::/64 per link)
///
/// Link i joins hop i-1 and hop i; C is 198.18.74.2 / 2001:db8:74::2, four hops from A.
/// Benchmark and documentation addresses; nothing routes out of the namespaces.
@Suite(.serialized) struct LastHopNamespaceTests {
    struct Chain {
        let a: ScratchNetns
        let routers: [ScratchNetns]
        let c: ScratchNetns
        var all: [ScratchNetns] { [a] + routers + [c] }

        static func v4(_ link: Int, _ host: Int) -> String { "198.18.7\(link).\(host)" }
        static func v6(_ link: Int, _ host: Int) -> String { "2001:db8:7\(link)::\(host)" }
        static let target = (v4: v4(4, 2), v6: v6(4, 2))

        init() throws {
            a = try ScratchNetns()
            routers = try (0..<3).map { _ in try ScratchNetns() }
            c = try ScratchNetns()
            do {
                let nodes = all
                for ns in nodes {
                    try ns.run(["ip", "link", "set", "lo", "up"])
                    try ns.run([
                        "sysctl", "-q", "-w", "net.ipv4.ping_group_range=0 2147483647",
                        "net.ipv6.conf.default.accept_dad=0", "net.ipv6.conf.all.accept_dad=0",
                        "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1",
                        // Every hop answers each burst: no ICMP rate limit in the way of a test.
                        "net.ipv4.icmp_ratelimit=0", "net.ipv6.icmp.ratelimit=0",
                    ])
                }
                // Link k (1…4) joins nodes[k-1] (n<k>) and nodes[k] (f<k>). On link 1 the router
                // end is .1 (A's gateway) and A is .2; on the others the near end is .1, the far .2.
                for link in 1...4 {
                    let near = nodes[link - 1]
                    let far = nodes[link]
                    try near.run([
                        "ip", "link", "add", "n\(link)", "type", "veth", "peer", "name", "f\(link)", "netns", far.name,
                    ])
                    for (ns, dev, host) in [
                        (near, "n\(link)", link == 1 ? 2 : 1), (far, "f\(link)", link == 1 ? 1 : 2),
                    ] {
                        try ns.run(["ip", "addr", "add", "\(Self.v4(link, host))/24", "dev", dev])
                        try ns.run(["ip", "-6", "addr", "add", "\(Self.v6(link, host))/64", "dev", dev, "nodad"])
                        try ns.run(["ip", "link", "set", dev, "up"])
                    }
                }
                // Toward C: each node's next hop is the far end of its outgoing link; back: the near end.
                for (i, ns) in nodes.enumerated() {
                    let link = i + 1
                    if link <= 4 {
                        let next = link == 1 ? 1 : 2
                        try ns.run(["ip", "route", "add", "default", "via", Self.v4(link, next)])
                        try ns.run(["ip", "-6", "route", "add", "default", "via", Self.v6(link, next)])
                    }
                    if i >= 2 {
                        // Back toward A over the incoming link i (its near end is .1): every earlier link.
                        for earlier in 1..<i {
                            try ns.run(["ip", "route", "add", "198.18.7\(earlier).0/24", "via", Self.v4(i, 1)])
                            try ns.run(["ip", "-6", "route", "add", "2001:db8:7\(earlier)::/64", "via", Self.v6(i, 1)])
                        }
                    }
                }
                try c.run(["ip", "route", "replace", "default", "via", Self.v4(4, 1)])
                try c.run(["ip", "-6", "route", "replace", "default", "via", Self.v6(4, 1)])
            } catch {
                remove()
                throw error
            }
        }

        func remove() { for ns in all { ns.remove() } }

        /// Made on a thread of its own: its ~80 `ip` commands would block the cooperative pool
        /// (2 threads here) and stall the deadline-measuring tests running beside this suite.
        static func make() async throws -> Chain {
            try await runOffCooperativePool { Result { try Chain() } }.get()
        }

        /// Router `hop` (1…3) drops everything it would forward further toward C (`heal` undoes it).
        func cut(after hop: Int) throws {
            try routers[hop - 1].run(
                ["nft", "-f", "-"],
                input: """
                    table inet rxcut {
                      chain cut { type filter hook forward priority 0; oifname "n\(hop + 1)" drop; }
                    }
                    """)
        }

        func heal(_ hop: Int) throws { try routers[hop - 1].run(["nft", "delete", "table", "inet", "rxcut"]) }

        /// Router `hop` sends no time-exceeded (like many carrier routers).
        func silence(_ hop: Int) throws {
            try routers[hop - 1].run(
                ["nft", "-f", "-"],
                input: """
                    table inet rxsilent {
                      chain out {
                        type filter hook output priority 0;
                        icmp type time-exceeded drop
                        icmpv6 type time-exceeded drop
                      }
                    }
                    """)
        }

        /// A fresh link can lose the first neighbour solicitation: `warm` traces once first.
        func trace(_ destination: String, family: IPFamily, mode: ICMPSocketMode, warm: Bool = true) async
            -> LastHopTrace?
        {
            let engine = ICMPEngine(networkNamespace: a.path)
            defer { engine.close() }
            let prober = ICMPGatewayProber(engine: engine, networkNamespace: a.path, mode: mode)
            let gateway = family == .ipv4 ? Self.v4(1, 1) : Self.v6(1, 1)
            let route = GatewayRoute(family: family, gateway: gateway, interface: "n1")
            if warm { _ = await prober.trace(toward: destination, route: route, deadline: .now + .seconds(1)) }
            return await prober.trace(toward: destination, route: route, deadline: .now + .seconds(1))
        }
    }

    static let cases: [(String, IPFamily, ICMPSocketMode)] = [
        (Chain.target.v4, .ipv4, .datagram), (Chain.target.v4, .ipv4, .raw),
        (Chain.target.v6, .ipv6, .datagram), (Chain.target.v6, .ipv6, .raw),
    ]

    /// Traces every case (both families, ping and raw sockets) at once.
    static func traceAll(_ chain: Chain, warm: Bool = false) async -> [LastHopTrace?] {
        await withTaskGroup(of: (Int, LastHopTrace?).self) { group in
            for (i, (target, family, mode)) in cases.enumerated() {
                group.addTask { (i, await chain.trace(target, family: family, mode: mode, warm: warm)) }
            }
            var out = [LastHopTrace?](repeating: nil, count: cases.count)
            for await (i, t) in group { out[i] = t }
            return out
        }
    }

    /// One chain for every phase (namespaces are costly to make and to tear down: the kernel
    /// cleans them up serially, and a backlog stalls every other namespace test).
    @Test func theLastHopMatchesTheChain() async throws {
        let chain = try await Chain.make()
        defer { chain.remove() }
        // Intact: the target itself answers, four hops away.
        for (i, trace) in await Self.traceAll(chain, warm: true).enumerated() {
            let last = trace?.lastHop(gateway: nil)
            #expect(last?.reached == true && last?.hop == 4, "\(Self.cases[i]): \(String(describing: trace))")
        }
        // Cut after each router in turn: that router is the last hop, at its distance.
        for hop in 1...3 {
            try await off { try chain.cut(after: hop) }
            let traces = await Self.traceAll(chain)
            try await off { try chain.heal(hop) }
            for (i, trace) in traces.enumerated() {
                let (target, family, _) = Self.cases[i]
                let far = hop == 1 ? 1 : 2
                let address = family == .ipv4 ? Chain.v4(hop, far) : Chain.v6(hop, far)
                let gateway = family == .ipv4 ? Chain.v4(1, 1) : Chain.v6(1, 1)
                let last = trace?.lastHop(gateway: gateway)
                #expect(
                    last?.reached == false && last?.hop == hop && last?.address == address
                        && last?.silentHops == [],
                    "cut after \(hop), \(Self.cases[i]): \(String(describing: trace))")
                let distance = hop == 1 ? "the gateway" : "\(hop - 1) hop\(hop == 2 ? "" : "s") past the gateway"
                let text = last?.description ?? ""
                #expect(
                    text.hasPrefix("breaks after hop \(hop) (\(address)), \(distance), toward \(target)"), "\(text)")
            }
        }
        // A router that sends no time-exceeded before the cut is a gap, not the end.
        try await off {
            try chain.silence(2)
            try chain.cut(after: 3)
        }
        for (i, trace) in await Self.traceAll(chain).enumerated() {
            let last = trace?.lastHop(gateway: nil)
            #expect(last?.hop == 3 && last?.silentHops == [2], "\(Self.cases[i]): \(String(describing: trace))")
            #expect(
                trace?.answers[1] == .silent && trace?.answers[3...].allSatisfy { $0 == .silent } == true,
                "\(String(describing: trace))")
        }
    }

    /// Blocking `ip`/`nft` commands run off the cooperative pool.
    func off(_ body: @escaping @Sendable () throws -> Void) async throws {
        try await runOffCooperativePool { Result { try body() } }.get()
    }
}
