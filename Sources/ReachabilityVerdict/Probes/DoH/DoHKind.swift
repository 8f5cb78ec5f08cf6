extension ProbeKind {
    /// DNS over HTTPS (RFC 8484): internet evidence over verified https (`DoHProbeConfig.evidence`).
    package static let doh = ProbeKind(
        [.doh], section: "doh",
        flag: (
            "probe.doh", "NAME@URL",
            "DNS-over-HTTPS lookup (RFC 8484) of NAME's A record as a GET to the server at URL, as in example.com@https://dns.example/dns-query."
        ), policyGroup: nil, typicalEvidence: .internet, configuration: DoHProbeConfig.self,
        targets: [.doh: "a DNS name to look up"])
}

extension ProbeField {
    /// `doh.url`.
    package static let dohURL = ProbeField(
        "doh.url", expected: "the https:// URL of a DoH server, as https://dns.example/dns-query")
    /// `doh.record_type`.
    package static let dohRecordType = ProbeField("doh.record_type", expected: "a record type the probe can ask for")
    /// `doh.expect_answer`.
    package static let dohExpectAnswer = ProbeField(
        "doh.expect_answer", expected: "an answer expectation that fits the record type")
    /// `doh.expect_answer.regex`.
    package static let dohExpectAnswerRegex = ProbeField(
        "doh.expect_answer", expected: "a regular expression (Swift Regex syntax)")
    /// `doh.tls`.
    package static let dohTLS = ProbeField("doh.tls", expected: "TLS options on an https:// url only")
    /// `doh.tls.server_name`.
    package static let dohTLSServerName = ProbeField("doh.tls.server_name", expected: "a host name or IP address")
    /// `doh.tls.ca_file`.
    package static let dohTLSCAFile = ProbeField("doh.tls.ca_file", expected: "a readable PEM file of CA certificates")
}

extension DoHProbeConfig: ProbeConfiguration {
    /// `doh:` (url, record_type, allow_private_answers, expect_answer, tls) for the entry's name
    /// and family; built (and checked) by the validating initialiser, whose defaults are the kind's.
    package static func decode(_ entry: inout ProbeEntry, in p: ConfigMap) throws(ConfigError) -> Self {
        let keys = ["url", "record_type", "allow_private_answers", "expect_answer", "tls"]
        guard let m = try p.map("doh", keys: keys, what: "the DoH options") else {
            throw p.missing("doh", expected: "a doh section with the server's url")
        }
        for e in m.entries { entry.marks["doh.\(e.key)"] = e.value.mark }
        guard let url = try m.string("url", expected: ProbeField.dohURL.expected) else {
            throw m.missing("url", expected: ProbeField.dohURL.expected)
        }
        let q = try DNSSectionKeys(m)
        for e in q.tls?.entries ?? [] { entry.marks["doh.tls.\(e.key)"] = e.value.mark }
        let (name, family) = (entry.target, entry.family ?? .any)
        return try entry.checked { () throws(ProbeConfigError) in
            try DoHProbeConfig(
                name: name, queryType: q.recordType, url: url, family: family,
                allowPrivateAnswers: q.allowPrivateAnswers, expectAnswer: q.expectAnswer, serverName: q.serverName,
                caFile: q.caFile, insecureSkipVerify: q.insecureSkipVerify)
        }
    }

    package var summary: [String] { ["record \(queryType.rawValue)"] }

    /// Named `NAME@URL`; bound to an uplink, its HTTP connection is.
    package func spec(_ at: ProbeSpec.Placement) -> ProbeSpec {
        ProbeSpec(
            name: at.name, type: .doh, target: "\(at.target)@\(urlText)", family: at.family, interval: at.interval,
            timeout: at.timeout, evidence: evidence
        ) { iface throws(ProbeConfigError) in DoHProber(config: try bound(to: iface)) }
    }
}
