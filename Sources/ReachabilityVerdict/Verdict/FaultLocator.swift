/// Where the path to the internet breaks, for a scope that is not `full` (the `location` label of
/// `reachability_fault_info`).
public enum FaultLocation: String, Sendable, CaseIterable, Codable {
    /// Nothing is broken: the scope is `full` and every probe of it succeeds.
    case none
    /// The host's own path is unusable: no interface up with carrier, no address, no default
    /// route (the `none` verdict).
    case link
    /// The path is up but the default gateway does not answer: its neighbour resolution (ARP,
    /// IPv6 neighbour discovery) fails, or it does not answer an echo.
    case gateway
    /// The gateway answers, nothing beyond it does (or only small packets pass: an MTU black hole).
    case upstream
    /// Addresses are reachable, name resolution fails.
    case dns
    /// The network intercepts: a captive portal (the `portal` verdict).
    case portal
    /// The internet works but some probe targets do not (the scope stays `full`).
    case target
}

/// A scope's fault: where it breaks and what showed it ("gateway 192.168.1.1 on wlan0: no ARP reply").
public struct Fault: Sendable, Equatable {
    /// Where the path breaks.
    public var location: FaultLocation
    /// What showed it, a sentence for people ("gateway 192.168.1.1 on wlan0: no ARP reply");
    /// may be empty.
    public var detail: String
    /// For `upstream` when nothing beyond the host answers: the farthest router that still
    /// answers a TTL-limited echo toward a failing target (also in `detail`). Nil when no trace ran.
    public var lastHop: LastHop?

    /// A fault at `location`, with `detail` and the trace's `lastHop` when one ran.
    public init(_ location: FaultLocation, _ detail: String = "", lastHop: LastHop? = nil) {
        self.location = location
        self.detail = detail
        self.lastHop = lastHop
    }

    /// "gateway: gateway 192.168.1.1 on wlan0: no ARP reply", or "none".
    public var description: String { detail.isEmpty ? location.rawValue : "\(location.rawValue): \(detail)" }
}

/// What one check of a gateway found: what its echo got, and (when no reply came) the
/// gateway's neighbour entry afterwards.
package struct GatewayCheck: Sendable, Equatable {
    package enum Echo: Sendable, Equatable {
        case reply(Duration)
        /// An ICMP error came back (from the gateway, or the host's own "host unreachable"
        /// after neighbour resolution failed: the neighbour state tells which).
        case error(String)
        /// Sent, nothing came back before the deadline.
        case silent(String)
        /// Could not be sent (no permission, no socket, a bad binding): the check proves nothing.
        case notSent(String)
    }

    package var route: GatewayRoute
    package var echo: Echo
    package var neighbour: NeighbourState?

    package init(route: GatewayRoute, echo: Echo, neighbour: NeighbourState? = nil) {
        self.route = route
        self.echo = echo
        self.neighbour = neighbour
    }

    package var rtt: Duration? {
        if case .reply(let rtt) = echo { return rtt }
        return nil
    }
}

/// Checks gateways: an ICMP echo bound to the route's interface and, when it fails, the
/// neighbour table over rtnetlink; and, beyond them, traces the last hop that answers toward a
/// destination. Tests substitute a fake.
package protocol GatewayProber: Sendable {
    func check(_ route: GatewayRoute, deadline: ContinuousClock.Instant) async -> GatewayCheck
    /// TTL-limited echoes toward `destination` out of the route's interface; nil when not traced.
    func trace(toward destination: String, route: GatewayRoute, deadline: ContinuousClock.Instant) async
        -> LastHopTrace?
}

extension GatewayProber {
    package func trace(toward destination: String, route: GatewayRoute, deadline: ContinuousClock.Instant) async
        -> LastHopTrace?
    { nil }
}

