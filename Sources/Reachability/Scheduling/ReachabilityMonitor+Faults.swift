/// Fault localization after each round (`FaultLocator`), kept beside the scheduler's rounds.
extension ReachabilityMonitor {
    /// Each decided scope's fault (`FaultLocator`). The gateways of scopes that need one checked
    /// are checked once each, at once, within min(timeout, 1 s): only while a scope is `limited`,
    /// some probe of it failed and nothing proves the internet (`FaultLocator.needsGateway`), so
    /// a healthy host sends nothing extra. Decides nothing: verdicts are final before this runs.
    func locateFaults(
        _ status: ReachabilityStatus, entries: [Scope: [RoundEntry]], uplinks: [String], timeout: Duration
    ) async -> [Scope: Fault] {
        var scopes: [(Scope, Verdict)] = [(.overall, status.overall.verdict)]
        for f in IPFamily.allCases { if let v = status.families[f] { scopes.append((.family(f), v.verdict)) } }
        for u in uplinks { if let v = status.uplinks[u] { scopes.append((.uplink(u), v.verdict)) } }
        let routes = scopes.map { path.gatewayRoute(for: $0.0) }
        var needed: [GatewayRoute] = []
        for (i, (scope, verdict)) in scopes.enumerated()
        where FaultLocator.needsGateway(verdict, entries: entries[scope] ?? []) {
            if let route = routes[i], route.gateway != nil, !needed.contains(route) { needed.append(route) }
        }
        var checks: [GatewayRoute: GatewayCheck] = [:]
        if let gateways, !needed.isEmpty {
            let deadline = ContinuousClock.now + min(timeout, .seconds(1))
            checks = await withTaskGroup(of: GatewayCheck.self) { group in
                for route in needed { group.addTask { await gateways.check(route, deadline: deadline) } }
                var out: [GatewayRoute: GatewayCheck] = [:]
                for await c in group { out[c.route] = c }
                return out
            }
        }
        let previous = self.current?.faults ?? [:]
        var faults: [Scope: Fault] = [:]
        for (i, (scope, verdict)) in scopes.enumerated() where verdict.state != .unknown {
            let route = routes[i]
            // Nil: recovering under hysteresis, the fault located before still stands.
            faults[scope] =
                FaultLocator.locate(
                    verdict, entries: entries[scope] ?? [], route: route, check: route.flatMap { checks[$0] })
                ?? previous[scope] ?? Fault(.none, "recovering: every probe succeeds again")
        }
        return faults
    }
}
