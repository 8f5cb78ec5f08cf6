extension ReachabilityMonitor {
    /// One round: every due probe (per uplink too), then verdicts, observers and subscribers.
    /// Its tasks carry the plan's uplink routing (`UplinkRouting.table`) and the monitor's NAT64
    /// prefixes (`NAT64Prefixes.round`): configuration reaches the sockets and DNS probes a round
    /// opens through the round, not a process-wide table, and a reload's applies from the next.
    @discardableResult
    package func runRound(periodic: Bool, due roundDue: C.Instant? = nil, fromLoop: Bool = false) async
        -> ReachabilityStatus
    {
        await roundLock.lock()
        defer { roundLock.unlock() }
        let plan = self.plan.withLock { $0 }
        nat64.announce(path.announcements.flatMap(\.pref64))
        return await UplinkRouting.$table.withValue(plan.settings.uplinkRouting) {
            await NAT64Prefixes.$round.withValue(nat64) {
                await runRound(plan, periodic: periodic, due: roundDue, fromLoop: fromLoop)
            }
        }
    }
}
