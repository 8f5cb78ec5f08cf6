/// Rounds of many ICMP probes sent together: a stagger slot's single-echo probes to IP literals
/// (`ICMPProber.batchAddress`) become one `ICMPEngine.echoBatch` — one `sendmmsg` and one
/// wake-up for the slot, like fping's loop — instead of a task and a continuation per echo.
///
/// Each result is the one `probe(deadline:)` gives for the same outcome: the same summary, the
/// same phantom check (`askPhantom`, run for the few rounds that need it), its own duration (to
/// when its own echo ended), a `resolve` phase of zero (a literal needs no lookup). Proves what a
/// single echo proves: a reply that matched identifier, sequence, nonce and source.
extension ICMPProber {
    /// One probe's round in a batch: its prober, and when its round must end.
    package struct BatchRound: Sendable {
        package var prober: ICMPProber
        package var deadline: ContinuousClock.Instant

        package init(prober: ICMPProber, deadline: ContinuousClock.Instant) {
            self.prober = prober
            self.deadline = deadline
        }
    }

    /// Runs `rounds` (each prober's `batchAddress` must be set) and returns their results in
    /// order, charging each round's echoes to its meter in `meters`. `width` bounds the phantom
    /// checks that run at once.
    package static func batchRounds(_ rounds: [BatchRound], meters: [TrafficMeter], width: Int) async -> [ProbeResult] {
        let clock = ContinuousClock()
        let start = clock.now
        // One batch per engine (one, unless probes run in other network namespaces), all at once.
        let groups = Array(
            Dictionary(grouping: rounds.indices, by: { ObjectIdentifier(rounds[$0].prober.engine) }).values)
        @Sendable func send(_ indices: [Int]) async -> [(Int, EchoBatch.Result)] {
            let requests = indices.map { i in
                let c = rounds[i].prober.configuration
                return ICMPEngine.BatchRequest(
                    destination: rounds[i].prober.batchAddress!, mode: c.mode, interface: c.interface,
                    payloadSize: c.payloadSize, dontFragment: c.dontFragment, deadline: rounds[i].deadline)
            }
            return Array(zip(indices, await rounds[indices[0]].prober.engine.echoBatch(requests)))
        }
        var ended = [EchoBatch.Result?](repeating: nil, count: rounds.count)
        let sent =
            groups.count == 1
            ? await send(groups[0]) : await boundedConcurrently(groups, width: groups.count, send).flatMap { $0 }
        for (i, r) in sent { ended[i] = r }
        var results: [ProbeResult] = []
        results.reserveCapacity(rounds.count)
        var phantoms: [Int] = []
        for (i, round) in rounds.enumerated() {
            let c = round.prober.configuration
            let address = round.prober.batchAddress!
            let end = ended[i] ?? .init(outcome: .abandoned("lost"), at: clock.now)
            meters[i].echo(end.outcome, payload: c.payloadSize, family: address.ipFamily)
            var result = summarize(
                [end.outcome], address: address, duration: max(.zero, start.duration(to: end.at)),
                dontFragment: c.dontFragment)
            result.phases[.resolve] = .zero
            if phantom(for: result, address: address) != nil { phantoms.append(i) }
            results.append(result)
        }
        guard !phantoms.isEmpty else { return results }
        let checked = await boundedConcurrently(phantoms, width: width) { [results] i in
            var result = results[i]
            let address = rounds[i].prober.batchAddress!
            await TrafficMeter.$current.withValue(meters[i]) {
                await rounds[i].prober.askPhantom(&result, address: address, deadline: rounds[i].deadline)
            }
            result.duration = max(result.duration, start.duration(to: clock.now))
            return (i, result)
        }
        for (i, result) in checked { results[i] = result }
        return results
    }
}