/// Names the broken segment of a scope from its verdict, its probes' results and (when nothing
/// beyond the host answers) a check of its gateway. Pure.
///
/// What each location can prove: `link`, `portal` and `dns` restate the verdict (the path
/// monitor, a portal signal, DNS failing while addresses answer); `gateway` is a failed echo to
/// the gateway, with the neighbour state saying whether it resolves at all; `upstream` is a
/// gateway that answered while every probe beyond it failed, or an MTU probe whose small echoes
/// came back; `target` is a `full` scope (or one with internet evidence) with failing probes.
/// A gateway that drops echo requests but routes answers the last-hop trace (time exceeded at
/// hop 1, or hops beyond it answer) and is located `upstream`; without a trace its
/// neighbour state (`reachable`) in the detail tells that case apart.
package enum FaultLocator {
    /// `upstream` for probes a box on the path answered in place of their target
    /// (`forged_reply`, `intercepted`): what the path did is never blamed on the target.
    package static func pathAnswered(_ failing: [RoundEntry]) -> Fault? {
        let faked = failing.filter { $0.result.reason.map(OnPathCheck.pathAnswered.contains) ?? false }
        guard let first = faked.first else { return nil }
        return Fault(
            .upstream,
            "something on the path answers in place of the internet (\(first.result.reason!.rawValue)): "
                + faked.map { "\($0.name) \(clip($0.result.detail))" }.joined(separator: "; "))
    }

    /// Whether locating the scope needs its gateway checked: the scope is `limited` and nothing
    /// in it proves the internet, for a reason the verdict does not explain by itself.
    package static func needsGateway(_ verdict: Verdict, entries: [RoundEntry]) -> Bool {
        guard verdict.state == .limited, verdict.reason?.explainsItself != true else { return false }
        return entries.contains { !$0.result.succeeded } && !entries.contains(where: \.provesInternet)
    }

    /// The scope's fault; nil while `unknown`, and for a `limited` scope whose every probe
    /// succeeds again (recovering under hysteresis: the caller keeps the fault it had).
    /// `trace` (toward a failing target, out of `route`) names the last hop that answers when
    /// the fault is `upstream` because nothing beyond the host answers.
    package static func locate(
        _ verdict: Verdict, entries: [RoundEntry], route: GatewayRoute?, check: GatewayCheck?,
        trace: LastHopTrace? = nil
    ) -> Fault? {
        switch verdict.state {
        case .unknown:
            return nil
        case .none:
            return Fault(.link, "no usable path: \(verdict.reason?.label ?? "down")")
        case .portal:
            let signal = entries.first { $0.result.status == .portal }
            return Fault(
                .portal,
                "the network intercepts (\((verdict.reason ?? .portal).label))"
                    + (signal.map { ": \($0.name) \(clip($0.result.detail))" } ?? ""))
        case .full:
            let failing = entries.filter { !$0.result.succeeded }
            // Every probe failing while still `full` is hysteresis, not a located fault yet.
            guard !failing.isEmpty, failing.count < entries.count else { return Fault(.none) }
            // The internet answers: a probe the path answered for is a note, not a broken target.
            let faked = failing.filter { $0.result.reason.map(OnPathCheck.pathAnswered.contains) ?? false }
            let real = failing.filter { f in !faked.contains { $0.name == f.name } }
            let note =
                faked.isEmpty
                ? "" : "; the path answers in place of " + faked.map(\.name).joined(separator: ", ")
            if real.isEmpty { return Fault(.none, "the internet answers" + note) }
            return Fault(.target, failingList(real, of: entries.count) + note)
        case .limited:
            break
        }
        // The reasons that locate by themselves (`VerdictReason.limitedLocation`), in this order.
        switch verdict.reason {
        case .probe(.dns)?:
            let dns = entries.first { $0.type == .dns && !$0.result.succeeded }
            return Fault(
                .dns,
                "addresses answer, name resolution fails"
                    + (dns.map { ": \($0.name) \($0.result.reason?.rawValue ?? "error") (\(clip($0.result.detail)))" }
                        ?? ""))
        case .probe(.mtu)?:
            let mtu = entries.first { $0.result.reason == .mtu }
            return Fault(
                .upstream, "small packets pass, large ones vanish" + (mtu.map { ": \(clip($0.result.detail))" } ?? ""))
        default:
            break
        }
        // The path answered in a target's place: never the target's fault.
        if let faked = pathAnswered(entries.filter { !$0.result.succeeded }) { return faked }
        switch verdict.reason {
        case .partial?:
            return Fault(
                .upstream,
                "plain HTTP reaches the internet, HTTPS does not: something on the path blocks or intercepts TLS")
        case let reason? where reason.limitedLocation == FaultLocation.none && entries.allSatisfy(\.result.succeeded):
            return Fault(.none, "nothing failed; the probes cannot prove the internet (\(reason.label))")
        default:
            break
        }
        if entries.contains(where: \.provesInternet) {
            let failing = entries.filter { !$0.result.succeeded }
            // Every probe succeeds again while `recover_after` holds the verdict: the fault is
            // the one located before (the caller keeps it), not a new one.
            guard !failing.isEmpty else { return nil }
            return Fault(.target, failingList(failing, of: entries.count))
        }
        var fault = beyondHost(route: route, check: check)
        let lastHop = trace?.lastHop(gateway: route?.gateway)
        // A gateway silent to echoes that answers the trace itself at hop 1 ("time exceeded"), or
        // whose hops beyond answer, is alive and routing: not the gateway. One nobody resolves
        // cannot forward: a trace saying otherwise is stale or forged.
        if fault.location == .gateway, check?.neighbour?.isUnresolved != true, let last = lastHop,
            let gateway = route?.gateway,
            last.hop >= 2 || trace?.answers.first == .timeExceeded(gateway)
        {
            fault = Fault(
                .upstream,
                "gateway \(gateway) does not answer echoes but routes (the trace's hop \(last.hop) answers)")
        }
        if fault.location == .upstream, let trace {
            fault.lastHop = lastHop
            fault.detail += "; " + trace.summary(gateway: route?.gateway)
        }
        return fault
    }

    /// Where a scope breaks when nothing beyond the host answers: its gateway or upstream of it.
    package static func beyondHost(route: GatewayRoute?, check: GatewayCheck?) -> Fault {
        guard let route else {
            return Fault(.upstream, "no default route to check a gateway on; nothing beyond the host answers")
        }
        guard let gateway = route.gateway else {
            return Fault(.upstream, "\(route.interface) has no gateway (point-to-point); nothing beyond it answers")
        }
        let name = "gateway \(gateway) on \(route.interface)"
        guard let check, check.route == route else {
            return Fault(.upstream, "nothing beyond the host answers; \(name) not checked")
        }
        if let rtt = check.rtt {
            return Fault(.upstream, "\(name) answers (\(ICMPProber.milliseconds(rtt)) ms); nothing beyond it does")
        }
        // Neighbour resolution failing is the gateway's silence, whatever the echo got.
        let resolution = gateway.contains(":") ? "neighbour discovery" : "ARP"
        if let n = check.neighbour, n.isUnresolved {
            return Fault(.gateway, "\(name): no \(resolution) reply (neighbour \(n.rawValue))")
        }
        let neighbour = check.neighbour.map { " (neighbour \($0.rawValue))" } ?? ""
        switch check.echo {
        case .reply:
            return Fault(.upstream, "\(name) answers; nothing beyond it does")
        case .error(let text):
            return Fault(.upstream, "\(name) answers with an ICMP error (\(clip(text))); nothing beyond it does")
        case .silent(let text):
            return Fault(.gateway, "\(name): no echo reply\(neighbour): \(clip(text))")
        case .notSent(let text):
            return Fault(.upstream, "nothing beyond the host answers; \(name) not checked: \(clip(text))")
        }
    }

    package static func failingList(_ failing: [RoundEntry], of total: Int) -> String {
        let names = failing.prefix(3).map { "\($0.name) (\($0.result.reason?.rawValue ?? "error"))" }
        return "\(failing.count) of \(total) targets fail: " + names.joined(separator: ", ")
            + (failing.count > 3 ? ", …" : "")
    }

    /// Probe details can come from remote servers: keep the fault text short.
    package static func clip(_ text: String, to limit: Int = 160) -> String {
        // Control characters (a remote server's CR LF in a probe detail) would break the
        // outage table and the logs: spaces.
        let text = String(text.map { $0.isNewline || $0.asciiValue.map { $0 < 0x20 || $0 == 0x7F } == true ? " " : $0 })
        guard text.utf8.count > limit else { return text }
        var out = ""
        for c in text {
            if out.utf8.count + c.utf8.count > limit - 1 { break }
            out.append(c)
        }
        return out + "…"
    }
}
