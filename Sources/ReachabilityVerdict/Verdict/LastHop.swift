/// The farthest router that still answers toward a destination the scope cannot reach: the
/// `upstream` fault's "breaks after hop 3 (198.51.100.1), 2 hops past the gateway".
///
/// What it proves: a node at that distance exists and sent an ICMP error quoting our
/// TTL-limited echo (time exceeded, or unreachable). Never that anything beyond it works, and
/// never a verdict: the trace runs after the verdict is decided and only names a place. An
/// on-path box can forge the errors (name any address, at any distance) or stay silent; a router
/// that sends no time-exceeded shows as a silent hop, and the last hop that answers may then be
/// closer than the break.
public struct LastHop: Sendable, Equatable {
    /// Distance from this host: 1 is the first router (the gateway, on a route with one).
    public var hop: Int
    /// The source address of the answer.
    public var address: String
    /// The address the trace went toward (a failing probe's target).
    public var destination: String
    /// The destination itself answered the echo at `hop`: the break is not on the ICMP path.
    public var reached: Bool
    /// What the hop said when it was not "time exceeded" ("destination unreachable (net unreachable)").
    public var error: String?
    /// Hops closer than `hop` that did not answer (routers that send no time-exceeded).
    public var silentHops: [Int]
    /// The gateway of the route traced out of, when it has one (it is hop 1).
    public var gateway: String?

    /// An answer from `address` at `hop` on the way to `destination`.
    public init(
        hop: Int, address: String, destination: String, reached: Bool = false, error: String? = nil,
        silentHops: [Int] = [], gateway: String? = nil
    ) {
        self.hop = hop
        self.address = address
        self.destination = destination
        self.reached = reached
        self.error = error
        self.silentHops = silentHops
        self.gateway = gateway
    }

    /// Hops between the gateway and `hop` (0: the gateway itself); nil without a gateway or
    /// when the destination answered.
    public var pastGateway: Int? { gateway == nil || reached ? nil : hop - 1 }

    /// "breaks after hop 3 (198.51.100.1), 2 hops past the gateway, toward 203.0.113.9".
    public var description: String {
        if reached {
            return
                "yet \(destination) answers echoes at hop \(hop): its path carries ICMP, another protocol or port fails"
        }
        var out = error.map { "hop \(hop) (\(address)) answers \($0)" } ?? "breaks after hop \(hop) (\(address))"
        if let past = pastGateway {
            out += past == 0 ? ", the gateway" : ", \(past) hop\(past == 1 ? "" : "s") past the gateway"
        }
        out += ", toward \(destination)"
        if !silentHops.isEmpty {
            let list = silentHops.prefix(5).map(String.init).joined(separator: ", ")
            out += " (hop\(silentHops.count == 1 ? "" : "s") \(list)\(silentHops.count > 5 ? ", …" : "") silent)"
        }
        return out
    }
}

/// What the echo sent with one hop limit got.
package enum HopAnswer: Sendable, Equatable {
    /// A node at this distance said "time exceeded": it forwards up to here.
    case timeExceeded(String)
    /// A node at this distance answered with another ICMP error (unreachable, prohibited…).
    case error(String, text: String)
    /// The destination itself answered.
    case reached(String)
    /// Nothing came back before the deadline.
    case silent
    /// Not sent (no socket, no route): proves nothing at this distance.
    case notSent(String)

    package init(_ outcome: ICMPEchoOutcome, destination: String) {
        switch outcome {
        case .reply: self = .reached(destination)
        case .hopError(let e) where e.kind == .timeExceeded: self = .timeExceeded(e.reporter)
        case .hopError(let e): self = .error(e.reporter, text: e.text)
        case .icmpError(let t), .tooBig(_, let t): self = .error("?", text: t)
        case .timedOut, .abandoned: self = .silent
        case .notSent(_, let t): self = .notSent(t)
        }
    }
}

