extension ProbeKind {
    /// HTTP and HTTPS checks: captive-style (an exact expected answer) or web (200–399).
    package static let http = ProbeKind(
        [.http, .https], section: "http",
        flag: (
            "probe.http", "URL",
            "HTTP(S) captive-portal check; expects status 204 unless --probe.http.expect-status/--probe.http.expect-body say otherwise."
        ), policyGroup: .http, typicalEvidence: .internet, configuration: HTTPProbeConfig.self,
        targets: [.http: "an http:// URL", .https: "an https:// URL"])
}

extension ProbeField {
    /// `http.method`.
    package static let httpMethod = ProbeField("http.method", expected: "a method that fits the expectation")
    /// `http.expected_status`.
    package static let httpExpectedStatus = ProbeField("http.expected_status", expected: "HTTP status codes (100-599)")
    /// `http.follow_redirects`.
    package static let httpFollowRedirects = ProbeField(
        "http.follow_redirects", expected: "false for a captive check (a redirect is the portal signal)")
    /// `http.max_redirects`.
    package static let httpMaxRedirects = ProbeField("http.max_redirects", expected: "a value the prober accepts")
    /// `http.host_header`.
    package static let httpHostHeader = ProbeField(
        "http.host_header", expected: "a host name without spaces or control characters")
    /// `http.headers`.
    package static let httpHeaders = ProbeField("http.headers", expected: "header names and values the prober may send")
    /// `http.tls`.
    package static let httpTLS = ProbeField("http.tls", expected: "usable TLS settings")
    /// `http.tls.server_name`.
    package static let httpTLSServerName = ProbeField("http.tls.server_name", expected: "a host name or IP address")
    /// `http.tls.ca_file`.
    package static let httpTLSCAFile = ProbeField(
        "http.tls.ca_file", expected: "a readable PEM file of CA certificates")
    /// `http.proxy_url`.
    package static let httpProxyURL = ProbeField(
        "http.proxy_url", expected: "an http:// proxy URL (http://[user:password@]host[:port])")
    /// `http.proxy_from_environment`.
    package static let httpProxyFromEnvironment = ProbeField(
        "http.proxy_from_environment", expected: "proxy variables that hold http:// proxy URLs")
    /// `http.body_limit`.
    package static let httpBodyLimit = ProbeField("http.body_limit", expected: "a value the prober accepts")
    /// `http.cache_bust`.
    package static let httpCacheBust = ProbeField("http.cache_bust", expected: "a value the prober accepts")
    /// `http.user_agent`.
    package static let httpUserAgent = ProbeField("http.user_agent", expected: "a value the prober accepts")
}

extension HTTPProbeConfig: ProbeConfiguration {
    /// The file's `http.mode`: a captive check (an exact expected answer) or a web check.
    package enum FileMode: String, CaseIterable { case captive, web }

    package static let sectionKeys = [
        "mode", "method", "expected_status", "expected_body", "follow_redirects", "max_redirects", "host_header",
        "headers", "tls", "proxy_url", "proxy_from_environment",
    ]

