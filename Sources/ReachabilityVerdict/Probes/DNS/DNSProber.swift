/// Resolves one name per round and judges the answer: through the system resolver, or by a
/// direct query to one server over UDP, TCP or TLS (which tells NXDOMAIN, SERVFAIL and REFUSED
/// apart). Answers that put a public name on a private address are reported as a portal
/// (`DNSPortalRule`); `expect_answer` checks what the answer holds.
///
/// Over UDP, an answer with TC set is asked again over TCP; and when the datagrams go
/// unanswered or are refused by ICMP, the same query goes to the same server over TCP in the
/// round's last third: if that answers, the reason is `dns_udp_blocked`, not a bare timeout.
///
/// Failure reasons: `nxdomain` (rcode 3), `servfail` (2), `refused` (rcode 5, or ICMP port
/// unreachable), `dns` (other rcodes; any system-resolver error), `timeout`, `no_answer`
/// (NOERROR without a matching record), `answer_mismatch`, `dns_udp_blocked`, `tls`,
/// `protocol` (a malformed reply), `unreachable`, `reset`, `permission`, `error`.
/// Phases: `resolve` is the whole lookup; a direct query adds `connect`, `tls` and `query`.
/// Not for: resolving targets of other probes (that is `Resolver`).
package struct DNSProber: Prober {
    package let config: DNSProbeConfig
    package var type: ProbeType { .dns }

    /// Where this network's NAT64 prefixes are kept: the table given (tests), else the running
    /// round's (`NAT64Prefixes.round`: its monitor's), else this prober's own.
    private let given: NAT64Prefixes?
    private let own = NAT64Prefixes()
    package var nat64: NAT64Prefixes { given ?? NAT64Prefixes.round ?? own }

    package init(config: DNSProbeConfig, nat64: NAT64Prefixes? = nil) {
        self.config = config
        given = nat64
    }

    /// What one exchange with the server gave.
    package enum Outcome {
        case response(DNSResponse)
        case failed(ProbeFailure)
    }

    package func probe(deadline: ContinuousClock.Instant) async -> ProbeResult {
        let start = ContinuousClock.now
        guard let server = config.server else { return await querySystemResolver(start: start, deadline: deadline) }
        var phases: [ProbePhase: Duration] = [:]
        var transport = config.transport
        var note = ""
        var outcome: Outcome
        switch config.transport {
        case .tcp, .tls:
            outcome = await queryStream(server, tls: config.transport == .tls, deadline: deadline, phases: &phases)
        case .udp:
            let udpDeadline = config.tcpFallback ? start + start.duration(to: deadline) * 2 / 3 : deadline
            outcome = await queryUDP(server, deadline: udpDeadline)
            phases[.query] = ContinuousClock.now - start
            switch outcome {
            case .response(let udp) where udp.header.isTruncated:
                let tcp = await queryStream(server, tls: false, deadline: deadline, phases: &phases)
                if case .failed(let f) = tcp {
                    note = "; the TCP retry failed: \(f.message)"
                } else {
                    (outcome, transport, note) = (tcp, .tcp, "; truncated over UDP, answered over TCP")
                }
            case .failed(let udp) where config.tcpFallback && [.timeout, .refused, .unreachable].contains(udp.reason):
                var tcpPhases: [ProbePhase: Duration] = [:]
                let tcp = await queryStream(server, tls: false, deadline: deadline, phases: &tcpPhases)
                guard case .response(let answer) = tcp else {
                    if case .failed(let f) = tcp { note = "; over TCP too: \(f.message)" }
                    break
                }
                let ms = ((tcpPhases[.connect] ?? .zero) + (tcpPhases[.query] ?? .zero)).milliseconds
                outcome = .failed(
                    ProbeFailure(
                        .dnsUDPBlocked,
                        "\(udp.message); the same server answered over TCP (\(DNSAnswerJudge.rcodeName(answer.header.rcode)) in \(ms) ms): DNS over UDP is blocked on the path"
                    ))
            default:
                break
            }
        }
        let elapsed = ContinuousClock.now - start
        phases[.resolve] = elapsed
        switch outcome {
        case .failed(let f):
            var r = ProbeResult(
                status: f.status, reason: f.reason, detail: "\(what) @\(server): \(f.message)\(note)",
                duration: elapsed, phases: phases)
            r.address = server.ip
            r.family = server.ipFamily
            return r
        case .response(let response):
            if config.queryType.isAddress {
                let values = response.records(for: config.name, type: config.queryType).map(\.presentation)
                await discoverNAT64(for: values, deadline: deadline)
            }
            var r = answers.conclude(response, via: "@\(server) over \(transport.rawValue)\(note)", elapsed: elapsed)
            r.phases = phases
            r.dns?.transport = transport.rawValue
            r.address = server.ip
            r.family = server.ipFamily
            return r
        }
    }

    private var what: String { "\(config.queryType.rawValue) \(config.name)" }

    /// Learns this network's NAT64 prefixes (RFC 7050) before judging an answer that needs them.
    private func discoverNAT64(for addresses: [String], deadline: ContinuousClock.Instant) async {
        guard
            DNSPortalRule.needsNAT64(
                addresses, name: config.name, allowPrivateAnswers: config.allowPrivateAnswers)
        else { return }
        let config = self.config
        await nat64.refresh {
            // Its own time: a slow main query must not make the discovery fail.
            let deadline = max(deadline, .now + .seconds(1))
            guard let server = config.server else {
                do {
                    return try await Resolver.resolve(NAT64Prefix.discoveryName, family: .ipv6, deadline: deadline)
                        .map(\.addressBytes)
                } catch { return (error as? Resolver.Failure)?.notFound == true ? [] : nil }
            }
            // The probe's own server, over its transport; private answers allowed (no recursion).
            guard
                let ask = try? DNSProbeConfig(
                    name: NAT64Prefix.discoveryName, queryType: .aaaa,
                    server: "\(config.transport.rawValue)://\(server)", interface: config.interface,
                    allowPrivateAnswers: true, tlsServerName: config.tlsServerName, caFile: config.caFile,
                    insecureSkipVerify: config.insecureSkipVerify, tcpFallback: false)
            else { return nil }
            let answer = await DNSProber(config: ask).probe(deadline: deadline)
            if answer.reason == .nxdomain || answer.reason == .noAnswer { return [] }
            guard answer.succeeded else { return nil }
            return (answer.dns?.addresses ?? []).compactMap { SocketAddress(ip: $0)?.addressBytes }
        }
    }

    // MARK: System resolver

    private func querySystemResolver(start: ContinuousClock.Instant, deadline: ContinuousClock.Instant) async
        -> ProbeResult
    {
        do {
            let family: FamilyPreference = config.queryType == .a ? .ipv4 : .ipv6
            let found = try await Resolver.resolve(config.name, family: family, deadline: deadline)
            let elapsed = ContinuousClock.now - start
            let addresses = found.map(\.ip)
            await discoverNAT64(for: addresses, deadline: deadline)
            var r = answers.judge(
                values: addresses, detail: DNSDetail(rcode: nil, answers: addresses.count, addresses: addresses),
                via: "system resolver", elapsed: elapsed)
            r.phases = [.resolve: elapsed]
            return r
        } catch {
            let elapsed = ContinuousClock.now - start
            return .failure(
                error.timedOut ? .timeout : .dns, error.message, duration: elapsed, phases: [.resolve: elapsed])
        }
    }

    // MARK: Direct UDP query

    // Long on purpose: one send/wait/drain loop against the deadline, each exit its own result.
    private func queryUDP(_ server: SocketAddress, deadline: ContinuousClock.Instant) async -> Outcome {
        let id = UInt16.random(in: 0...UInt16.max)
        func fail(_ reason: FailureReason, _ text: String) -> Outcome { .failed(ProbeFailure(reason, text)) }
        let query: [UInt8]
        do {
            query = try DNSMessage.encodeQuery(name: config.name, type: config.queryType, id: id)
        } catch {
            return fail(.error, "\(error)")  // unreachable in practice: the config validated the name
        }
        let socket: UDPSocket
        do {
            socket = try UDPSocket(connectedTo: server, interface: config.interface)
        } catch {
            return fail(error.failureReason, error.description)
        }
        var exchange = DNSExchange(id: id, name: config.name, type: config.queryType)
        var sent = 0
        var nextSend = ContinuousClock.now
        while true {
            let now = ContinuousClock.now
            if now >= deadline { break }
            if now >= nextSend, sent < DNSProbeConfig.maxTransmissions {
                if let error = socket.send(query) { return fail(error.failureReason, error.description) }
                sent += 1
                nextSend = now + config.retransmitInterval
            }
            let wakeAt = sent < DNSProbeConfig.maxTransmissions ? min(deadline, nextSend) : deadline
            switch await socket.waitReadable(deadline: wakeAt) {
            case .timedOut: continue
            case .cancelled: return fail(.error, "cancelled")
            case .ready: break
            }
            // Drain what is queued; a bounded number per wake-up so a flood cannot starve the clock check.
            drain: for _ in 0..<32 {
                switch socket.receive() {
                case .wouldBlock:
                    break drain
                case .failed(let error):
                    return fail(error.failureReason, error.description)
                case .datagram(let packet):
                    switch exchange.consider(packet) {
                    case .ignored: continue drain
                    case .malformed(let error): return fail(.protocolError, "malformed reply: \(error)")
                    case .answer(let response): return .response(response)
                    }
                }
            }
            if exchange.ignored >= DNSExchange.maxIgnored {
                return fail(.protocolError, "gave up after \(exchange.ignored) unmatched replies (\(exchange.summary))")
            }
        }
        if exchange.ignoredMalformed > 0 {
            return fail(.protocolError, "no valid reply before the deadline; ignored \(exchange.summary)")
        }
        let ignored = exchange.ignored > 0 ? "; ignored \(exchange.summary)" : ""
        return fail(.timeout, "no reply to \(sent) queries over UDP\(ignored)")
    }

    /// Judges this probe's matched answers (shared with DNS over HTTPS).
    private var answers: DNSAnswerJudge {
        DNSAnswerJudge(
            name: config.name, queryType: config.queryType, allowPrivateAnswers: config.allowPrivateAnswers,
            expectAnswer: config.expectAnswer, nat64: nat64.current)
    }
}
