extension PathFacts {
    /// The facts of the scheduler's path gate (its addresses are read and parsed once), with the
    /// interfaces whose captive-portal API says `captive: true` now.
    package init(_ gate: any PathGate, captive: Set<String> = []) {
        let locality = gate.localityMatcher()
        self.init(
            unsatisfied: { scope in
                switch scope {
                case .overall: gate.unsatisfiedReason(for: nil)
                case .family(let f): gate.unsatisfiedReason(for: f)
                case .uplink(let i): gate.unsatisfiedReason(interface: i)
                }
            }, isLocal: { locality.isLocal($0) },
            announcedCaptive: { scope in
                guard !captive.isEmpty else { return false }
                if case .uplink(let i) = scope { return captive.contains(i) }
                return gate.gatewayRoute(for: scope).map { captive.contains($0.interface) } ?? false
            })
    }
}
