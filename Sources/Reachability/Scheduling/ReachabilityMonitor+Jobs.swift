/// What a round runs: the probers of each (probe, interface) pair, and which pairs are due.
extension ReachabilityMonitor {
    static func makeProbers(_ specs: [ProbeSpec], settings: MonitorSettings) -> [ProbeKey: any Prober] {
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
/// - A probe's own interval, and an uplink's (`uplinkIntervals`) while the overall verdict is
///   `full`, make a job wait (the longer of the two).
/// - `prefer` (`passive`): a `full` scope whose own traffic vouches for it waits; one that is not
///   full keeps probing, so the probes decide its recovery.
enum DueJobs {
    static func select<I: InstantProtocol>(
        _ jobs: [(spec: ProbeSpec, interface: String?)], lastRun: [ProbeKey: I], now: I, periodic: Bool,
        settings: MonitorSettings, last: ReachabilityStatus?, passive: PassiveBoard?
    ) -> [(spec: ProbeSpec, interface: String?)] where I.Duration == Duration {
        guard periodic else { return jobs }
        let relaxed = last?.state == .full
        return jobs.filter { job in
            guard let ran = lastRun[ProbeKey(job.spec.name, job.interface)] else { return true }
            let scope: Scope = job.interface.map { .uplink($0) } ?? .overall
            if let passive, last?.verdict(of: scope)?.verdict.state == .full, passive.vouches(for: scope) {
                return false
            }
            let own = relaxed ? job.interface.flatMap { settings.uplinkIntervals[$0] } : nil
            guard let interval = [job.spec.interval, own].compactMap({ $0 }).max() else { return true }
            return ran.duration(to: now) + .milliseconds(50) >= interval
        }
    }
}
