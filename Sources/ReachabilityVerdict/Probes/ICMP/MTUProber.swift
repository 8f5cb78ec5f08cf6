/// Measures the path MTU to one host in one round trip: don't-fragment ICMP echoes of several
/// sizes at once (`sizes(expect:family:)`), the largest that comes back wins. When a router
/// reports "fragmentation needed" / "packet too big" with its next hop's MTU and that size was
/// not sent, one more echo of exactly that size follows in the time left, so a router that
/// reports gives the exact MTU; a path that filters those reports (a black hole) is measured to
/// the ladder's step (20 bytes between `expect - 220` and `expect`).
///
/// What it can prove: an echo of N bytes came back from the target with DF set, so every link
/// on the way there and back carries N-byte packets now. It says nothing about larger sizes
/// than those sent (at most `max(expect, 1500)`).
///
/// Result: `success` when the measured MTU is at least `expect`; failure `mtu` when small echoes
/// came back but not those of `expect` bytes (the internet works for small packets only); when
/// no echo comes back the reason is the ICMP prober's (`timeout`, `unreachable`, …) and there is
/// no measurement. `ProbeResult.mtu` holds the measured size; phase `rtt` is the smallest
/// echo's round trip.
package struct MTUProber: Prober {
    package struct Configuration: Sendable, Equatable, ValidatedProbeConfiguration {
        package var host: String
        package var family: FamilyPreference
        /// The path MTU the path must carry (IP packet bytes); below it the probe fails with `mtu`.
        package var expect: Int
        package var interface: String?
        package var mode: ICMPSocketMode

        /// The smallest size an MTU probe may expect: IPv6's minimum link MTU, above IPv4's 576.
        package static let expectRange = 576...65_535
        /// The path MTU a path must carry by default (`--probe.mtu.expect`, the file's `mtu.expect`): Ethernet's.
        package static let defaultExpect = 1500

        package init(
            host: String, family: FamilyPreference = .any, expect: Int = defaultExpect, interface: String? = nil,
            mode: ICMPSocketMode = .auto
        ) {
            self.host = host
            self.family = family
            self.expect = expect
            self.interface = interface
            self.mode = mode
        }

        /// Throws the first setting that cannot work, with its field.
        package func validate() throws(ProbeConfigError) {
            if host.isEmpty { throw ProbeConfigError(.target, "host is empty") }
            if !Self.expectRange.contains(expect) {
                throw ProbeConfigError(
                    .mtuExpect,
                    "expected MTU \(expect) is outside \(Self.expectRange.lowerBound)…\(Self.expectRange.upperBound)")
            }
            if let interface, let problem = InterfaceName.problem(interface) {
                throw ProbeConfigError(.interface, "interface \(interface.debugDescription): \(problem)")
            }
        }
    }

    /// IP and ICMP header bytes in front of an echo's payload.
    package static func overhead(_ family: IPFamily) -> Int { (family == .ipv4 ? 20 : 40) + ICMPPacket.headerSize }

    /// The packet sizes (IP bytes) sent each round, largest first: `top = max(expect, 1500)`,
    /// 1500 and PPPoE's 1492, every 20 bytes from `top` down to `top - 220`, then 1280 (IPv6's
    /// minimum), 1024 and (IPv4) 576, so a much smaller MTU is still bracketed (to 256 or 448
    /// bytes) and an unreachable target is told from a small MTU.
    package static func sizes(expect: Int, family: IPFamily) -> [Int] {
        let top = max(expect, 1500)
        var sizes: Set<Int> = [top, expect, 1500]
        if top > 1492 { sizes.insert(1492) }
        var s = top - top % 20
        while s >= top - 220 {
            sizes.insert(s)
            s -= 20
        }
        sizes.formUnion(family == .ipv4 ? [1280, 1024, 576] : [1280])
        let floor = family == .ipv4 ? 576 : 1280
        return sizes.filter { $0 >= floor && $0 <= top }.sorted(by: >)
    }

    /// Bytes one round sends (the replies are as many again), for the traffic note in docs/configuration.md (`mtu`).
    package static func bytesPerRound(expect: Int, family: IPFamily) -> Int {
        sizes(expect: expect, family: family).reduce(0, +)
    }

    package let configuration: Configuration
    package let engine: ICMPEngine

    package init(_ configuration: Configuration, engine: ICMPEngine = .shared) {
        self.configuration = configuration
        self.engine = engine
    }

    package var type: ProbeType { .mtu }

    package func probe(deadline: ContinuousClock.Instant) async -> ProbeResult {
        let c = configuration
        return await ICMPProber.round(
            "MTU", problem: c.problem, host: c.host, family: c.family, deadline: deadline
        ) { addresses in
            guard let address = addresses.first(where: { c.family.admits($0.ipFamily) }) else {
                return .failure(.dns, "\(c.host) has no \(c.family.rawValue) address", duration: .zero)
            }
            return await measure(address, deadline: deadline)
        }
    }

    /// Sends the ladder at once with 60 % of the time left; when the largest echo back is
    /// below `expect`, sends the sizes above it once more (one lost echo is not a black hole)
    /// and, when a router reported an MTU that was not tried, one echo of exactly that size,
    /// with the rest of the time; then judges.
    package func measure(_ address: SocketAddress, deadline: ContinuousClock.Instant) async -> ProbeResult {
        let c = configuration
        let sizes = Self.sizes(expect: c.expect, family: address.ipFamily)
        let now = ContinuousClock.now
        let firstDeadline = now < deadline ? now + (now.duration(to: deadline) * 3) / 5 : deadline
        var outcomes = await echoes(sizes, to: address, deadline: firstDeadline)
        let best = outcomes.filter { $0.value.isReply }.keys.max() ?? 0
        guard best < c.expect, ContinuousClock.now < deadline else {
            return Self.judge(outcomes, expect: c.expect, address: address)
        }
        var again = sizes.filter { $0 > best }
        if let reported = Self.followUp(outcomes, best: best, top: sizes.first ?? c.expect, family: address.ipFamily) {
            again.append(reported)
        }
        // Only the small sizes answered (or nothing did): a target that is down is not retried.
        guard best > 0 || outcomes.values.contains(where: { $0.reportedMTU != nil }) else {
            return Self.judge(outcomes, expect: c.expect, address: address)
        }
        for (size, outcome) in await echoes(again, to: address, deadline: deadline)
        where outcomes[size] == nil || outcome.isReply || outcome.reportedMTU != nil {
            outcomes[size] = outcome
        }
        return Self.judge(outcomes, expect: c.expect, address: address)
    }

    /// The size a router reported (the smallest), when it is worth one more echo: larger than
    /// what came back, smaller than what drew the report, within the ladder, not yet tried. A
    /// report is network input: a forged "packet too big" of 4 GB buys nothing.
    package static func followUp(_ outcomes: [Int: ICMPEchoOutcome], best: Int, top: Int, family: IPFamily) -> Int? {
        var candidate: Int?
        for (size, outcome) in outcomes {
            guard let reported = outcome.reportedMTU, reported > best, reported < size, reported <= top,
                reported >= (family == .ipv4 ? 68 : 1280), outcomes[reported] == nil
            else { continue }
            candidate = min(candidate ?? reported, reported)
        }
        return candidate
    }

    /// One DF echo per size, all at once; the outcome of each by size.
    private func echoes(_ sizes: [Int], to address: SocketAddress, deadline: ContinuousClock.Instant) async
        -> [Int: ICMPEchoOutcome]
    {
        let c = configuration
        let engine = engine
        let overhead = Self.overhead(address.ipFamily)
        return await withTaskGroup(of: (Int, ICMPEchoOutcome).self) { group in
            for size in sizes {
                group.addTask {
                    let outcome = await engine.echo(
                        to: address, mode: c.mode, interface: c.interface, payloadSize: size - overhead,
                        dontFragment: true, deadline: deadline)
                    return (size, outcome)
                }
            }
            var out: [Int: ICMPEchoOutcome] = [:]
            for await (size, outcome) in group { out[size] = outcome }
            return out
        }
    }

    /// The result of a round's echoes by packet size.
    package static func judge(_ outcomes: [Int: ICMPEchoOutcome], expect: Int, address: SocketAddress) -> ProbeResult {
        let sizes = outcomes.keys.sorted(by: >)
        let replied = sizes.filter { outcomes[$0]!.isReply }
        guard let best = replied.first else {
            // Nothing came back: not an MTU measurement, an unreachable target.
            var result = ICMPProber.summarize(
                sizes.map { outcomes[$0]! }, address: address, duration: .zero, dontFragment: true)
            if result.reason == .mtu { result.reason = .unreachable }
            result.icmp = nil  // not an echo probe: no icmp_* series for it
            result.detail =
                "no echo of any size came back (\(sizes.last ?? 0)–\(sizes.first ?? 0) bytes): " + result.detail
            return result
        }
        let smallest = replied.last!
        var result = ProbeResult(status: .success, duration: .zero, address: address.ip, family: address.ipFamily)
        result.mtu = best
        if case .reply(let rtt, _)? = outcomes[smallest] { result.phases[.rtt] = rtt }
        let lost = sizes.filter { $0 > best }
        let reports = lost.compactMap { outcomes[$0] }.filter { if case .tooBig = $0 { true } else { false } }
        let reported = reports.compactMap(\.reportedMTU).min()
        var why: String
        if let reported {
            why = "a router reported next-hop MTU \(reported)" + (reported == best ? "" : " (not confirmed by an echo)")
        } else if !reports.isEmpty {
            why = "a router reported \"fragmentation needed\" without its MTU"
        } else if lost.contains(where: { if case .notSent(.mtu, _) = outcomes[$0]! { true } else { false } }) {
            why = "larger sizes do not fit the local interface"
        } else if lost.isEmpty {
            why = "every size came back"
        } else {
            why = "larger echoes vanished without a \"fragmentation needed\" (a path-MTU black hole)"
        }
        result.detail =
            "path MTU \(best) bytes to \(address.ip) (\(replied.count)/\(sizes.count) sizes came back, \(smallest)–\(best)); "
            + why
        if best < expect {
            result.status = .failure
            result.reason = .mtu
            result.detail += "; expected \(expect)"
        }
        return result
    }
}

extension ICMPEchoOutcome {
    package var isReply: Bool {
        if case .reply = self { return true }
        return false
    }

    /// The next-hop MTU a router reported for this echo, if it did.
    package var reportedMTU: Int? {
        if case .tooBig(let mtu, _) = self { return mtu }
        return nil
    }
}
