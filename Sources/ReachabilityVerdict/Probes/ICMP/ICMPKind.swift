extension ProbeKind {
    /// ICMP echo requests.
    package static let icmp = ProbeKind(
        [.icmp], section: "icmp",
        flag: ("probe.icmp", "HOST", "ICMP echo target (name or address; names are re-resolved every round)."),
        policyGroup: .icmp, typicalEvidence: .internet, configuration: ICMPProber.Configuration.self,
        targets: [.icmp: "a host name or IP address"])
}

extension ProbeField {
    /// `icmp.count`.
    package static let icmpCount = ProbeField("icmp.count", expected: "a count of echoes in range")
    /// `icmp.size`.
    package static let icmpSize = ProbeField("icmp.size", expected: "a payload size in range")
    /// `icmp.spacing`.
    package static let icmpSpacing = ProbeField("icmp.spacing", expected: "a value the prober accepts")
}

extension ICMPProber.Configuration: ProbeConfiguration {
    /// `icmp:` (count, size, dont_fragment) over the defaults for the entry's host and family.
    package static func decode(_ entry: inout ProbeEntry, in p: ConfigMap) throws(ConfigError) -> Self {
        try entry.checkHost()
        var c = Self(host: entry.target, family: entry.family ?? .any)
        if let m = try p.map("icmp", keys: ["count", "size", "dont_fragment"], what: "the ICMP options") {
            c.count = try m.int("count", 1...Self.maxCount) ?? c.count
            c.payloadSize = try m.int("size", 0...Self.maxPayloadSize) ?? c.payloadSize
            c.dontFragment = try m.bool("dont_fragment") ?? c.dontFragment
        }
        try entry.checked { () throws(ProbeConfigError) in try c.validate() }
        return c
    }

    package func spec(_ at: ProbeSpec.Placement) -> ProbeSpec { .icmp(self, at) }

    package var summary: [String] { ["count \(count)"] }
}
