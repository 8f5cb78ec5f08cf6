import ReachabilityVerdict

/// A blackbox `tcp` module: connect, and optionally read a banner that must match `expect`
/// (a `query_response` of one `expect` step). The interception canary of the file's TCP probes
/// is off: `/probe` connects to the target only, as blackbox does.
package struct BlackboxTCP: Sendable {
    var dialog = TCPDialog()

    init() {}

    init(_ s: ConfigMap) throws(ConfigError) {
        let dir = s.file.contains("/") ? String(s.file[..<s.file.lastIndex(of: "/")!]) : "."
        if let steps = try s.list("query_response", expected: "a list of steps") {
            for (i, step) in steps.enumerated() {
                let m = try ConfigMap(
                    step, path: KeyPath.index(s.path("query_response"), i), file: s.file,
                    keys: ["expect", "expect_bytes", "send", "starttls", "labels"], what: "a query_response step")
                if m.has("labels") {
                    throw m.fail("labels", expected: "no labels", hint: "probe_expect_info is not written here")
                }
                var out = TCPDialog.Step()
                if let pattern = try m.scalar("expect", expected: "a regular expression")?.text {
                    if let problem = HTTPAnswerChecks.problem(pattern) {
                        throw m.fail("expect", expected: "a regular expression", hint: problem)
                    }
                    out.expect = pattern
                }
                if let bytes = try m.scalar("expect_bytes", expected: "the bytes to expect")?.text {
                    guard out.expect == nil else {
                        throw m.fail("expect_bytes", expected: "expect or expect_bytes, not both")
                    }
                    out.expectBytes = Array(bytes.utf8)
                }
                out.send = try m.scalar("send", expected: "the text to send")?.text
                out.startTLS = try m.bool("starttls") ?? false
                dialog.steps.append(out)
            }
        }
        dialog.tls = try s.bool("tls") ?? false
        (dialog.caFile, dialog.serverName, dialog.insecureSkipVerify) = try BlackboxKeys.tls(s)
        // Read when a probe needs it, as blackbox reads it: a missing file fails that probe.
        dialog.caFile = dialog.caFile.map { $0.hasPrefix("/") ? $0 : dir + "/" + $0 }
    }

    /// The probe of `target` (its resolved address); `name` is the TLS name when the module
    /// gives none (the target's host name, or the `hostname` parameter).
    func config(target: HostPort, name: String?, interface: String?) throws(ProbeConfigError) -> TCPProbeConfig {
        var c = try TCPProbeConfig(target: target, interface: interface, maxAddresses: 1, canaryPort: nil)
        var d = dialog
        d.serverName = d.serverName ?? name
        c.dialog = d
        return c
    }
}

/// A blackbox `icmp` module: one echo request, of blackbox's payload size unless
/// `payload_size` says otherwise, with `dont_fragment` on IPv4 and IPv6 alike.
package struct BlackboxICMP: Sendable {
    /// blackbox's payload is the 28 bytes "Prometheus Blackbox Exporter" (the nonce needs 8 of them).
    static let defaultPayloadSize = 28
    var payloadSize = defaultPayloadSize
    var dontFragment = false

    init() {}

    init(_ s: ConfigMap) throws(ConfigError) {
        // 0 (or no key) is blackbox's 28-byte payload.
        let size = try s.int("payload_size", 0...ICMPProber.Configuration.maxPayloadSize) ?? 0
        payloadSize = size == 0 ? Self.defaultPayloadSize : size
        dontFragment = try s.bool("dont_fragment") ?? false
        // blackbox sends with TTL 64 unless told (0: the system's, 64 on Linux).
        if let ttl = try s.int("ttl", 0...255), ttl != 0, ttl != 64 {
            throw s.fail(
                "ttl", expected: "64 or 0", hint: "echoes leave with the system's TTL (net.ipv4.ip_default_ttl, 64)")
        }
    }

    func config(host: String, interface: String?) throws(ProbeConfigError) -> ICMPProber.Configuration {
        let c = ICMPProber.Configuration(
            host: host, count: 1, payloadSize: payloadSize, interface: interface, dontFragment: dontFragment)
        try c.validate()
        return c
    }
}