    /// `http:` for the entry's URL and family, its keys checked one after another in the order
    /// the docs list them, then built (and checked) by the validating initialiser, whose
    /// defaults are the kind's. The proxy environment is read here, when the file is loaded (a
    /// reload reads it again).
    // Long on purpose: the keys in the docs' order, each with its own combination rules.
    package static func decode(_ entry: inout ProbeEntry, in p: ConfigMap) throws(ConfigError) -> Self {
        let type = entry.type
        try checkURL(p, type: type, target: entry.target)
        var mode = FileMode.captive
        var method: Method?
        var expectedStatus: [Int]?
        var expectedBody: HTTPExpectation.BodyMatch?
        var followRedirects: Bool?
        var maxRedirects = defaultMaxRedirects
        var hostHeader: String?
        var headers: [Header] = []
        var proxyURL: String?
        var proxyFromEnvironment = false
        var (caFile, serverName, insecure): (String?, String?, Bool) = (nil, nil, false)
        if let m = try p.map("http", keys: sectionKeys, what: "the HTTP options") {
            for e in m.entries { entry.marks["http.\(e.key)"] = e.value.mark }
            mode = try m.choice("mode", FileMode.self) ?? .captive
            if let text = try m.string("method", expected: "GET or HEAD") {
                guard let v = Method(rawValue: text), v.isSafe else { throw m.fail("method", expected: "GET or HEAD") }
                method = v
            }
            if m.has("expected_status") {
                guard mode == .captive else {
                    throw m.fail(
                        "expected_status", expected: "no expected_status in web mode", found: "expected_status",
                        hint: "web mode accepts 200–399")
                }
                expectedStatus = try statusCodes(m)
            }
            if let b = try m.map(
                "expected_body", keys: ["contains", "equals", "prefix"], what: "one of contains, equals, prefix")
            {
                guard mode == .captive else {
                    throw m.fail(
                        "expected_body", expected: "no expected_body in web mode", found: "expected_body",
                        hint: "body checks are captive-mode checks")
                }
                guard b.entries.count == 1, let key = b.keys.first,
                    let text = try b.string(key, expected: "the text to look for")
                else {
                    throw ConfigError(
                        file: m.file, mark: b.node.mark, path: b.path,
                        expected: "exactly one of contains, equals, prefix",
                        found: b.entries.isEmpty ? "none" : b.keys.joined(separator: " and "))
                }
                expectedBody = key == "contains" ? .contains(text) : key == "equals" ? .exact(text) : .prefix(text)
                if method == .head {
                    throw m.fail("method", expected: "GET (a body check needs a body)", found: "HEAD")
                }
            }
            followRedirects = try m.bool("follow_redirects")
            if mode == .captive, followRedirects == true {
                throw m.fail(
                    "follow_redirects", expected: "false or nothing in captive mode", found: "true",
                    hint: "in captive mode a redirect is the portal signal; use mode: web to follow")
            }
            if m.has("max_redirects") {
                guard mode == .web else {
                    throw m.fail(
                        "max_redirects", expected: "no max_redirects in captive mode", found: "max_redirects",
                        hint: "captive mode never follows redirects")
                }
                maxRedirects = try m.int("max_redirects", 0...100) ?? maxRedirects
            }
            hostHeader = try m.string("host_header", expected: "a host name")
            headers = try Self.headers(m, marks: &entry.marks)
            proxyURL = try m.string("proxy_url", expected: "an http:// proxy URL (http://[user:password@]host[:port])")
            proxyFromEnvironment = try m.bool("proxy_from_environment") ?? false
            if proxyURL != nil, proxyFromEnvironment {
                throw m.fail(
                    "proxy_from_environment", expected: "either proxy_url or proxy_from_environment", found: "both",
                    hint: "proxy_url names the proxy; proxy_from_environment takes HTTP_PROXY/HTTPS_PROXY/NO_PROXY")
            }
            if let t = try m.map(
                "tls", keys: ["ca_file", "server_name", "insecure_skip_verify"], what: "the TLS options")
            {
                guard type == .https || mode == .web else {
                    throw ConfigError(
                        file: m.file, mark: m.keyMark("tls"), path: m.path("tls"),
                        expected: "no tls section on a captive http:// probe", found: "a tls section",
                        hint: "tls applies to https probes, and to web probes that may be redirected to https")
                }
                for e in t.entries { entry.marks["http.tls.\(e.key)"] = e.value.mark }
                caFile = try t.string("ca_file", expected: "a path to a PEM file of CA certificates")
                serverName = try t.string("server_name", expected: "a host name")
                insecure = try t.bool("insecure_skip_verify") ?? false
            }
        }
        let codes = Set(expectedStatus ?? (expectedBody == nil ? [204] : [200]))
        let checkMode: Mode = mode == .web ? .web : .captive(HTTPExpectation(statusCodes: codes, body: expectedBody))
        let (url, family) = (entry.target, entry.family ?? .any)
        return try entry.checked { () throws(ProbeConfigError) in
            var proxy = HTTPProxySetting.direct
            if let proxyURL {
                do throws(ProbeConfigError) { proxy = .fixed(try HTTPProxy(parsing: proxyURL)) } catch {
                    throw error.about(.httpProxyURL)
                }
            }
            if proxyFromEnvironment {
                do throws(ProbeConfigError) { proxy = .environment(try ProxyEnvironment(processEnvironment())) } catch {
                    throw error.about(.httpProxyFromEnvironment)
                }
            }
            return try HTTPProbeConfig(
                url: url, method: method, mode: checkMode, followRedirects: followRedirects,
                maxRedirects: maxRedirects, hostHeader: hostHeader, serverName: serverName, caFile: caFile,
                insecureSkipVerify: insecure, family: family, headers: headers, proxy: proxy)
        }
    }

