/// The exporter's gateway check: one echo to the gateway bound to the route's interface and,
/// when it fails, the gateway's neighbour entry.
package struct ICMPGatewayProber: GatewayProber {
    package let engine: ICMPEngine
    /// The namespace the neighbour table is read in (`/run/netns/NAME`); nil: the process's.
    /// Give `engine` the same namespace.
    package let networkNamespace: String?
    /// The ICMP socket kind (tests pin one; the exporter uses `.auto`).
    package let mode: ICMPSocketMode
    package static let pool = BlockingPool(name: "neighbours", threads: 1)

    package init(engine: ICMPEngine = .shared, networkNamespace: String? = nil, mode: ICMPSocketMode = .auto) {
        self.engine = engine
        self.networkNamespace = networkNamespace
        self.mode = mode
    }

    package func check(_ route: GatewayRoute, deadline: ContinuousClock.Instant) async -> GatewayCheck {
        guard let gateway = route.gateway, let address = SocketAddress(ip: gateway) else {
            return GatewayCheck(route: route, echo: .notSent("no gateway address"))
        }
        let outcome = await engine.echo(to: address, mode: mode, interface: route.interface, deadline: deadline)
        let echo: GatewayCheck.Echo =
            switch outcome {
            case .reply(let rtt, _): .reply(rtt)
            case .icmpError, .hopError, .tooBig: .error(outcome.errorText ?? "ICMP error")
            case .timedOut: .silent("no reply before the deadline")
            case .abandoned(let t): .silent(t)
            case .notSent(_, let t): .notSent(t)
            }
        if case .reply = echo { return GatewayCheck(route: route, echo: echo) }
        let namespace = networkNamespace
        let neighbour = await Self.pool.run(deadline: .now + .seconds(1)) { () -> NeighbourState? in
            let read: @Sendable () -> NeighbourState? = {
                NeighbourTable.state(of: gateway, interfaceIndex: InterfaceIndex.of(route.interface))
            }
            guard let namespace else { return read() }
            return (try? NetworkNamespace.run(inNamespaceAt: namespace, read)) ?? nil
        }
        return GatewayCheck(route: route, echo: echo, neighbour: neighbour ?? nil)
    }

    /// Hop limits a trace tries: 1…16, one echo each, sent at once (like mtr's first burst).
    /// Costs at most 16 echoes of 52 bytes (IPv4; 72 on IPv6) per trace; the monitor traces a
    /// route at most once a minute (`ReachabilityMonitor.traceInterval`).
    package static let traceHops = 16
    package static let tracePayload = 24

    package func trace(toward destination: String, route: GatewayRoute, deadline: ContinuousClock.Instant) async
        -> LastHopTrace?
    {
        guard let address = SocketAddress(ip: destination) else { return nil }
        let engine = self.engine
        let mode = self.mode
        let answers = await withTaskGroup(of: (Int, HopAnswer).self) { group in
            for hop in 1...Self.traceHops {
                group.addTask {
                    let outcome = await engine.echo(
                        to: address, mode: mode, interface: route.interface, payloadSize: Self.tracePayload,
                        hopLimit: hop,
                        deadline: deadline)
                    return (hop, HopAnswer(outcome, destination: address.ip))
                }
            }
            var answers = [HopAnswer](repeating: .silent, count: Self.traceHops)
            for await (hop, answer) in group { answers[hop - 1] = answer }
            return answers
        }
        return LastHopTrace(destination: address.ip, answers: answers)
    }
}
