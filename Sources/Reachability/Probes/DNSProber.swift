/// Resolves one name per round and judges the answer: through the system resolver, or by a
/// direct UDP query to one server (which tells NXDOMAIN, SERVFAIL and REFUSED apart). Answers
/// that put a public name on a private address are reported as a portal (`DNSPortalRule`).
///
/// Failure reasons: `nxdomain` (rcode 3), `servfail` (2), `refused` (rcode 5, or ICMP port
/// unreachable), `dns` (other rcodes; any system-resolver error), `timeout`, `no_answer`
/// (NOERROR without a matching address), `protocol` (a malformed reply), `unreachable`,
/// `permission`, `error`. Not for: resolving targets of other probes (that is `Resolver`).
package struct DNSProber: Prober {
    package let config: DNSProbeConfig
    package var type: ProbeType { .dns }

    package init(config: DNSProbeConfig) { self.config = config }

    package func probe(deadline: ContinuousClock.Instant) async -> ProbeResult {
        let start = ContinuousClock.now
        if let server = config.server {
            return await queryServer(server, start: start, deadline: deadline)
        }
        return await querySystemResolver(start: start, deadline: deadline)
    }

    // MARK: System resolver

    private func querySystemResolver(start: ContinuousClock.Instant, deadline: ContinuousClock.Instant) async
        -> ProbeResult
    {
        let family: FamilyPreference = config.queryType == .a ? .ipv4 : .ipv6
        do {
            let found = try await Resolver.resolve(config.name, family: family, deadline: deadline)
            let elapsed = ContinuousClock.now - start
            let addresses = found.map(\.ip)
            return judge(
                addresses: addresses, detail: DNSDetail(rcode: nil, answers: addresses.count, addresses: addresses),
                via: "system resolver", elapsed: elapsed, server: nil)
        } catch {
            let elapsed = ContinuousClock.now - start
            return .failure(
                error.timedOut ? .timeout : .dns, error.message, duration: elapsed, phases: [.resolve: elapsed])
        }
    }

    // MARK: Direct UDP query

    private func queryServer(_ server: SocketAddress, start: ContinuousClock.Instant, deadline: ContinuousClock.Instant)
        async -> ProbeResult
    {
        let id = UInt16.random(in: 0...UInt16.max)
        func fail(_ reason: FailureReason, _ text: String) -> ProbeResult {
            var r = ProbeResult.failure(
                reason, "\(config.queryType.rawValue) \(config.name) @\(server): \(text)",
                duration: ContinuousClock.now - start)
            r.address = server.ip
            r.family = server.ipFamily
            return r
        }
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
                    case .answer(let response): return conclude(response, server: server, start: start)
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
        return fail(.timeout, "no reply to \(sent) queries\(ignored)")
    }

    /// Turns a matched response into the round's result.
    private func conclude(_ response: DNSResponse, server: SocketAddress, start: ContinuousClock.Instant) -> ProbeResult
    {
        let elapsed = ContinuousClock.now - start
        let rcode = response.header.rcode
        let addresses = response.addresses(for: config.name, type: config.queryType)
        let detail = DNSDetail(
            rcode: rcode, answers: response.answers.count, addresses: addresses, truncated: response.header.isTruncated)
        let via = "@\(server)"
        guard rcode == 0 else {
            let reason: FailureReason =
                switch rcode {
                case 2: .servfail
                case 3: .nxdomain
                case 5: .refused
                default: .dns
                }
            var r = ProbeResult.failure(
                reason, "\(config.queryType.rawValue) \(config.name) \(via): \(Self.rcodeName(rcode))",
                duration: elapsed, phases: [.resolve: elapsed])
            r.dns = detail
            r.address = server.ip
            r.family = server.ipFamily
            return r
        }
        return judge(addresses: addresses, detail: detail, via: via, elapsed: elapsed, server: server)
    }

    /// The verdict on a NOERROR answer: no address, a portal signal, or success.
    private func judge(addresses: [String], detail: DNSDetail, via: String, elapsed: Duration, server: SocketAddress?)
        -> ProbeResult
    {
        let what = "\(config.queryType.rawValue) \(config.name) \(via)"
        let tc = detail.truncated ? " (TC set: truncated)" : ""
        var result: ProbeResult
        if addresses.isEmpty {
            result = .failure(
                .noAnswer, "\(what): no \(config.queryType.rawValue) records in \(detail.answers) answers\(tc)",
                duration: elapsed)
        } else {
            let offending = DNSPortalRule.offendingAddresses(
                addresses, name: config.name, allowPrivateAnswers: config.allowPrivateAnswers)
            if offending.isEmpty {
                result = ProbeResult(
                    status: .success, detail: "\(what): \(addresses.joined(separator: ", "))\(tc)", duration: elapsed)
            } else {
                result = ProbeResult(
                    status: .portal, reason: .privateAddress,
                    detail:
                        "\(what): public name answered with private address \(offending.joined(separator: ", "))\(tc)",
                    duration: elapsed)
            }
        }
        result.phases = [.resolve: elapsed]
        result.dns = detail
        result.address = server?.ip
        result.family = server?.ipFamily
        return result
    }

    static func rcodeName(_ rcode: Int) -> String {
        switch rcode {
        case 0: "NOERROR"
        case 1: "FORMERR"
        case 2: "SERVFAIL"
        case 3: "NXDOMAIN"
        case 4: "NOTIMP"
        case 5: "REFUSED"
        default: "rcode \(rcode)"
        }
    }
}
