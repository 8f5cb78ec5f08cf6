extension ProbeKind {
    /// Path-MTU probes: don't-fragment echoes of several sizes.
    package static let mtu = ProbeKind(
        [.mtu], section: "mtu",
        flag: (
            "probe.mtu", "HOST",
            "Path-MTU target: don't-fragment echoes of several sizes each round; below --probe.mtu.expect the verdict is limited (mtu)."
        ), policyGroup: .icmp, typicalEvidence: .internet, configuration: MTUProber.Configuration.self,
        targets: [.mtu: "a host name or IP address"])
}

extension ProbeField {
    /// `mtu.expect`.
    package static let mtuExpect = ProbeField("mtu.expect", expected: "an MTU in range")
}

extension MTUProber.Configuration: ProbeConfiguration {
    /// `mtu:` (expect) over the defaults for the entry's host and family.
    package static func decode(_ entry: inout ProbeEntry, in p: ConfigMap) throws(ConfigError) -> Self {
        try entry.checkHost()
        var c = Self(host: entry.target, family: entry.family ?? .any)
        if let m = try p.map("mtu", keys: ["expect"], what: "the MTU options") {
            c.expect = try m.int("expect", Self.expectRange) ?? c.expect
        }
        try entry.checked { () throws(ProbeConfigError) in try c.validate() }
        return c
    }

    package func spec(_ at: ProbeSpec.Placement) -> ProbeSpec { .mtu(self, at) }

    package var summary: [String] { [] }
}
