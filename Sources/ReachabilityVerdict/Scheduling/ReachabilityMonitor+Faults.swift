/// Fault localization after each round (`FaultLocator`), kept beside the scheduler's rounds.
extension ReachabilityMonitor {
    /// How long a trace stands while its scope stays limited: 16 echoes a minute per route at most.
    package static var traceInterval: Duration { .seconds(60) }

    /// Each decided scope's fault (`FaultLocator`). The gateways of scopes that need one checked
    /// are checked once each, at once, within min(timeout, 1 s): only while a scope is `limited`,
    /// some probe of it failed and nothing proves the internet (`FaultLocator.needsGateway`), so
    /// a healthy host sends nothing extra. In the same second each such route (a point-to-point
    /// one too, which has no gateway to check) is traced toward a failing target of its scope
    /// (`LastHopTrace`: `ICMPGatewayProber.traceHops` echoes), and again at most once per
    /// `traceInterval` while the scope stays limited. Decides nothing: verdicts are final before
    /// this runs. What the checks and traces put on the wire counts into `meters` by the route's
    /// interface (a meter per interface, made here when missing). A trace's age is read on the
    /// monitor's `clock`; the checks' deadlines are the sockets' (`ContinuousClock`), as a probe's are.
    package func locateFaults(
        _ status: ReachabilityStatus, entries: [Scope: [RoundEntry]], uplinks: [String], timeout: Duration,
        meters: inout [String: TrafficMeter], spent: Set<String> = []
    ) async -> [Scope: Fault] {
        var scopes: [(Scope, Verdict)] = [(.overall, status.overall.verdict)]
        for f in IPFamily.allCases { if let v = status.families[f] { scopes.append((.family(f), v.verdict)) } }
        for u in uplinks { if let v = status.uplinks[u] { scopes.append((.uplink(u), v.verdict)) } }
        let routes = scopes.map { path.gatewayRoute(for: $0.0) }
        var needed: [GatewayRoute] = []
        // An uplink whose budget is spent sends nothing, fault checks and traces neither.
        for (i, (scope, verdict)) in scopes.enumerated()
        where FaultLocator.needsGateway(verdict, entries: entries[scope] ?? []) && !scope.isUplink(in: spent) {
            if let route = routes[i], !needed.contains(route) { needed.append(route) }
        }
        let checked = needed.filter { $0.gateway != nil }
        // Toward what each checked route is traced: a failing target of a scope it serves.
        var destinations: [GatewayRoute: String] = [:]
        for (i, (scope, _)) in scopes.enumerated() {
            guard let route = routes[i], needed.contains(route), destinations[route] == nil else { continue }
            destinations[route] = LastHopTrace.destination(in: entries[scope] ?? [], family: route.family)
        }
        var checks: [GatewayRoute: GatewayCheck] = [:]
        var traces: [GatewayRoute: LastHopTrace] = [:]
        // Recent traces stand; those of routes no scope needs now are forgotten (a new outage traces afresh).
        let now = clock.now
        let wanted = Set(destinations.map { LastHopTraceKey(route: $0.key, destination: $0.value) })
        let fresh = lastTraces.withLock { cache in
            cache = cache.filter { wanted.contains($0.key) }
            return cache.filter { $0.value.at.duration(to: now) < Self.traceInterval }
        }
        for (key, value) in fresh { if let t = value.trace { traces[key.route] = t } }
        var traced: Set<GatewayRoute> = []
        for route in needed where meters[route.interface] == nil { meters[route.interface] = TrafficMeter() }
        let routeMeters = meters
        if let gateways, !needed.isEmpty {
            let deadline = ContinuousClock.now + min(timeout, .seconds(1))
            await withTaskGroup(of: LocatorFinding.self) { group in
                for route in checked {
                    group.addTask {
                        await TrafficMeter.$current.withValue(routeMeters[route.interface]) {
                            .check(await gateways.check(route, deadline: deadline))
                        }
                    }
                }
                for route in needed {
                    if let destination = destinations[route],
                        fresh[LastHopTraceKey(route: route, destination: destination)] == nil
                    {
                        group.addTask {
                            await TrafficMeter.$current.withValue(routeMeters[route.interface]) {
                                .trace(
                                    route, await gateways.trace(toward: destination, route: route, deadline: deadline))
                            }
                        }
                    }
                }
                for await found in group {
                    switch found {
                    case .check(let c): checks[c.route] = c
                    case .trace(let route, let t):
                        traces[route] = t
                        traced.insert(route)
                    }
                }
            }
            // A trace that stands was made while the gateway answered echoes; if it is silent
            // now, that trace cannot tell a gateway gone from one that still routes: trace
            // again (once per such change, not per round).
            let stale = checked.filter { route in
                guard checks[route]?.rtt == nil, let destination = destinations[route],
                    let kept = fresh[LastHopTraceKey(route: route, destination: destination)]
                else { return false }
                return kept.gatewayAnswered == true
            }
            if !stale.isEmpty {
                let deadline = ContinuousClock.now + min(timeout, .seconds(1))
                await withTaskGroup(of: (GatewayRoute, LastHopTrace?).self) { group in
                    for route in stale {
                        let destination = destinations[route]!
                        group.addTask {
                            await TrafficMeter.$current.withValue(routeMeters[route.interface]) {
                                (route, await gateways.trace(toward: destination, route: route, deadline: deadline))
                            }
                        }
                    }
                    for await (route, t) in group {
                        traces[route] = t
                        traced.insert(route)
                    }
                }
            }
            for route in traced {
                guard let destination = destinations[route] else { continue }
                let answered = checks[route].map { $0.rtt != nil }
                lastTraces.withLock {
                    $0[LastHopTraceKey(route: route, destination: destination)] = (now, traces[route], answered)
                }
            }
        }
        let previous = self.current?.faults ?? [:]
        var faults: [Scope: Fault] = [:]
        for (i, (scope, verdict)) in scopes.enumerated() where verdict.state != .unknown {
            let route = routes[i]
            // Nil: recovering under hysteresis, the fault located before still stands.
            faults[scope] =
                FaultLocator.locate(
                    verdict, entries: entries[scope] ?? [], route: route, check: route.flatMap { checks[$0] },
                    trace: route.flatMap { traces[$0] })
                ?? previous[scope] ?? Fault(.none, "recovering: every probe succeeds again")
        }
        return faults
    }
}

/// A traced route and the address it was traced toward.
package struct LastHopTraceKey: Hashable, Sendable {
    package var route: GatewayRoute
    package var destination: String
}

/// What one of the locator's concurrent checks found.
private enum LocatorFinding: Sendable {
    case check(GatewayCheck)
    case trace(GatewayRoute, LastHopTrace?)
}

extension Scope {
    fileprivate func isUplink(in names: Set<String>) -> Bool {
        if case .uplink(let name) = self { return names.contains(name) }
        return false
    }
}
