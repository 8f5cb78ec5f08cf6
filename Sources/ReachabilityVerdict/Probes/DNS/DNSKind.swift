extension ProbeKind {
    /// DNS lookups, through the system resolver or a server over UDP, TCP or TLS: local evidence
    /// unless verified TLS says otherwise (`DNSProbeConfig.evidence`).
    package static let dns = ProbeKind(
        [.dns], section: "dns",
        flag: (
            "probe.dns", "NAME[@SERVER]",
            "DNS lookup of NAME through the system resolver, or as a direct query to SERVER (an IP, optional :port): over UDP, or tcp://SERVER, tls://SERVER (port 853)."
        ), policyGroup: nil, typicalEvidence: .local, configuration: DNSProbeConfig.self,
        targets: [.dns: "a DNS name to look up"])
}

extension ProbeField {
    /// `dns.server`.
    package static let dnsServer = ProbeField(
        "dns.server", expected: "an IP address, optionally with a port and a scheme")
    /// `dns.transport`.
    package static let dnsTransport = ProbeField("dns.transport", expected: "a transport the server can be asked over")
    /// `dns.record_type`.
    package static let dnsRecordType = ProbeField("dns.record_type", expected: "a record type the probe can ask for")
    /// `dns.expect_answer`.
    package static let dnsExpectAnswer = ProbeField(
        "dns.expect_answer", expected: "an answer expectation that fits the record type")
    /// `dns.expect_answer`.
    package static let dnsExpectAnswerRegex = ProbeField(
        "dns.expect_answer", expected: "a regular expression (Swift Regex syntax)")
    /// `dns.tls`.
    package static let dnsTLS = ProbeField("dns.tls", expected: "TLS options on a tls-transport probe only")
    /// `dns.tls.server_name`.
    package static let dnsTLSServerName = ProbeField("dns.tls.server_name", expected: "a host name or IP address")
    /// `dns.tls.ca_file`.
    package static let dnsTLSCAFile = ProbeField("dns.tls.ca_file", expected: "a readable PEM file of CA certificates")
    /// `dns.retransmit_interval`.
    package static let dnsRetransmitInterval = ProbeField(
        "dns.retransmit_interval", expected: "a value the prober accepts")
}

extension DNSProbeConfig: ProbeConfiguration {
    /// `dns:` (server, transport, record_type, allow_private_answers, expect_answer, tls,
    /// tcp_fallback) for the entry's name; built (and checked) by the validating initialiser,
    /// whose defaults are the kind's.
    package static func decode(_ entry: inout ProbeEntry, in p: ConfigMap) throws(ConfigError) -> Self {
        if p.has("family") {
            throw p.fail(
                "family", expected: "no family on a dns probe", found: "family: \(entry.family?.rawValue ?? "")",
                hint: "the server address decides the transport; dns.record_type (A or AAAA) decides the answer")
        }
        let keys = [
            "server", "transport", "record_type", "allow_private_answers", "expect_answer", "tls", "tcp_fallback",
        ]
        let m = try p.map("dns", keys: keys, what: "the DNS options")
        for e in m?.entries ?? [] { entry.marks["dns.\(e.key)"] = e.value.mark }
        let server = try m?.string(
            "server",
            expected:
                "an IP address, optionally with a port and a scheme (192.0.2.53, [2001:db8::53]:5353, tls://192.0.2.53)"
        )
        let transport = try m?.choice("transport", DNSTransport.self)
        let q = try DNSSectionKeys(m)
        let (recordType, allowPrivate, expectAnswer) = (q.recordType, q.allowPrivateAnswers, q.expectAnswer)
        let (caFile, serverName, insecure) = (q.caFile, q.serverName, q.insecureSkipVerify)
        let tcpFallback = try m?.bool("tcp_fallback") ?? true
        let name = entry.target
        return try entry.checked { () throws(ProbeConfigError) in
            try DNSProbeConfig(
                name: name, queryType: recordType, server: server, transport: transport,
                allowPrivateAnswers: allowPrivate, expectAnswer: expectAnswer, tlsServerName: serverName,
                caFile: caFile, insecureSkipVerify: insecure, tcpFallback: tcpFallback)
        }
    }

    /// `dns.expect_answer`: exactly one of `regex` and `addresses`.
    package static func expectAnswer(_ m: ConfigMap) throws(ConfigError) -> DNSAnswerExpectation? {
        guard let e = try m.map("expect_answer", keys: ["regex", "addresses"], what: "regex or addresses") else {
            return nil
        }
        guard e.entries.count == 1, let key = e.keys.first else {
            throw ConfigError(
                file: m.file, mark: e.node.mark, path: e.path, expected: "exactly one of regex, addresses",
                found: e.entries.isEmpty ? "none" : e.keys.joined(separator: " and "))
        }
        if key == "regex" { return .regex(try e.string("regex", expected: "a regular expression") ?? "") }
        var set = Set<String>()
        for (i, item) in (try e.list("addresses", expected: "a list of IP addresses") ?? []).enumerated() {
            guard let text = item.scalar?.text, SocketAddress(ip: text) != nil else {
                throw ConfigError(
                    file: m.file, mark: item.mark, path: KeyPath.index(e.path("addresses"), i),
                    expected: "an IP address", found: item.foundDescription)
            }
            set.insert(text)
        }
        return .addresses(set)
    }

    package var summary: [String] { ["record \(queryType.rawValue)"] }

    /// Named `NAME@SERVER` when it asks a server (as written), `NAME` through the system resolver.
    package func spec(_ at: ProbeSpec.Placement) -> ProbeSpec {
        var placed = at
        placed.target = serverText.map { "\(at.target)@\($0)" } ?? at.target
        return .dns(self, placed)
    }
}

/// The keys the sections of kinds that ask DNS questions share (`dns:`, `doh:`): `record_type`,
/// `allow_private_answers`, `expect_answer` and `tls` (`ca_file`, `server_name`,
/// `insecure_skip_verify`), each at its default when absent.
package struct DNSSectionKeys {
    package var recordType = DNSQueryType.a
    package var allowPrivateAnswers = false
    package var expectAnswer: DNSAnswerExpectation?
    package var caFile: String?
    package var serverName: String?
    package var insecureSkipVerify = false
    /// The `tls` map, when written.
    package var tls: ConfigMap?

    package init(_ m: ConfigMap?) throws(ConfigError) {
        guard let m else { return }
        let types = DNSQueryType.allCases.map(\.rawValue).joined(separator: ", ")
        if let text = try m.string("record_type", expected: types) {
            guard let t = DNSQueryType(rawValue: text.uppercased()) else {
                throw m.fail("record_type", expected: types)
            }
            recordType = t
        }
        allowPrivateAnswers = try m.bool("allow_private_answers") ?? false
        expectAnswer = try DNSProbeConfig.expectAnswer(m)
        tls = try m.map("tls", keys: ["ca_file", "server_name", "insecure_skip_verify"], what: "the TLS options")
        caFile = try tls?.string("ca_file", expected: "a path to a PEM file of CA certificates")
        serverName = try tls?.string("server_name", expected: "a host name")
        insecureSkipVerify = try tls?.bool("insecure_skip_verify") ?? false
    }
}
