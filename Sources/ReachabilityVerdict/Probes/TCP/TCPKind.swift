extension ProbeKind {
    /// TCP connections.
    package static let tcp = ProbeKind(
        [.tcp], section: "tcp", flag: ("probe.tcp", "HOST:PORT", "TCP connect target."), policyGroup: nil,
        typicalEvidence: .internet, configuration: TCPProbeConfig.self, targets: [.tcp: "host:port"])
}

extension ProbeField {
    /// `tcp.expect`.
    package static let tcpExpect = ProbeField("tcp.expect", expected: "a regular expression (Swift Regex syntax)")
    /// `tcp.canary_port`.
    package static let tcpCanaryPort = ProbeField("tcp.canary_port", expected: "a port 1-65535")
    /// `tcp.max_addresses`.
    package static let tcpMaxAddresses = ProbeField("tcp.max_addresses", expected: "a value the prober accepts")
}

extension TCPProbeConfig: ProbeConfiguration {
    /// `tcp:` (expect, canary_port) for the entry's host:port and family; built (and checked)
    /// by the validating initialiser, whose defaults are the kind's.
    package static func decode(_ entry: inout ProbeEntry, in p: ConfigMap) throws(ConfigError) -> Self {
        var expect: String?
        var canaryPort: UInt16? = defaultCanaryPort
        if let m = try p.map("tcp", keys: ["expect", "canary_port"], what: "the TCP options") {
            expect = try m.string("expect", expected: "a regular expression such as ^SSH-2\\.0-")
            if let port = try m.int("canary_port", 0...65535) { canaryPort = port == 0 ? nil : UInt16(port) }
            for e in m.entries { entry.marks["tcp.\(e.key)"] = e.value.mark }
        }
        let (target, family) = (entry.target, entry.family ?? .any)
        return try entry.checked { () throws(ProbeConfigError) in
            try TCPProbeConfig(target: target, family: family, expect: expect, canaryPort: canaryPort)
        }
    }

    package func spec(_ at: ProbeSpec.Placement) -> ProbeSpec { .tcp(self, at) }

    package var summary: [String] { [] }
}
