/// The exporter's gateway check: one echo to the gateway bound to the route's interface and,
/// when it fails, the gateway's neighbour entry.
package struct ICMPGatewayProber: GatewayProber {
    let engine: ICMPEngine
    /// The namespace the neighbour table is read in (`/run/netns/NAME`); nil: the process's.
    /// Give `engine` the same namespace.
    let networkNamespace: String?
    static let pool = BlockingPool(name: "neighbours", threads: 1)

    package init(engine: ICMPEngine = .shared, networkNamespace: String? = nil) {
        self.engine = engine
        self.networkNamespace = networkNamespace
    }

    package func check(_ route: GatewayRoute, deadline: ContinuousClock.Instant) async -> GatewayCheck {
        guard let gateway = route.gateway, let address = SocketAddress(ip: gateway) else {
            return GatewayCheck(route: route, echo: .notSent("no gateway address"))
        }
        let outcome = await engine.echo(to: address, interface: route.interface, deadline: deadline)
        let echo: GatewayCheck.Echo =
            switch outcome {
            case .reply(let rtt, _): .reply(rtt)
            case .icmpError(let t), .tooBig(_, let t): .error(t)
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
}
