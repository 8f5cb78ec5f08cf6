import Synchronization

/// The host's path as the probes see it: the netlink path monitor and the gate over it, or an
/// open gate when monitoring is off or netlink cannot be read (then the probes alone decide and
/// no gateway is checked: the routes come from the monitor). The monitor stops when this goes.
///
/// A `Service` (`path-monitor`): started when made, since resolving `uplinks: auto` and the
/// first round need its view; the runner keeps it until shutdown and stops it last.
package final class PathWatch: Service {
    package let name = "path-monitor"
    package let gate: any PathGate
    /// The running monitor (nil: off or unavailable), for the path metrics.
    package let monitor: PathMonitor?
    /// Why monitoring was asked for and is not running (netlink refused), or nil.
    package let problem: String?

    /// Starts the monitor when `enabled`; if it cannot start, the gate is open and `problem` says why.
    package init(enabled: Bool) {
        guard enabled else {
            (gate, monitor, problem) = (OpenPathGate(), nil, nil)
            return
        }
        let monitor = PathMonitor()
        do throws(PathMonitorError) {
            try monitor.start()
            (gate, self.monitor, problem) = (SnapshotPathGate(monitor), monitor, nil)
        } catch {
            (gate, self.monitor, problem) = (OpenPathGate(), nil, error.description)
        }
    }

    deinit { monitor?.stop() }

    package func run() async {
        await untilCancelled()
        monitor?.stop()
    }

    /// Asks the routers of the links with an IPv6 default route for their Router Advertisements
    /// now, and hands what they announce (captive-portal API, PREF64) to the monitor: a one-shot
    /// `check` and a daemon that just started need not wait for the next periodic RA. Returns
    /// when every router answered or after `wait` (RFC 4861 lets a router delay its answer by up
    /// to 0.5 s); without CAP_NET_RAW (no raw socket) at once, having asked nothing.
    package func solicitRouters(wait: Duration = .seconds(1)) async {
        guard let monitor else { return }
        let snapshot = monitor.current
        var links: [(index: Int32, name: String)] = []
        for r in snapshot.defaultRoutes
        where r.family == .ipv6 && !links.contains(where: { $0.name == r.interfaceName }) {
            links.append((Int32(truncatingIfNeeded: r.interfaceIndex), r.interfaceName))
        }
        guard !links.isEmpty else { return }
        let targets = links
        let found = await Self.solicitations.run(deadline: .now.advanced(by: wait + .seconds(1))) {
            RouterSolicitation.solicit(targets, wait: wait)
        }
        var told = false
        for (index, packet) in (found ?? nil) ?? [:] {
            guard let options = RouterAdvertisementOptions.parseAdvertisement(packet),
                options.captivePortal != nil || !options.pref64.isEmpty
            else { continue }
            monitor.learn(options, interfaceIndex: index)
            told = true
        }
        // The monitor thread applies them and publishes a snapshot with them (within a millisecond).
        for _ in 0..<50 where told && monitor.current.announcements == snapshot.announcements {
            try? await Task.sleep(for: .milliseconds(2))
        }
    }

    private static let solicitations = BlockingPool(name: "router-solicitation", threads: 1)
}

/// The one reachability core the library (`Reachability`), `check` and the exporter share: the
/// path (`PathWatch`), the gateway prober its routes allow, the monitor that runs rounds with
/// hysteresis, and `check()`, one round decided by itself.
package final class ReachabilityCore: Sendable {
    package let path: PathWatch
    /// The continuous rounds (`run()`, `updates()`, `current`), with the observers.
    package let monitor: ReachabilityMonitor<ContinuousClock>
    /// The gateway prober, when the path monitor runs.
    private let gateways: (any GatewayProber)?
    /// The same probes decided round by round, for `check()`: its own state, so a check never
    /// moves the continuous verdicts' hysteresis. Made at the first check, and again when the
    /// monitor's probes or settings changed (a reload).
    private let oneRound = Mutex<(monitor: ReachabilityMonitor<ContinuousClock>, key: [String])?>(nil)

    package init(
        path: PathWatch, probes: [ProbeSpec], settings: MonitorSettings, observers: [any RoundObserver] = [],
        budgets: BudgetBook = BudgetBook()
    ) {
        self.path = path
        // Gateways come from the path monitor's route table: no monitor, no gateway checks.
        gateways = path.monitor == nil ? nil : ICMPGatewayProber()
        monitor = ReachabilityMonitor(
            probes: probes, settings: settings, path: path.gate, observers: observers, gateways: gateways,
            budgets: budgets)
    }

    /// Runs one round now (every probe at once) and returns its verdict, without hysteresis.
    package func check() async -> ReachabilityStatus {
        let (probes, settings) = monitor.configuration
        let key = probes.map { "\($0.type) \($0.name) \($0.target)" } + ["\(settings)"]
        let once = oneRound.withLock { cached in
            if let cached, cached.key == key { return cached.monitor }
            var decided = settings
            decided.verdict = settings.verdict.decidingEachRound
            // The same budgets: a check's traffic is charged, and a spent uplink is not probed;
            // the same NAT64 prefixes, learned once.
            let made = ReachabilityMonitor(
                probes: probes, settings: decided, path: path.gate, gateways: gateways, budgets: monitor.budgets,
                nat64: monitor.nat64, captive: monitor.captive)
            cached = (made, key)
            return made
        }
        return await once.check()
    }

    /// The warning for probes of which none that counts can prove the internet (the verdict can
    /// never be `full`), or nil; logged by the exporter, printed by `check`.
    package var evidenceWarning: String? {
        let plan = monitor.configuration
        return ProbeSpec.evidenceWarning(plan.probes, policy: plan.settings.verdict.policy)
    }
}

extension VerdictSettings {
    /// The same settings with every round deciding alone (fail and recover after one round): a
    /// one-shot answer has no earlier rounds to weigh. A copy, so every other field is kept.
    package var decidingEachRound: VerdictSettings {
        var decided = self
        decided.failAfter = 1
        decided.recoverAfter = 1
        return decided
    }
}
