/// A configured probe: its name (the `target` label), type, target text, and how to build its
/// prober, optionally bound to an interface (for uplinks).
public struct ProbeSpec: Sendable {
    public var name: String
    public var type: ProbeType
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
                interval: Duration? = nil, timeout: Duration? = nil, make: @escaping @Sendable (String?) -> any Prober) {
        self.name = name; self.type = type; self.target = target; self.family = family
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
