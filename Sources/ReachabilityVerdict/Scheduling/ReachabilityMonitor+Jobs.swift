/// What a round runs: the probers of each (probe, interface) pair, and which pairs are due.
extension ReachabilityMonitor {
    package static func makeProbers(_ specs: [ProbeSpec], settings: MonitorSettings) -> [ProbeKey: any Prober] {
        var made: [ProbeKey: any Prober] = [:]
        for spec in specs {
            for interface in settings.interfaces(of: spec) {
                made[ProbeKey(spec.name, interface)] = spec.prober(bound: interface)
            }
        }
        return made
    }
}

/// Which of a round's (probe, interface) jobs run. Pure.
///
/// - A triggered round (not `periodic`) runs every job, as does a job that never ran.
/// - A probe's own interval, and its uplink's pace (`UplinkPace.all`: its own interval, or what
///   its budget allows), make a job wait (the longer of the two).
/// - An uplink whose budget is spent runs nothing until its window ends, and one whose budget
///   stretches its pace keeps that pace, in triggered rounds too.
/// - `prefer` (`passive`): a `full` scope whose own traffic vouches for it waits, but never
///   longer than `maxPause(scope)` (`PassiveBoard.maxPause`: two of its intervals) since its
///   probes last ran (old flows may keep
///   receiving while new connections fail: a full connection table, a firewall that drops new
///   flows). One that is not full, or whose latest round was not (`ReachabilityStatus.doubted`),
///   keeps probing, so the probes decide its recovery and its fall.
package enum DueJobs {
    package static func select<I: InstantProtocol>(
        _ jobs: [(spec: ProbeSpec, interface: String?)], lastRun: [ProbeKey: I], now: I, periodic: Bool,
        paces: [String: UplinkPace], last: ReachabilityStatus?, passive: PassiveBoard?,
        maxPause: (Scope) -> Duration = { _ in .zero }
    ) -> [(spec: ProbeSpec, interface: String?)] where I.Duration == Duration {
        jobs.filter { job in
            let pace = job.interface.flatMap { paces[$0] }
            // Spent: nothing until the window ends (`pace.interval` is the time left).
            if pace?.cause == "exhausted" { return false }
            guard let ran = lastRun[ProbeKey(job.spec.name, job.interface)] else { return true }
            // A budget's stretched pace holds in triggered rounds too: a flapping link or a
            // recurring stall must not spend the window early.
            if !periodic, let pace, pace.cause == "budget" {
                return ran.duration(to: now) + .milliseconds(50) >= pace.interval
            }
            guard periodic else { return true }
            let scope: Scope = job.interface.map { .uplink($0) } ?? .overall
            if let passive, let last, ran.duration(to: now) < maxPause(scope),
                Self.settled(scope, spec: job.spec, in: last),
                passive.vouches(for: scope)
            {
                return false
            }
            guard let interval = [job.spec.interval, pace?.interval].compactMap({ $0 }).max() else { return true }
            return ran.duration(to: now) + .milliseconds(50) >= interval
        }
    }
}

extension DueJobs {
    /// Whether `prefer` may pause a job of `scope`: the scope is `full` and not doubted; for the
    /// routing table's probes, no family is worse than `full` or doubted either (the host's
    /// IPv4 downloads vouch for `overall`, not for a broken IPv6), and a probe pinned to a
    /// family needs that family `full`.
    package static func settled(_ scope: Scope, spec: ProbeSpec, in last: ReachabilityStatus) -> Bool {
        guard last.verdict(of: scope)?.verdict.state == .full, !last.doubted.contains(scope) else { return false }
        guard scope == .overall else { return true }
        if let family = spec.family, last.families[family]?.verdict.state != .full { return false }
        return IPFamily.allCases.allSatisfy { f in
            let state = last.families[f]?.verdict.state ?? .unknown
            return (state == .full || state == .none || state == .unknown) && !last.doubted.contains(.family(f))
        }
    }
}

extension UplinkPace {
    /// The pace of every uplink with its own interval or a budget. Its own interval holds while
    /// the overall verdict is `full` and the host's traffic does not use the uplink (passive
    /// evidence); otherwise its probes run in every round (zero: the global interval, faster
    /// while not `full`). A budget then stretches it (`BudgetBook.pace`).
    package static func all(
        _ settings: MonitorSettings, book: BudgetBook, last: ReachabilityStatus?, passive: PassiveBoard?, now: Double
    ) -> [String: UplinkPace] {
        var out: [String: UplinkPace] = [:]
        let relaxed = last?.state == .full
        for uplink in settings.uplinks
        where settings.uplinkIntervals[uplink] != nil || settings.uplinkBudgets[uplink] != nil {
            let carrying = passive?.carries(.uplink(uplink)) ?? false
            let own = relaxed && !carrying ? settings.uplinkIntervals[uplink] : nil
            let floor = own.map { max($0, settings.interval) } ?? .zero
            out[uplink] = book.pace(uplink, floor: floor, budget: settings.uplinkBudgets[uplink], now: now)
        }
        return out
    }
}
