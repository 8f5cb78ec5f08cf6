/// Scheduler settings (`--probe.interval`, `--probe.timeout`, hysteresis, re-check backoff).
package struct MonitorSettings: Sendable, Equatable {
    package var interval: Duration = .seconds(5)
    package var timeout: Duration = .seconds(3)
    package var verdict = VerdictSettings()
    /// While not `full`, re-check after this, doubling up to `interval` (0 disables).
    package var fastRecheck: Duration = .seconds(1)
    /// How long path events are coalesced before the immediate re-probe.
    package var pathDebounce: Duration = .milliseconds(100)
    /// The least time between the start of a round that a trigger (a path change, a reload)
    /// started and the next triggered one: the first trigger re-probes at once, a flood of them
    /// cannot multiply probe traffic and history, nor pass `fail_after` in milliseconds.
    /// Capped at `interval`.
    package var minimumRoundGap: Duration = .seconds(1)
    /// Probes running at once, across all probes and uplinks.
    package var maxConcurrentProbes = 64
    /// Spread probe starts across the interval (periodic rounds only).
    package var stagger = true
    /// Interfaces whose probes are bound to them and get their own verdict.
    package var uplinks: [String] = []
    /// `uplinks: auto`: also every interface that holds a default route, adopted by the monitor
    /// as the path shows them (at start, at each path change, at each reconfigure); one that
    /// loses its route stays an uplink until the next reconfigure (a reload), so a backup link
    /// that goes down keeps reporting `none` instead of vanishing.
    package var autoUplinks = false
    /// Per uplink, how often its probes run (at least `interval`): a metered backup probed every
    /// 5 minutes. While the overall verdict is not `full` the uplink runs at the global pace
    /// again (when the backup is what may carry the traffic, its verdict is wanted now).
    package var uplinkIntervals: [String: Duration] = [:]
    /// Per uplink, the names of the only probes that run bound to it (absent: every probe).
    package var uplinkProbes: [String: Set<String>] = [:]
    /// Per uplink, a traffic budget its probes' pace is stretched to stay within (`BudgetBook`).
    package var uplinkBudgets: [String: TrafficBudget] = [:]
    /// Per uplink, the policy routing of the sockets bound to it (`uplink_settings`), in force
    /// while the monitor's rounds run (`UplinkRouting.$table`).
    package var uplinkRouting: [String: UplinkRouting] = [:]
    /// How the network's captive-portal API is learned and read (`captive_portal:`).
    package var captivePortal = CaptivePortalSettings()

    package init() {}

    /// Where `spec` runs: through the routing table, and bound to each uplink whose probe set
    /// (if it has one) names it.
    package func interfaces(of spec: ProbeSpec) -> [String?] {
        spec.interfaces(uplinks.filter { uplinkProbes[$0]?.contains(spec.name) ?? true })
    }
}

extension MonitorSettings {
    /// The one rule for a timeout: above zero and below the interval it runs under (global, or
    /// a probe's own). Flags, the file's `global:` and each probe are checked with it.
    package static func timeoutFits(_ timeout: Duration, interval: Duration) -> Bool {
        timeout > .zero && timeout < interval
    }
}

extension MonitorSettings {
    /// These settings with, under `autoUplinks`, the interfaces that hold a default route now
    /// added to `uplinks` (in the path's order; names that cannot be an uplink are left out).
    package func adoptingRouteUplinks(_ path: any PathGate) -> MonitorSettings {
        guard autoUplinks else { return self }
        var out = self
        for name in path.defaultRouteInterfaces
        where !out.uplinks.contains(name) && InterfaceName.problem(name) == nil
            && Scope.reservedUplinkProblem(name) == nil
        {
            out.uplinks.append(name)
        }
        return out
    }
}
