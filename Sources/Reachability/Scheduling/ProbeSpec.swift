/// A configured probe: its name (the `target` label), type, target text, and how to build its
/// prober, optionally bound to an interface (for uplinks).
public struct ProbeSpec: Sendable {
    public var name: String
    public var type: ProbeType
    /// The best evidence a success of this probe can give (see `Evidence`): `local` for DNS,
    /// plain-HTTP web checks and TCP to intercepted ports, whatever the target.
    public var evidence: Evidence
    /// What the probe talks to, as configured (URL, host, `name@server`, `host:port`).
    public var target: String
    /// The family the probe is pinned to, if any; otherwise the result's address decides.
    public var family: IPFamily?
    /// Per-probe overrides of the global interval and timeout.
    public var interval: Duration?
    public var timeout: Duration?
    /// Builds the prober; the argument is an interface to bind to (nil: follow the routing table).
    public var make: @Sendable (_ interface: String?) -> any Prober

    public init(name: String, type: ProbeType, target: String, family: IPFamily? = nil,
                interval: Duration? = nil, timeout: Duration? = nil, evidence: Evidence? = nil,
                make: @escaping @Sendable (String?) -> any Prober) {
        self.name = name; self.type = type; self.target = target; self.family = family
        self.evidence = evidence ?? Evidence.typical(of: type)
        self.interval = interval; self.timeout = timeout; self.make = make
    }
}

/// What gates probing: the path monitor's view of the host's network, reduced to what the
/// scheduler needs. `nil` reason means a usable path.
public protocol PathGate: Sendable {
    /// Why there is no usable path for the family (nil family: for any family), or nil.
    func unsatisfiedReason(for family: IPFamily?) -> String?
    /// Why the interface cannot carry traffic (down, no carrier, no address), or nil.
    func unsatisfiedReason(interface: String) -> String?
    /// Interfaces that hold a default route now (for `uplinks: auto`).
    var defaultRouteInterfaces: [String] { get }
    /// A new element after each coalesced change.
    func changes() -> AsyncStream<Void>
    /// Whether an answer from `address` may have come from the local network (loopback,
    /// link-local, on-link, the gateway): see `AddressLocality`. Such an answer is no evidence
    /// of the internet. The default knows only the rules that need no path.
    func isLocal(address: String) -> Bool
}

extension PathGate {
    public func isLocal(address: String) -> Bool { AddressLocality.isIntrinsicallyLocal(address) }
}

/// A gate that is always open: used when path monitoring is off (for example in a namespace
/// without netlink access) — probes alone decide.
public struct OpenPathGate: PathGate {
    public init() {}
    public func unsatisfiedReason(for family: IPFamily?) -> String? { nil }
    public func unsatisfiedReason(interface: String) -> String? { nil }
    public var defaultRouteInterfaces: [String] { [] }
    public func changes() -> AsyncStream<Void> { AsyncStream { _ in } }
}

/// Scheduler settings (`--probe.interval`, `--probe.timeout`, hysteresis, re-check backoff).
public struct MonitorSettings: Sendable, Equatable {
    public var interval: Duration = .seconds(5)
    public var timeout: Duration = .seconds(3)
    public var verdict = VerdictSettings()
    /// While not `full`, re-check after this, doubling up to `interval` (0 disables).
    public var fastRecheck: Duration = .seconds(1)
    /// How long path events are coalesced before the immediate re-probe.
    public var pathDebounce: Duration = .milliseconds(100)
    /// Probes running at once, across all probes and uplinks.
    public var maxConcurrentProbes = 64
    /// Spread probe starts across the interval (periodic rounds only).
    public var stagger = true
    /// Interfaces whose probes are bound to them and get their own verdict.
    public var uplinks: [String] = []

    public init() {}
}

extension ProbeSpec {
    /// The warning for a probe set in which no probe that counts under `policy` can prove the
    /// internet (a DNS-only configuration, say): its verdict is never `full`, at best
    /// `limited (unproven)`. Nil when some probe can.
    public static func evidenceWarning(_ specs: [ProbeSpec], policy: VerdictPolicy) -> String? {
        let counting = specs.filter { policy.counts($0.type) }
        guard !counting.isEmpty, !counting.contains(where: { $0.evidence == .internet }) else { return nil }
        return "no probe can prove that the internet is reachable (answers of DNS probes, plain-HTTP web checks and "
            + "TCP connects to ports 53, 80 and 443 can come from the local network): the verdict will never be full, "
            + "at best limited (unproven); add a captive HTTP(S) check, an ICMP probe or a TCP probe to another port"
    }
}
