/// How a round's probes run: one stagger slot at a time, each probe on its own, except the
/// slot's single-echo ICMP probes to IP literals, which go out together.
extension ReachabilityMonitor {
    /// Runs one stagger slot's jobs and returns their outcomes (in no particular order). Two or
    /// more ICMP rounds that can be batched (`ICMPProber.batchAddress`) are one
    /// `ICMPProber.batchRounds`: one `sendmmsg` and one resumption for the slot, holding one of
    /// the `maxConcurrentProbes` places (the echoes share one socket and one receive thread). The
    /// rest run `width` at a time, as before.
    func runSlot(
        _ jobs: [(spec: ProbeSpec, interface: String?)], plan: Plan, at started: Double, due: C.Instant, width: Int
    ) async -> [ProbeOutcome] {
        var batched: [(job: Int, prober: ICMPProber)] = []
        var alone: [Int] = []
        for (i, job) in jobs.enumerated() {
            if let prober = plan.probers[ProbeKey(job.spec.name, job.interface)] as? ICMPProber,
                prober.batchAddress != nil, pathProblem(job.spec, interface: job.interface) == nil
            {
                batched.append((i, prober))
            } else {
                alone.append(i)
            }
        }
        @Sendable func single(_ i: Int) async -> ProbeOutcome {
            await runProbe(jobs[i].spec, interface: jobs[i].interface, plan: plan, at: started, due: due)
        }
        // Nothing to batch: the probes start from this task, as they always did.
        if batched.count < 2 { return await boundedConcurrently(Array(jobs.indices), width: width, single) }
        async let others = boundedConcurrently(alone, width: width, single)
        await concurrency.acquire()
        let lateness = max(.zero, due.duration(to: clock.now))
        let now = ContinuousClock.now
        let meters = batched.map { _ in TrafficMeter() }
        let rounds = batched.map { b in
            ICMPProber.BatchRound(
                prober: b.prober, deadline: now + (jobs[b.job].spec.timeout ?? plan.settings.timeout))
        }
        let results = await ICMPProber.batchRounds(rounds, meters: meters, width: width)
        concurrency.release()
        var outcomes = await others
        for (k, b) in batched.enumerated() {
            let spec = jobs[b.job].spec
            outcomes.append(
                ProbeOutcome(
                    name: spec.name, type: spec.type, target: spec.target, interface: jobs[b.job].interface,
                    result: results[k], at: started, startLateness: lateness, traffic: meters[k].total))
        }
        return outcomes
    }

    /// Why this probe has no usable path now (its uplink, its family, or no path at all), or nil.
    func pathProblem(_ spec: ProbeSpec, interface: String?) -> String? {
        interface.flatMap { path.unsatisfiedReason(interface: $0) } ?? spec.family.flatMap {
            path.unsatisfiedReason(for: $0)
        } ?? path.unsatisfiedReason(for: nil)
    }

    func runProbe(_ spec: ProbeSpec, interface: String?, plan: Plan, at started: Double, due: C.Instant) async
        -> ProbeOutcome
    {
        let timeout = spec.timeout ?? plan.settings.timeout
        let prober = plan.probers[ProbeKey(spec.name, interface)]!
        let meter = TrafficMeter()
        let result: ProbeResult
        var lateness: Duration?
        // No usable path for this probe: fail at once, without traffic.
        if let reason = pathProblem(spec, interface: interface) {
            result = .failure(.unreachable, "no path: \(reason)", duration: .zero)
        } else {
            await concurrency.acquire()
            lateness = max(.zero, due.duration(to: clock.now))
            result = await TrafficMeter.$current.withValue(meter) { await prober.probe(deadline: .now + timeout) }
            concurrency.release()
        }
        return ProbeOutcome(
            name: spec.name, type: spec.type, target: spec.target, interface: interface, result: result, at: started,
            startLateness: lateness, traffic: meter.total)
    }
}