/// A blackbox `dns` module: one query of `query_name` to the target server. The answer is
/// judged as blackbox judges it, by `valid_rcodes` (default NOERROR): no answer records is
/// still a success, a private address too (the module asks the operator's own server).
package struct BlackboxDNS: Sendable {
    var name = ""
    var type: DNSQueryType = .a
    var transport: DNSTransport = .udp
    var caFile: String?
    var serverName: String?
    var insecureSkipVerify = false
    /// Rcodes that make the probe a success.
    var validRcodes: Set<Int> = [0]
    /// `validate_answer_rrs`.
    var answerChecks = RRChecks()

    /// blackbox's `DNSRRValidator`, judged as blackbox's `validRRs` judges (its
    /// `fail_if_all_match_regexp` fails unless every record matches every pattern).
    struct RRChecks: Sendable {
        var failIfMatches: [String] = []
        var failIfAllMatch: [String] = []
        var failIfNotMatches: [String] = []
        var failIfNoneMatches: [String] = []

        static let keys = [
            "fail_if_matches_regexp", "fail_if_all_match_regexp", "fail_if_not_matches_regexp",
            "fail_if_none_matches_regexp",
        ]

        init() {}

        init(_ m: ConfigMap) throws(ConfigError) {
            failIfMatches = try BlackboxKeys.patterns(m, "fail_if_matches_regexp")
            failIfAllMatch = try BlackboxKeys.patterns(m, "fail_if_all_match_regexp")
            failIfNotMatches = try BlackboxKeys.patterns(m, "fail_if_not_matches_regexp")
            failIfNoneMatches = try BlackboxKeys.patterns(m, "fail_if_none_matches_regexp")
        }

        /// Nil when the records pass, else why not.
        func problem(_ records: [String]) -> String? {
            // A match PCRE2's limit left undecided fails the record, whichever way the list asks.
            let m = HTTPAnswerChecks.matches
            let may = HTTPAnswerChecks.mayMatch
            if records.isEmpty && !failIfNotMatches.isEmpty {
                return "fail_if_not_matches_regexp specified but no RRs returned"
            }
            if records.isEmpty && !failIfNoneMatches.isEmpty {
                return "fail_if_none_matches_regexp specified but no RRs returned"
            }
            var allMatch = true
            var anyMatch = false
            for rr in records {
                if let p = failIfMatches.first(where: { may($0, rr) }) {
                    return "At least one RR matched regexp /\(p)/: \(rr)"
                }
                if failIfAllMatch.contains(where: { !m($0, rr) }) { allMatch = false }
                if let p = failIfNotMatches.first(where: { !m($0, rr) }) {
                    return "At least one RR did not match regexp /\(p)/: \(rr)"
                }
                if failIfNoneMatches.contains(where: { m($0, rr) }) { anyMatch = true }
            }
            if !failIfAllMatch.isEmpty && !allMatch { return "Not all RRs matched regexp" }
            if !failIfNoneMatches.isEmpty && !anyMatch { return "None of the RRs did matched any regexp" }
            return nil
        }
    }

    static let rcodes: [String: Int] = [
        "NOERROR": 0, "FORMERR": 1, "SERVFAIL": 2, "NXDOMAIN": 3, "NOTIMP": 4, "REFUSED": 5, "YXDOMAIN": 6,
        "YXRRSET": 7, "NXRRSET": 8, "NOTAUTH": 9, "NOTZONE": 10,
    ]

    init() {}

    init(_ s: ConfigMap) throws(ConfigError) {
        guard let name = try s.string("query_name", expected: "the name to look up") else {
            throw s.missing("query_name", expected: "the name to look up")
        }
        self.name = name
        let types = DNSQueryType.allCases.map(\.rawValue).joined(separator: ", ")
        guard let typeText = try s.string("query_type", expected: types) else {
            throw s.missing("query_type", expected: "\(types) (blackbox's default ANY is not asked here)")
        }
        guard let type = DNSQueryType(rawValue: typeText.uppercased()) else {
            throw s.fail("query_type", expected: types)
        }
        self.type = type
        if let c = try s.string("query_class", expected: "IN"), c.uppercased() != "IN" {
            throw s.fail("query_class", expected: "IN", hint: "only the Internet class is asked")
        }
        if try s.bool("recursion_desired") == false {
            throw s.fail("recursion_desired", expected: "true or no key", hint: "every query asks for recursion")
        }
        switch try s.string("transport_protocol", expected: "udp or tcp") {
        case nil, "udp": transport = .udp
        case "tcp": transport = .tcp
        default: throw s.fail("transport_protocol", expected: "udp or tcp")
        }
        if try s.bool("dns_over_tls") == true {
            // blackbox fails every such probe at run time ("Expected transport protocol tcp for DoT").
            guard transport == .tcp else {
                throw s.fail("dns_over_tls", expected: "transport_protocol: tcp beside it", found: "true")
            }
            transport = .tls
        }
        (caFile, serverName, insecureSkipVerify) = try BlackboxKeys.tls(s)
        if transport != .tls, s.has("tls_config") {
            throw s.fail("tls_config", expected: "dns_over_tls: true beside it")
        }
        if let v = try s.map("validate_answer_rrs", keys: RRChecks.keys, what: "the answer's validators") {
            answerChecks = try RRChecks(v)
        }
        if let list = try s.list("valid_rcodes", expected: "a list of rcode names (NOERROR, NXDOMAIN…)") {
            validRcodes = []
            for (i, item) in list.enumerated() {
                guard let code = item.scalar.flatMap({ Self.rcodes[$0.text.uppercased()] }) else {
                    throw ConfigError(
                        file: s.file, mark: item.mark, path: KeyPath.index(s.path("valid_rcodes"), i),
                        expected: "an rcode name: " + Self.rcodes.keys.sorted().joined(separator: ", "),
                        found: item.foundDescription)
                }
                validRcodes.insert(code)
            }
        }
    }

    func config(server: String, interface: String?) throws(ProbeConfigError) -> DNSProbeConfig {
        try DNSProbeConfig(
            name: name, queryType: type, server: server, transport: transport, interface: interface,
            allowPrivateAnswers: true, expectAnswer: nil, tlsServerName: serverName, caFile: caFile,
            insecureSkipVerify: insecureSkipVerify, tcpFallback: false)
    }
}
