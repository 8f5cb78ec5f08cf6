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
    /// Constant labels (the file's `labels:`), exported on `reachability_probe_labels_info`.
    package var labels: [ProbeLabel] = []
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

/// Stands in for a prober that could not be built (its uplink binding failed): every round
/// fails at once with the reason, without traffic, so the fault shows instead of the probe
/// running unbound.
package struct UnusableProber: Prober {
    package let type: ProbeType
    package let problem: String

    package func probe(deadline: ContinuousClock.Instant) async -> ProbeResult {
        .failure(.error, problem, duration: .zero)
    }
}

extension ProbeSpec {
    /// Where the probe runs: the routing table (nil), and each of `uplinks` when it can be bound.
    package func interfaces(_ uplinks: [String]) -> [String?] { [nil] + (bindsToUplinks ? uplinks : []) }

    /// The prober bound to `interface`, or an `UnusableProber` saying why it cannot be.
    package func prober(bound interface: String?) -> any Prober {
        do throws(ProbeConfigError) {
            return try make(interface)
        } catch {
            return UnusableProber(
                type: type, problem: "cannot bind \(name) to \(interface ?? "the routing table"): \(error.description)")
        }
    }
}
