/// How a round's probes run: one stagger slot at a time, each probe on its own, except the
/// slot's single-echo ICMP probes to IP literals, which go out together.
extension ReachabilityMonitor {
    /// Runs one stagger slot's jobs and returns their outcomes (in no particular order). Two or
    /// more ICMP rounds that can be batched (`ICMPProber.batchAddress`) go out together
    /// (`ICMPProber.batchRounds`: `sendmmsg` and one resumption per chunk), in chunks of at most
    /// `width`; each round holds one of the `maxConcurrentProbes` places from before its chunk is
    /// sent until it is over, as it would on its own. The rest run `width` at a time, as before.
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
        let concurrency = self.concurrency
        let timeout = plan.settings.timeout
        let together: [ProbeOutcome] = await withTaskGroup(of: [ProbeOutcome].self) { group in
            var start = 0
            while start < batched.count {
                let chunk = Array(batched[start..<min(start + min(width, concurrency.capacity), batched.count)])
                start += chunk.count
                await concurrency.acquire(chunk.count)
                let lateness = max(.zero, due.duration(to: clock.now))
                let now = ContinuousClock.now
                group.addTask {
                    let meters = chunk.map { _ in TrafficMeter() }
                    let rounds = chunk.map { b in
                        ICMPProber.BatchRound(prober: b.prober, deadline: now + (jobs[b.job].spec.timeout ?? timeout))
                    }
                    let results = await ICMPProber.batchRounds(rounds, meters: meters) { _ in concurrency.release() }
                    return chunk.indices.map { k in
                        let (spec, interface) = jobs[chunk[k].job]
                        return ProbeOutcome(
                            name: spec.name, type: spec.type, target: spec.target, interface: interface,
                            result: results[k], at: started, startLateness: lateness, traffic: meters[k].total)
                    }
                }
            }
            var all: [ProbeOutcome] = []
            for await outcomes in group { all += outcomes }
            return all
        }
        return await others + together
    }

    /// Why this probe has no usable path now (its uplink, its family, or no path at all), or nil.
    func pathProblem(_ spec: ProbeSpec, interface: String?) -> PathUnsatisfiedReason? {
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
            result = .failure(.unreachable, "no path: \(reason.rawValue)", duration: .zero)
        } else {
            await concurrency.acquire()
            lateness = max(.zero, due.duration(to: clock.now))
            result = await TrafficMeter.$current.withValue(meter) { await prober.probe(deadline: .now + timeout) }
            concurrency.release()
        }
        return ProbeOutcome(
            name: spec.name, type: spec.type, target: spec.target, interface: interface, result: result, at: started,
            startLateness: lateness, traffic: meter.total, ran: lateness != nil)
    }
}
