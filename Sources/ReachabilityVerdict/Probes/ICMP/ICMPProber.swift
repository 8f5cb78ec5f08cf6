/// Pings one host: each round resolves the host afresh (so DNS changes are followed and a DNS
/// failure is a `dns` result, never an exit), then sends `count` echo requests `spacing` apart
/// through the shared `ICMPEngine` and waits for them until the round's deadline.
///
/// Result: `success` if at least one reply came back, with `ICMPDetail` (sent, received, RTTs in
/// send order, TTL/hop limit of the last reply). Phases: `resolve` and `rtt`, the **mean** RTT of
/// the replies (min/max are in the detail text, every RTT in `icmp.rtts`). Failure reasons:
/// `timeout` (sent, nothing came back), `unreachable` (no route, the bound interface is missing,
/// or an ICMP error such as destination unreachable came back), `mtu` (with `dontFragment`: an
/// echo too large for a link, reported by a router or by the local interface), `permission` (a local firewall
/// rejected the send, or neither ping nor raw sockets are allowed), `dns`, `error`. (Linux does
/// not report a firewall's refusal to an IPv6 *ping* socket's send, so that case is `timeout`.)
///
/// Family: the first resolved address that the preference admits. With `.any`, if every echo to
/// that address fails as unreachable (say, an AAAA record on a host without IPv6 routes), the
/// first address of the other family is tried with the time left.
package struct ICMPProber: Prober {
    /// What to ping and how.
    package struct Configuration: Sendable, Equatable, ValidatedProbeConfiguration {
        /// A host name (re-resolved every round) or an IP literal.
        package var host: String
        package var family: FamilyPreference
        /// Echo requests per round.
        package var count: Int
        /// Time between the echo requests of one round (0 sends them back to back).
        package var spacing: Duration
        /// Payload bytes after the 8-byte ICMP header (the first 8 carry a matching nonce).
        package var payloadSize: Int
        /// Interface to bind to (SO_BINDTODEVICE), to probe through one uplink.
        package var interface: String?
        package var mode: ICMPSocketMode
        /// Send with DF set (IPv4) and never fragmented locally (IPv6): an echo too large for a
        /// link fails with `mtu` instead of being fragmented. Off: the kernel's default.
        package var dontFragment = false

        /// Echo requests per round (`--probe.icmp.count`, the file's `icmp.count`).
        package static let defaultCount = 3
        /// Bytes of payload after the ICMP header (ping's default).
        package static let defaultPayloadSize = 56
        package static let maxCount = 1000
        /// The largest payload that fits an IPv4 datagram.
        package static let maxPayloadSize = 65_507

        package init(
            host: String, family: FamilyPreference = .any, count: Int = defaultCount,
            spacing: Duration = .milliseconds(100), payloadSize: Int = defaultPayloadSize, interface: String? = nil,
            mode: ICMPSocketMode = .auto, dontFragment: Bool = false
        ) {
            self.dontFragment = dontFragment
            self.host = host
            self.family = family
            self.count = count
            self.spacing = spacing
            self.payloadSize = payloadSize
            self.interface = interface
            self.mode = mode
        }

        /// Throws the first setting that cannot work, with its field.
        package func validate() throws(ProbeConfigError) {
            if host.isEmpty { throw ProbeConfigError(.target, "host is empty") }
            if !(1...Self.maxCount).contains(count) {
                throw ProbeConfigError(.icmpCount, "count \(count) is outside 1…\(Self.maxCount)")
            }
            if spacing < .zero { throw ProbeConfigError(.icmpSpacing, "spacing \(spacing) is negative") }
            if !(0...Self.maxPayloadSize).contains(payloadSize) {
                throw ProbeConfigError(.icmpSize, "payload size \(payloadSize) is outside 0…\(Self.maxPayloadSize)")
            }
            if let interface, let problem = InterfaceName.problem(interface) {
                throw ProbeConfigError(.interface, "interface \(interface.debugDescription): \(problem)")
            }
        }
    }

    package let configuration: Configuration
    package let engine: ICMPEngine

    /// The address of a round that can go in a slot's batch (`batchRounds`): one echo to an IP
    /// literal the family admits, in a valid configuration; nil when the round needs its own
    /// task (a name to resolve, several spaced echoes, a configuration problem to report).
    package let batchAddress: SocketAddress?
    /// Whether `batchAddress` is loopback or link-local (its replies never need `askPhantom`).
    package let batchAddressIsLocal: Bool

    package init(_ configuration: Configuration, engine: ICMPEngine = .shared) {
        self.configuration = configuration
        self.engine = engine
        let c = configuration
        batchAddress =
            c.count == 1 && c.problem == nil && !c.host.utf8.contains(0)
            ? SocketAddress(ip: c.host).flatMap { c.family.admits($0.ipFamily) ? $0 : nil } : nil
        batchAddressIsLocal = batchAddress.map { AddressLocality.isIntrinsicallyLocal($0.ip) } ?? false
    }

    package var type: ProbeType { .icmp }

    package func probe(deadline: ContinuousClock.Instant) async -> ProbeResult {
        let c = configuration
        return await Self.round(
            "ICMP", problem: c.problem, host: c.host, family: c.family, deadline: deadline
        ) { addresses in
            await ping(addresses, deadline: deadline)
        }
    }

    /// One round of an echo-based probe (`icmp`, `mtu`): a configuration `problem` fails with
    /// `error`, a host name with a NUL or that does not resolve with `dns` (and the `resolve`
    /// phase); otherwise `body` runs with the addresses. Sets the round's duration and its
    /// `resolve` phase.
    package static func round(
        _ kind: String, problem: String?, host: String, family: FamilyPreference, deadline: ContinuousClock.Instant,
        _ body: ([SocketAddress]) async -> ProbeResult
    ) async -> ProbeResult {
        let clock = ContinuousClock()
        let start = clock.now
        if let problem {
            return .failure(.error, "bad \(kind) probe configuration: \(problem)", duration: clock.now - start)
        }
        // C APIs would silently cut the name at a NUL ("127.0.0.1\0junk" -> 127.0.0.1).
        if host.utf8.contains(0) {
            return .failure(.dns, "invalid host name \(host.debugDescription)", duration: clock.now - start)
        }
        let addresses: [SocketAddress]
        do {
            addresses = try await Resolver.resolve(host, family: family, deadline: deadline)
        } catch {
            let elapsed = clock.now - start
            return .failure(.dns, error.message, duration: elapsed, phases: [.resolve: elapsed])
        }
        let resolveTime = clock.now - start
        var result = await body(addresses)
        result.duration = clock.now - start
        result.phases[.resolve] = resolveTime
        return result
    }

    /// The echo part of a round, for resolved `addresses`: the first admitted address, then (for
    /// `.any`) the other family if every echo was unreachable. `duration` and the `resolve`
    /// phase are left for `probe` to fill in.
    package func ping(_ addresses: [SocketAddress], deadline: ContinuousClock.Instant) async -> ProbeResult {
        let clock = ContinuousClock()
        let c = configuration
        guard var address = addresses.first(where: { c.family.admits($0.ipFamily) }) else {
            return .failure(.dns, "\(c.host) has no \(c.family.rawValue) address", duration: .zero)
        }
        var outcomes = await echoes(to: address, deadline: deadline)
        var fallbackNote = ""
        if c.family == .any, outcomes.allSatisfy(Self.isUnreachable),
            let other = addresses.first(where: { $0.ipFamily != address.ipFamily }), clock.now < deadline
        {
            fallbackNote = " (\(address.ip) was unreachable: \(Self.firstProblem(outcomes) ?? "?"))"
            address = other
            outcomes = await echoes(to: address, deadline: deadline)
        }
        var result = Self.summarize(outcomes, address: address, duration: .zero, dontFragment: c.dontFragment)
        result.detail += fallbackNote
        await askPhantom(&result, address: address, deadline: deadline)
        return result
    }

    /// Addresses nobody holds (RFC 5737, RFC 3849): the internet never answers them. The last
    /// of their ranges, where labs and examples (which number from the start) rarely reach.
    package static let phantoms: [IPFamily: String] = [.ipv4: "203.0.113.254", .ipv6: "2001:db8:ffff:ffff::fe"]

    /// Replies that crossed no router from a target that is not loopback or link-local are
    /// either a path that lowers no TTL (a PPP peer, a rootless container's user-mode network,
    /// an on-link host) or a box answering echo for every address. One echo to an address nobody
    /// holds tells them apart: only the box answers it. Sent only in that case, waiting at most
    /// four round trips (at least 100 ms); `OnPathCheck` voids the replies only when it answered.
    package func askPhantom(_ result: inout ProbeResult, address: SocketAddress, deadline: ContinuousClock.Instant)
        async
    {
        guard let phantom = Self.phantom(for: result, address: address), let icmp = result.icmp else { return }
        let rtt = icmp.rtts.max() ?? .zero
        let until = min(deadline, .now + max(.milliseconds(100), rtt * 4))
        let c = configuration
        if case .reply = await engine.echo(
            to: phantom, mode: c.mode, interface: c.interface, payloadSize: c.payloadSize, dontFragment: false,
            deadline: until)
        {
            result.icmp?.phantomReply = phantom.ip
        }
    }

    /// The address `askPhantom` asks after `result`, or nil when the replies crossed a router,
    /// came from loopback or link-local, or there were none.
    package static func phantom(for result: ProbeResult, address: SocketAddress) -> SocketAddress? {
        guard result.succeeded, let icmp = result.icmp, icmp.hops == 0,
            !AddressLocality.isIntrinsicallyLocal(address.ip)
        else { return nil }
        return phantoms[address.ipFamily].flatMap { SocketAddress(ip: $0) }
    }

    /// Sends the round's echoes (echo i at `spacing * i`, none after the deadline) and returns
    /// their outcomes in send order.
    package func echoes(to address: SocketAddress, deadline: ContinuousClock.Instant) async -> [ICMPEchoOutcome] {
        let c = configuration
        let engine = engine
        if c.count == 1 {
            return [
                await engine.echo(
                    to: address, mode: c.mode, interface: c.interface, payloadSize: c.payloadSize,
                    dontFragment: c.dontFragment, deadline: deadline)
            ]
        }
        let base = ContinuousClock.now
        return await withTaskGroup(of: (Int, ICMPEchoOutcome).self) { group in
            for i in 0..<c.count {
                let sendAt = base + c.spacing * i
                if i > 0, sendAt >= deadline { break }
                group.addTask {
                    if i > 0, c.spacing > .zero { await Reactor.shared.sleep(until: sendAt) }
                    if Task.isCancelled { return (i, .notSent(.error, "cancelled")) }
                    return (
                        i,
                        await engine.echo(
                            to: address, mode: c.mode, interface: c.interface, payloadSize: c.payloadSize,
                            dontFragment: c.dontFragment, deadline: deadline)
                    )
                }
            }
            var outcomes: [ICMPEchoOutcome?] = Array(repeating: nil, count: c.count)
            for await (i, outcome) in group { outcomes[i] = outcome }
            return outcomes.compactMap { $0 }
        }
    }

    package static func isUnreachable(_ outcome: ICMPEchoOutcome) -> Bool {
        switch outcome {
        case .icmpError, .hopError, .notSent(.unreachable, _): true
        default: false
        }
    }

    package static func firstProblem(_ outcomes: [ICMPEchoOutcome]) -> String? {
        for o in outcomes {
            switch o {
            case .icmpError, .hopError, .tooBig: return o.errorText
            case .notSent(_, let text), .abandoned(let text): return text
            case .reply, .timedOut: continue
            }
        }
        return nil
    }

    /// Turns echo outcomes into a result. Without replies the reason is the most telling one seen:
    /// permission, then unreachable, then error, then timeout.
    /// Without `dontFragment`, a router's "fragmentation needed" is an ordinary `unreachable`
    /// (the kernel fragments the next echo), not `mtu`.
    package static func summarize(
        _ outcomes: [ICMPEchoOutcome], address: SocketAddress, duration: Duration, dontFragment: Bool = false
    ) -> ProbeResult {
        var rtts: [Duration] = []
        var ttl: Int?
        var reasons: Set<FailureReason> = []
        for o in outcomes {
            switch o {
            case .reply(let rtt, let t):
                rtts.append(rtt)
                if let t { ttl = t }
            case .timedOut: reasons.insert(.timeout)
            case .icmpError, .hopError: reasons.insert(.unreachable)
            case .tooBig: reasons.insert(dontFragment ? .mtu : .unreachable)
            case .notSent(let reason, _): reasons.insert(reason)
            case .abandoned: reasons.insert(.error)
            }
        }
        let sent = outcomes.filter(\.wasSent).count
        let detail = ICMPDetail(sent: sent, received: rtts.count, rtts: rtts, ttl: ttl)
        let counts = "\(rtts.count)/\(outcomes.count) replies from \(address.ip)"
        var result = ProbeResult(
            status: .failure, duration: duration, address: address.ip, family: address.ipFamily, icmp: detail)
        if !rtts.isEmpty {
            let total = rtts.reduce(Duration.zero, +)
            let mean = total / rtts.count
            result.status = .success
            result.phases[.rtt] = mean
            let minimum = rtts.min() ?? mean
            let maximum = rtts.max() ?? mean
            result.detail =
                "\(counts), rtt min/avg/max \(milliseconds(minimum))/\(milliseconds(mean))/\(milliseconds(maximum)) ms"
                + (ttl.map { ", ttl \($0)" + (ICMPDetail.hops(ttl: $0).map { " (\($0) hops)" } ?? "") } ?? "")
            return result
        }
        let order: [FailureReason] = [.permission, .mtu, .unreachable, .error, .dns]
        let reason = order.first(where: reasons.contains) ?? .timeout
        result.reason = reason
        if reason == .timeout {
            result.detail = "\(counts): no reply before the deadline"
        } else {
            let text = outcomes.lazy.compactMap { o -> String? in
                switch o {
                case .icmpError where reason == .unreachable, .hopError where reason == .unreachable: o.errorText
                case .tooBig(_, let t) where reason == .mtu || reason == .unreachable: t
                case .notSent(let r, let t) where r == reason: t
                case .abandoned(let t) where reason == .error: t
                default: nil
                }
            }.first
            result.detail = "\(counts): \(text ?? reason.rawValue)"
        }
        return result
    }

    /// A duration in milliseconds with three decimals ("0.042"), without Foundation.
    package static func milliseconds(_ d: Duration) -> String {
        let (seconds, attoseconds) = d.components
        let micros = max(0, seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
        let fraction = String(micros % 1000)
        return "\(micros / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }
}
