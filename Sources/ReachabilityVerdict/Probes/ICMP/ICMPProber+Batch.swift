import Synchronization

/// Rounds of many ICMP probes sent together: a stagger slot's single-echo probes to IP literals
/// (`ICMPProber.batchAddress`) become one `ICMPEngine.echoBatch` — `sendmmsg` and one wake-up
/// for the slot, like fping's loop — instead of a task and a continuation per echo.
///
/// Each result is the one `probe(deadline:)` gives for the same outcome: the same summary, its
/// own duration (to when its own echo ended), a `resolve` phase of zero (a literal needs no
/// lookup), and the same phantom check (`askPhantom`), started the moment its own reply came
/// back, within its own deadline, whatever the rest of the batch is still waiting for. Proves
/// what a single echo proves: a reply that matched identifier, sequence, nonce and source.
extension ICMPProber: BatchingProber {
    /// One probe's round in a batch: its prober, and when its round must end.
    package typealias BatchRound = ProberBatchRound<ICMPProber>

    /// Whether this round can go out in a batch: a single echo to an IP literal, in a valid
    /// configuration (`batchAddress`).
    package var isBatchable: Bool { batchAddress != nil }

    /// The phantom check of one round: running since its reply came, or taken over by the
    /// collector (whose end handler had not run yet when the batch returned).
    private enum PhantomSlot {
        case running(Task<(reply: String?, at: ContinuousClock.Instant), Never>)
        case claimed
    }

    /// Runs `rounds` and returns their results in order, charging each round's traffic to its
    /// meter in `meters`; `roundEnded(i)` is called once for each round as soon as it is over
    /// (its echo ended, and its phantom check if it needed one). A round whose prober cannot be
    /// batched (no `batchAddress`) runs `probe(deadline:)` alongside.
    package static func batchRounds(
        _ rounds: [BatchRound], meters: [TrafficMeter], roundEnded: @escaping @Sendable (Int) -> Void = { _ in }
    ) async -> [ProbeResult] {
        let clock = ContinuousClock()
        let start = clock.now
        let alone = rounds.indices.filter { rounds[$0].prober.batchAddress == nil }
        async let aloneResults = boundedConcurrently(alone, width: max(1, alone.count)) { i in
            let r = await TrafficMeter.$current.withValue(meters[i]) {
                await rounds[i].prober.probe(deadline: rounds[i].deadline)
            }
            roundEnded(i)
            return (i, r)
        }
        let batched = rounds.indices.filter { rounds[$0].prober.batchAddress != nil }
        let phantoms = Mutex<[Int: PhantomSlot]>([:])

        /// The phantom check of round `i` after `outcome` (a reply that crossed no router).
        @Sendable func checkPhantom(_ i: Int, _ outcome: ICMPEchoOutcome, deadline: ContinuousClock.Instant) async
            -> (reply: String?, at: ContinuousClock.Instant)
        {
            let p = rounds[i].prober
            var r = summarize([outcome], address: p.batchAddress!, duration: .zero)
            await TrafficMeter.$current.withValue(meters[i]) {
                await p.askPhantom(&r, address: p.batchAddress!, deadline: deadline)
            }
            roundEnded(i)
            return (r.icmp?.phantomReply, clock.now)
        }
        @Sendable func needsPhantom(_ i: Int, _ outcome: ICMPEchoOutcome) -> Bool {
            guard case .reply(_, let ttl?) = outcome, !rounds[i].prober.batchAddressIsLocal else { return false }
            return ICMPDetail.hops(ttl: ttl) == 0
        }
        @Sendable func ended(_ i: Int, _ result: EchoBatch.Result) {
            guard needsPhantom(i, result.outcome) else {
                roundEnded(i)
                return
            }
            phantoms.withLock { slots in
                guard slots[i] == nil else { return }
                slots[i] = .running(Task { await checkPhantom(i, result.outcome, deadline: rounds[i].deadline) })
            }
        }

        // One batch per engine (one, unless probes run in other network namespaces), all at once.
        let groups = Array(Dictionary(grouping: batched, by: { ObjectIdentifier(rounds[$0].prober.engine) }).values)
        @Sendable func send(_ indices: [Int]) async -> [(Int, EchoBatch.Result)] {
            let requests = indices.map { i in
                let c = rounds[i].prober.configuration
                return ICMPEngine.BatchRequest(
                    destination: rounds[i].prober.batchAddress!, mode: c.mode, interface: c.interface,
                    payloadSize: c.payloadSize, dontFragment: c.dontFragment, deadline: rounds[i].deadline)
            }
            let engine = rounds[indices[0]].prober.engine
            return Array(zip(indices, await engine.echoBatch(requests) { k, r in ended(indices[k], r) }))
        }
        let sent: [(Int, EchoBatch.Result)] =
            switch groups.count {
            case 0: []
            case 1: await send(groups[0])
            default: await boundedConcurrently(groups, width: groups.count, send).flatMap { $0 }
            }

        var results = [ProbeResult?](repeating: nil, count: rounds.count)
        for (i, end) in sent {
            let c = rounds[i].prober.configuration
            let address = rounds[i].prober.batchAddress!
            meters[i].echo(end.outcome, payload: c.payloadSize, family: address.ipFamily)
            var result = summarize(
                [end.outcome], address: address, duration: max(.zero, start.duration(to: end.at)),
                dontFragment: c.dontFragment)
            result.phases[.resolve] = .zero
            if needsPhantom(i, end.outcome) {
                // Its end handler may still be on its way (another thread ended it): then the check runs here.
                let slot = phantoms.withLock { slots -> PhantomSlot? in
                    if let slot = slots[i] { return slot }
                    slots[i] = .claimed
                    return nil
                }
                let answer: (reply: String?, at: ContinuousClock.Instant)
                if case .running(let task)? = slot {
                    answer = await task.value
                } else {
                    answer = await checkPhantom(
                        i, end.outcome, deadline: max(rounds[i].deadline, clock.now + .milliseconds(100)))
                }
                result.icmp?.phantomReply = answer.reply
                result.duration = max(.zero, start.duration(to: answer.at))
            }
            results[i] = result
        }
        for (i, r) in await aloneResults { results[i] = r }
        return results.map { $0 ?? .failure(.error, "lost", duration: .zero) }
    }
}
