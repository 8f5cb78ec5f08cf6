import ReachabilityVerdict

/// The keys of blackbox_exporter's prober sections: those `/probe` honours, and those it refuses
/// with the reason. A key in neither list is unknown to blackbox as well (an error with a
/// suggestion, from `ConfigMap`).
enum BlackboxKeys {
    static let ipProtocol = ["preferred_ip_protocol", "ip_protocol_fallback"]

    /// Honoured keys, by prober.
    static func honoured(_ prober: BlackboxModule.ProberKind) -> [String] {
        switch prober {
        case .http:
            ipProtocol + [
                "valid_status_codes", "valid_http_versions", "method", "headers", "follow_redirects",
                "no_follow_redirects", "fail_if_ssl", "fail_if_not_ssl", "fail_if_body_matches_regexp",
                "fail_if_body_not_matches_regexp", "fail_if_header_matches", "fail_if_header_not_matches",
                "body_size_limit", "basic_auth", "authorization", "bearer_token", "bearer_token_file", "tls_config",
                "proxy_url", "proxy_from_environment", "enable_http2", "enable_http3", "compression", "body",
                "body_file",
                "skip_resolve_phase_with_proxy",
            ]
        case .tcp: ipProtocol + ["query_response", "tls", "tls_config"]
        case .icmp: ipProtocol + ["payload_size", "dont_fragment", "ttl"]
        case .dns:
            ipProtocol + [
                "query_name", "query_type", "query_class", "valid_rcodes", "transport_protocol", "dns_over_tls",
                "tls_config", "recursion_desired", "validate_answer_rrs",
            ]
        }
    }

    /// Keys blackbox has that `/probe` cannot honour, with why.
    static func refused(_ prober: BlackboxModule.ProberKind) -> [(key: String, reason: String)] {
        let source = (
            "source_ip_address", "a source address is not bound here; bind the module to an interface with uplink:"
        )
        switch prober {
        case .http:
            return [
                ("fail_if_body_json_matches_cel", "CEL expressions are not evaluated here"),
                ("fail_if_body_json_not_matches_cel", "CEL expressions are not evaluated here"),
                ("oauth2", "OAuth 2.0 client credentials are not fetched here"),
                ("http_headers", "use headers:"),
                ("no_proxy", "use proxy_from_environment with NO_PROXY"),
                ("proxy_connect_header", "CONNECT requests carry no extra headers here"),
                ("iterations", "one request per probe"),
            ]
        case .tcp: return [source]
        case .icmp: return [source]
        case .dns:
            return [
                source,
                ("validate_authority_rrs", "the authority section is counted, not read"),
                ("validate_additional_rrs", "the additional section is counted, not read"),
            ]
        }
    }

    static func all(_ prober: BlackboxModule.ProberKind) -> [String] {
        honoured(prober) + refused(prober).map(\.key)
    }

    /// Throws for the first refused key the section has.
    static func refuseUnsupported(_ s: ConfigMap, _ prober: BlackboxModule.ProberKind) throws(ConfigError) {
        for (key, reason) in refused(prober) where s.has(key) {
            throw s.fail(key, expected: "no \(key) (not supported by this exporter)", hint: reason)
        }
    }

    /// A list of regular expressions (`fail_if_body_matches_regexp`…), each checked.
    static func patterns(_ s: ConfigMap, _ key: String) throws(ConfigError) -> [String] {
        guard let items = try s.list(key, expected: "a list of regular expressions") else { return [] }
        var out: [String] = []
        for (i, item) in items.enumerated() {
            guard let text = item.scalar?.text, !(item.scalar?.isNull ?? true) else {
                throw ConfigError(
                    file: s.file, mark: item.mark, path: KeyPath.index(s.path(key), i),
                    expected: "a regular expression",
                    found: item.foundDescription)
            }
            if let problem = HTTPAnswerChecks.problem(text) {
                throw ConfigError(
                    file: s.file, mark: item.mark, path: KeyPath.index(s.path(key), i),
                    expected: "a regular expression", found: text.debugDescription, hint: problem)
            }
            out.append(text)
        }
        return out
    }

    /// The `tls_config` keys honoured (file names, the server name, skipping verification).
    static let tlsHonoured = ["ca_file", "server_name", "insecure_skip_verify"]
    static let tlsRefused: [(key: String, reason: String)] = [
        ("ca", "give the CA as ca_file"), ("ca_ref", "give the CA as ca_file"),
        ("cert", "client certificates are not presented here"),
        ("cert_file", "client certificates are not presented here"),
        ("cert_ref", "client certificates are not presented here"),
        ("key", "client certificates are not presented here"),
        ("key_file", "client certificates are not presented here"),
        ("key_ref", "client certificates are not presented here"),
        ("min_version", "the TLS versions are OpenSSL's defaults here"),
        ("max_version", "the TLS versions are OpenSSL's defaults here"),
    ]

    /// `tls_config`: the CA file, server name and whether to skip verification.
    static func tls(_ s: ConfigMap) throws(ConfigError) -> (caFile: String?, serverName: String?, insecure: Bool) {
        guard
            let t = try s.map(
                "tls_config", keys: tlsHonoured + tlsRefused.map(\.key), what: "the TLS settings")
        else { return (nil, nil, false) }
        for (key, reason) in tlsRefused where t.has(key) {
            throw t.fail(key, expected: "no \(key) (not supported by this exporter)", hint: reason)
        }
        return (
            try t.string("ca_file", expected: "a file name"), try t.string("server_name"),
            try t.bool("insecure_skip_verify") ?? false
        )
    }
}
