/// One probe's latest outcome in a round: its result and recent record.
public struct ProbeOutcome: Sendable, Equatable {
    /// The probe's name (the `target` label): its configured name, else its target.
    public var name: String
    /// The kind of probe.
    public var type: ProbeType
    /// What the probe talks to, as configured (URL, host, `name@server`, `host:port`).
    public var target: String
    /// The uplink the probe was bound to, or nil for the routing table's choice.
    public var interface: String?
    /// What this run found.
    public var result: ProbeResult
    /// Unix seconds when the round that produced it started.
    public var at: Double
    /// How late the probe started against its staggered slot (after waiting for a concurrency
    /// slot); nil when it did not run (no path).
    public var startLateness: Duration? = nil
    /// Unix seconds of the start of the latest round in which this probe succeeded (since the
    /// monitor started), or nil if it has not.
    public var lastSuccess: Double? = nil
    /// How many runs the probe's recent record holds (at most 20): the denominator of
    /// `recentFailures`.
    public var recentRuns: Int = 0
    /// Of this probe's last `recentRuns` runs, how many did not succeed: the probe's recent loss.
    public var recentFailures: Int = 0
    /// What this run put on the wire (`TrafficMeter`); nil when it did not run here.
    public var traffic: TrafficCount? = nil
    /// False when the probe could not run this round (its scope had no path): nothing was
    /// sent, so it is no failure of the probe — not counted in its failures or its recent loss.
    public var ran: Bool = true
}

/// A scope's verdict (overall, an IP family, an uplink) with the time it has held since.
public struct ScopedVerdict: Sendable, Equatable {
    /// The scope's state and reason.
    public var verdict: Verdict
    /// Unix seconds of the last transition.
    public var since: Double

    package init(verdict: Verdict, since: Double) {
        self.verdict = verdict
        self.since = since
    }
}
