/// How a round's probes run: one stagger slot at a time, each probe on its own, except the
/// slot's rounds that a `BatchingProber` can send together (single-echo ICMP probes to IP
/// literals), which go out together, by type.
extension ReachabilityMonitor {
    /// Runs one stagger slot's jobs and returns their outcomes (in no particular order). Two or
    /// more batchable rounds of one prober type (`BatchingProber.isBatchable`) go out together
    /// (`BatchingProber.batchRounds`; for ICMP, `sendmmsg` and one resumption per chunk), in
    /// chunks of at most `width`; each round holds one of the `maxConcurrentProbes` places from
    /// before its chunk is sent until it is over, as it would on its own. The rest run `width`
    /// at a time, as before.
    package func runSlot(
        _ jobs: [(spec: ProbeSpec, interface: String?)], plan: Plan, at started: Double, due: C.Instant, width: Int
    ) async -> [ProbeOutcome] {
        var groups: [ObjectIdentifier: [BatchMember]] = [:]
        var alone: [Int] = []
        for (i, job) in jobs.enumerated() {
            if let prober = plan.probers[ProbeKey(job.spec.name, job.interface)] as? any BatchingProber,
                prober.isBatchable, pathProblem(job.spec, interface: job.interface) == nil
            {
                groups[ObjectIdentifier(type(of: prober)), default: []].append(BatchMember(job: i, prober: prober))
            } else {
                alone.append(i)
            }
        }
        // A round alone of its type has nothing to share a batch with.
        for (type, members) in groups where members.count < 2 {
            alone += members.map(\.job)
            groups[type] = nil
        }
        @Sendable func single(_ i: Int) async -> ProbeOutcome {
            await runProbe(jobs[i].spec, interface: jobs[i].interface, plan: plan, at: started, due: due)
        }
        // Nothing to batch: the probes start from this task, as they always did.
        if groups.isEmpty { return await boundedConcurrently(Array(jobs.indices), width: width, single) }
        async let others = boundedConcurrently(alone.sorted(), width: width, single)
        let concurrency = self.concurrency
        let timeout = plan.settings.timeout
        let together: [ProbeOutcome] = await withTaskGroup(of: [ProbeOutcome].self) { group in
            for members in groups.values.sorted(by: { $0[0].job < $1[0].job }) {
                var start = 0
                while start < members.count {
                    let chunk = Array(members[start..<min(start + min(width, concurrency.capacity), members.count)])
                    start += chunk.count
                    await concurrency.acquire(chunk.count)
                    let lateness = max(.zero, due.duration(to: clock.now))
                    let now = ContinuousClock.now
                    group.addTask {
                        let meters = chunk.map { _ in TrafficMeter() }
                        let deadlines = chunk.map { now + (jobs[$0.job].spec.timeout ?? timeout) }
                        let results = await Self.batch(
                            like: chunk[0].prober, chunk, deadlines: deadlines, meters: meters
                        ) { _ in concurrency.release() }
                        return chunk.indices.map { k in
                            let (spec, interface) = jobs[chunk[k].job]
                            return ProbeOutcome(
                                name: spec.name, type: spec.type, target: spec.target, interface: interface,
                                result: results[k], at: started, startLateness: lateness, traffic: meters[k].total)
                        }
                    }
                }
            }
            var all: [ProbeOutcome] = []
            for await outcomes in group { all += outcomes }
            return all
        }
        return await others + together
    }

    /// One batchable round of a slot: its job's index and its prober.
    package struct BatchMember: Sendable {
        package var job: Int
        package var prober: any BatchingProber
    }

    /// Runs `members` (probers of the type of `first` only: the slot groups them by type) as one batch.
    private static func batch<P: BatchingProber>(
        like first: P, _ members: [BatchMember], deadlines: [ContinuousClock.Instant], meters: [TrafficMeter],
        roundEnded: @escaping @Sendable (Int) -> Void
    ) async -> [ProbeResult] {
        let rounds = zip(members, deadlines).compactMap { member, deadline in
            (member.prober as? P).map { ProberBatchRound(prober: $0, deadline: deadline) }
        }
        return await P.batchRounds(rounds, meters: meters, roundEnded: roundEnded)
    }

    /// Why this probe has no usable path now (its uplink, its family, or no path at all), or nil.
    package func pathProblem(_ spec: ProbeSpec, interface: String?) -> PathUnsatisfiedReason? {
        interface.flatMap { path.unsatisfiedReason(interface: $0) } ?? spec.family.flatMap {
            path.unsatisfiedReason(for: $0)
        } ?? path.unsatisfiedReason(for: nil)
    }

    package func runProbe(_ spec: ProbeSpec, interface: String?, plan: Plan, at started: Double, due: C.Instant) async
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
