/// A configured probe: its name (the `target` label), type, target text, and how to build its
/// prober, optionally bound to an interface (for uplinks).
package struct ProbeSpec: Sendable {
    package var name: String
    package var type: ProbeType
    /// The best evidence a success of this probe can give (see `Evidence`): `local` for DNS,
    /// plain-HTTP web checks and TCP to intercepted ports, whatever the target.
    package var evidence: Evidence
    /// What the probe talks to, as configured (URL, host, `name@server`, `host:port`).
    package var target: String
    /// Whether the probe can be bound to an interface and so runs on every uplink too. False for
    /// the system resolver (getaddrinfo cannot be bound): such a probe runs on the routing table
    /// only, never unbound while reported as an uplink's.
    package var bindsToUplinks: Bool
    /// The family the probe is pinned to, if any; otherwise the result's address decides.
    package var family: IPFamily?
    /// Per-probe overrides of the global interval and timeout.
    package var interval: Duration?
    package var timeout: Duration?
    /// Builds the prober; the argument is an interface to bind to (nil: follow the routing table).
    /// A binding that cannot be applied throws: the probe must never run unbound while it is
    /// reported as that uplink.
    package var make: @Sendable (_ interface: String?) throws(ProbeConfigError) -> any Prober

    package init(
        name: String, type: ProbeType, target: String, family: IPFamily? = nil,
        interval: Duration? = nil, timeout: Duration? = nil, evidence: Evidence? = nil, bindsToUplinks: Bool = true,
        make: @escaping @Sendable (String?) throws(ProbeConfigError) -> any Prober
    ) {
        self.name = name
        self.type = type
        self.target = target
        self.family = family
        self.bindsToUplinks = bindsToUplinks
        self.evidence = evidence ?? Evidence.typical(of: type)
        self.interval = interval
        self.timeout = timeout
        self.make = make
    }
}

/// What gates probing: the path monitor's view of the host's network, reduced to what the
/// scheduler needs. `nil` reason means a usable path.
package protocol PathGate: Sendable {
    /// Why there is no usable path for the family (nil family: for any family), or nil.
    func unsatisfiedReason(for family: IPFamily?) -> String?
    /// Why the interface cannot carry traffic (down, no carrier, no address), or nil.
    func unsatisfiedReason(interface: String) -> String?
    /// Interfaces that hold a default route now (for `uplinks: auto`).
    var defaultRouteInterfaces: [String] { get }
    /// A new element after each coalesced change.
    func changes() -> AsyncStream<Void>
    /// The test of whether an answer may have come from the local network (loopback,
    /// link-local, on-link, the gateway), for the path as it is now: see `AddressLocality`. Such
    /// an answer is no evidence of the internet. The default knows only the rules that need no path.
    func localityMatcher() -> AddressLocality.Matcher
    /// The kind of the interface carrying the preferred default route (IPv4, else IPv6).
    var connectionType: ConnectionType { get }
    /// The default gateway a scope's traffic goes through now (overall: IPv4's, else IPv6's;
    /// an uplink: its own default route), for fault localization; nil when unknown.
    func gatewayRoute(for scope: Scope) -> GatewayRoute?
}

extension PathGate {
    package func localityMatcher() -> AddressLocality.Matcher { .intrinsicOnly }
    package var connectionType: ConnectionType { .unknown }
    package func gatewayRoute(for scope: Scope) -> GatewayRoute? { nil }
}

/// A gate that is always open: used when path monitoring is off (for example in a namespace
/// without netlink access) — probes alone decide.
package struct OpenPathGate: PathGate {
    package init() {}
    package func unsatisfiedReason(for family: IPFamily?) -> String? { nil }
    package func unsatisfiedReason(interface: String) -> String? { nil }
    package var defaultRouteInterfaces: [String] { [] }
    package func changes() -> AsyncStream<Void> { AsyncStream { _ in } }
}

/// Scheduler settings (`--probe.interval`, `--probe.timeout`, hysteresis, re-check backoff).
package struct MonitorSettings: Sendable, Equatable {
    package var interval: Duration = .seconds(5)
    package var timeout: Duration = .seconds(3)
    package var verdict = VerdictSettings()
    /// While not `full`, re-check after this, doubling up to `interval` (0 disables).
    package var fastRecheck: Duration = .seconds(1)
    /// How long path events are coalesced before the immediate re-probe.
    package var pathDebounce: Duration = .milliseconds(100)
    /// The least time between the start of a round that a trigger (a path change, a reload)
    /// started and the next triggered one: the first trigger re-probes at once, a flood of them
    /// cannot multiply probe traffic and history, nor pass `fail_after` in milliseconds.
    /// Capped at `interval`.
    package var minimumRoundGap: Duration = .seconds(1)
    /// Probes running at once, across all probes and uplinks.
    package var maxConcurrentProbes = 64
    /// Spread probe starts across the interval (periodic rounds only).
    package var stagger = true
    /// Interfaces whose probes are bound to them and get their own verdict.
    package var uplinks: [String] = []

    package init() {}
}

/// Stands in for a prober that could not be built (its uplink binding failed): every round
/// fails at once with the reason, without traffic, so the fault shows instead of the probe
/// running unbound.
struct UnusableProber: Prober {
    let type: ProbeType
    let problem: String

    func probe(deadline: ContinuousClock.Instant) async -> ProbeResult {
        .failure(.error, problem, duration: .zero)
    }
}

extension ProbeSpec {
    /// Where the probe runs: the routing table (nil), and each of `uplinks` when it can be bound.
    package func interfaces(_ uplinks: [String]) -> [String?] { [nil] + (bindsToUplinks ? uplinks : []) }

    /// The prober bound to `interface`, or an `UnusableProber` saying why it cannot be.
    func prober(bound interface: String?) -> any Prober {
        do throws(ProbeConfigError) {
            return try make(interface)
        } catch {
            return UnusableProber(
                type: type, problem: "cannot bind \(name) to \(interface ?? "the routing table"): \(error.message)")
        }
    }

    /// The warning for a probe set in which no probe that counts under `policy` can prove the
    /// internet (a DNS-only configuration, say): its verdict is never `full`, at best
    /// `limited (unproven)`. Nil when some probe can.
    package static func evidenceWarning(_ specs: [ProbeSpec], policy: VerdictPolicy) -> String? {
        let counting = specs.filter { policy.counts($0.type) }
        guard !counting.isEmpty, !counting.contains(where: { $0.evidence == .internet }) else { return nil }
        return "no probe can prove that the internet is reachable (answers of DNS probes, plain-HTTP web checks and "
            + "TCP connects to ports 53, 80 and 443 can come from the local network): the verdict will never be full, "
            + "at best limited (unproven); add a captive HTTP(S) check, an ICMP probe or a TCP probe to another port"
    }
}