/// A last-hop trace toward one destination: echoes with hop limits 1…n, sent at once.
package struct LastHopTrace: Sendable, Equatable {
    package var destination: String
    /// `answers[0]` is hop 1.
    package var answers: [HopAnswer]

    package init(destination: String, answers: [HopAnswer]) {
        self.destination = destination
        self.answers = answers
    }

    /// The farthest hop that answered; the destination's own reply wins (its nearest hop).
    /// A router's "unreachable" answers every echo that reaches it, whatever its hop limit: the
    /// nearest such answer is its distance. A routing loop answers every hop past it with the
    /// same routers: the first hop whose address comes back later is where the loop begins.
    /// `gateway`: the traced route's gateway, when it has one.
    package func lastHop(gateway: String?) -> LastHop? {
        if let i = answers.firstIndex(where: { if case .reached = $0 { true } else { false } }) {
            return LastHop(hop: i + 1, address: destination, destination: destination, reached: true, gateway: gateway)
        }
        func silent(before i: Int) -> [Int] { (0..<i).filter { answers[$0] == .silent }.map { $0 + 1 } }
        if let i = answers.firstIndex(where: { if case .error = $0 { true } else { false } }),
            case .error(let a, let text) = answers[i]
        {
            return LastHop(
                hop: i + 1, address: a, destination: destination, error: text, silentHops: silent(before: i),
                gateway: gateway)
        }
        let exceeded: [(Int, String)] = answers.enumerated().compactMap { i, answer in
            if case .timeExceeded(let a) = answer { (i, a) } else { nil }
        }
        guard let last = exceeded.last else { return nil }
        if let (i, a) = exceeded.first(where: { hop in exceeded.contains { $0.1 == hop.1 && $0.0 > hop.0 } }) {
            return LastHop(
                hop: i + 1, address: a, destination: destination, error: "a routing loop (it answers again further on)",
                silentHops: silent(before: i), gateway: gateway)
        }
        return LastHop(
            hop: last.0 + 1, address: last.1, destination: destination, silentHops: silent(before: last.0),
            gateway: gateway)
    }

    /// The fault detail's trace part: the last hop, or why there is none.
    package func summary(gateway: String?) -> String {
        if let last = lastHop(gateway: gateway) { return last.description }
        if let problem = answers.lazy.compactMap({ if case .notSent(let t) = $0 { t } else { nil } }).first {
            return "trace toward \(destination) not sent: \(FaultLocator.clip(problem, to: 80))"
        }
        return "no hop within \(answers.count) answers toward \(destination)"
    }
}

extension LastHopTrace {
    /// The address a route's trace goes toward: the first failing probe of the scope that has a
    /// target address of the route's family (ICMP probes first: their echoes are what the trace
    /// sends too). Nil: nothing to trace toward (every failing probe failed before an address,
    /// or only toward addresses no router is on the way to: loopback, link-local, multicast).
    package static func destination(in entries: [RoundEntry], family: IPFamily) -> String? {
        // Probes that failed out there (no answer, or an ICMP error): not a local refusal.
        let failing = entries.filter {
            !$0.result.succeeded && [.timeout, .unreachable, .loss].contains($0.result.reason ?? .timeout)
        }
        let ordered = failing.filter { $0.type == .icmp } + failing.filter { $0.type != .icmp }
        return ordered.lazy.compactMap { e -> String? in
            guard let address = e.result.address, let parsed = SocketAddress(ip: address),
                parsed.ipFamily == family, isRouted(parsed.addressBytes)
            else { return nil }
            return parsed.ip
        }.first
    }

    /// Whether routers can be on the way to an address: not unspecified, loopback, link-local,
    /// multicast or broadcast (a subnet's broadcast address is left to the probes' own failure reasons).
    package static func isRouted(_ b: [UInt8]) -> Bool {
        if b.count == 4 { return !(b[0] == 0 || b[0] == 127 || (b[0] == 169 && b[1] == 254) || b[0] >= 224) }
        guard b.count == 16 else { return false }
        if b[0..<10].allSatisfy({ $0 == 0 }), b[10] == 0xFF, b[11] == 0xFF { return isRouted(Array(b[12..<16])) }
        if b[0..<15].allSatisfy({ $0 == 0 }) { return false }  // :: and ::1
        return !(b[0] == 0xFF || (b[0] == 0xFE && b[1] & 0xC0 == 0x80))
    }
}

extension HopAnswer {
    package var isRouterAnswer: Bool {
        switch self {
        case .timeExceeded, .error: true
        default: false
        }
    }
}