    package func spec(_ at: ProbeSpec.Placement) -> ProbeSpec { .http(self, at) }

    package var summary: [String] {
        switch mode {
        case .web: ["web"]
        case .captive(let e): ["captive, expects " + e.statusCodes.sorted().map(String.init).joined(separator: "/")]
        }
    }

    /// The target's scheme must be the type's (`type: https` needs `https://`).
    package static func checkURL(_ p: ConfigMap, type: ProbeType, target: String) throws(ConfigError) {
        let url: ProbeURL
        do throws(ProbeURL.ParseError) { url = try ProbeURL(target) } catch {
            throw p.fail("target", expected: type.kind.targetText(type), hint: error.message)
        }
        let scheme: ProbeType = url.scheme == .https ? .https : .http
        if scheme != type {
            throw p.fail(
                "target", expected: type.kind.targetText(type),
                hint: "type \(type.rawValue) needs the \(type.rawValue):// scheme; or set type: \(scheme.rawValue)")
        }
    }

    /// `http.headers`: a map of header names to values.
    package static func headers(_ m: ConfigMap, marks: inout [String: YAMLMark]) throws(ConfigError) -> [Header] {
        guard let node = m.value("headers") else { return [] }
        guard case .map(let entries) = node.kind else {
            throw m.fail("headers", expected: "a map of header names to values")
        }
        var out: [Header] = []
        for e in entries {
            guard let s = e.value.scalar, !s.isNull else {
                throw ConfigError(
                    file: m.file, mark: e.value.mark, path: KeyPath.child(m.path("headers"), e.key),
                    expected: "a header value", found: e.value.foundDescription)
            }
            out.append(Header(e.key, s.text))
            marks["http.headers"] = e.keyMark
        }
        return out
    }

    /// `expected_status`: one status set (`204`, `"200,204"`, `200-399`, `2xx`) or a list of them.
    package static func statusCodes(_ m: ConfigMap) throws(ConfigError) -> [Int] {
        let expected = "a status set such as 204, 200-399 or 2xx, or a list of them, such as [200, 204]"
        guard let node = m.value("expected_status") else { return [] }
        let items: [YAMLNode]
        switch node.kind {
        case .scalar: items = [node]
        case .list(let list) where !list.isEmpty: items = list
        default: throw m.fail("expected_status", expected: expected)
        }
        var codes = Set<Int>()
        for (i, item) in items.enumerated() {
            let path = node.scalar == nil ? KeyPath.index(m.path("expected_status"), i) : m.path("expected_status")
            guard let text = item.scalar?.text, !(item.scalar?.isNull ?? true) else {
                throw ConfigError(
                    file: m.file, mark: item.mark, path: path, expected: expected, found: item.foundDescription)
            }
            do throws(HTTPStatusSet.ParseError) {
                codes.formUnion(try HTTPStatusSet.parse(text))
            } catch {
                throw ConfigError(
                    file: m.file, mark: item.mark, path: path,
                    expected: "HTTP status codes (100–599), ranges such as 200-399 or classes such as 2xx",
                    found: item.foundDescription, hint: error.message)
            }
        }
        return codes.sorted()
    }
}
