import ReachabilityVerdict

/// A blackbox `http` module's settings, checked at load; `config(url:address:)` builds the web
/// check for one target.
package struct BlackboxHTTP: Sendable {
    var method: HTTPProbeConfig.Method = .get
    /// `body`.
    var body: [UInt8] = []
    /// `body_file`, read at each probe (as blackbox reads it).
    var bodyFile: String?
    var headers: [HTTPProbeConfig.Header] = []
    /// `basic_auth`, `authorization` or `bearer_token`: sent unless the request carries an
    /// `Authorization` already (a `headers:` entry, or the target URL's user information), as
    /// blackbox's round trippers give way.
    var authorization: String?
    /// A `Host` header in `headers`: sent instead of the URL's authority.
    var hostHeader: String?
    var followRedirects = true
    var checks = HTTPAnswerChecks()
    var failIfSSL = false
    var failIfNotSSL = false
    var caFile: String?
    var serverName: String?
    var insecureSkipVerify = false
    /// blackbox reads every body to the end; the prober reads at most this (a body check on a
    /// longer body fails with `too_large`, as blackbox's `body_size_limit` does).
    var bodyLimit = 1 << 20
    var proxy: HTTPProxySetting = .direct

    static let defaultBodyLimit = 1 << 20

    init() {}

    init(_ s: ConfigMap) throws(ConfigError) {
        let dir = s.file.contains("/") ? String(s.file[..<s.file.lastIndex(of: "/")!]) : "."
        let methods = HTTPProbeConfig.Method.allCases.map(\.rawValue).joined(separator: ", ")
        if let text = try s.string("method", expected: methods) {
            guard let m = HTTPProbeConfig.Method(rawValue: text.uppercased()) else {
                throw s.fail("method", expected: methods)
            }
            method = m
        }
        if let text = try s.scalar("body", expected: "the request body")?.text { body = Array(text.utf8) }
        if let name = try s.string("body_file", expected: "a file name") {
            guard body.isEmpty else { throw s.fail("body_file", expected: "body or body_file, not both") }
            bodyFile = name.hasPrefix("/") ? name : dir + "/" + name
        }
        if (!body.isEmpty || bodyFile != nil) && method.isSafe {
            throw s.fail(
                "method", expected: "POST, PUT, PATCH, DELETE or OPTIONS with a body",
                hint: "a GET or HEAD sends no body")
        }
        if let node = s.value("headers") {
            guard case .map(let entries) = node.kind else {
                throw s.fail("headers", expected: "a map of header: value")
            }
            for e in entries {
                guard let value = e.value.scalar?.text else {
                    throw ConfigError(
                        file: s.file, mark: e.value.mark, path: KeyPath.child(s.path("headers"), e.key),
                        expected: "a header value", found: e.value.foundDescription)
                }
                if e.key.lowercased() == "host" { hostHeader = value } else { headers.append(.init(e.key, value)) }
            }
        }
        if let codes = try s.list("valid_status_codes", expected: "a list of status codes") {
            for (i, c) in codes.enumerated() {
                guard let n = c.scalar.flatMap({ Int($0.text) }), (100...599).contains(n) else {
                    throw ConfigError(
                        file: s.file, mark: c.mark, path: KeyPath.index(s.path("valid_status_codes"), i),
                        expected: "a status code from 100 to 599", found: c.foundDescription)
                }
                checks.statusCodes.insert(n)
            }
        }
        if let versions = try s.list("valid_http_versions", expected: "a list such as [HTTP/1.1, HTTP/2.0]") {
            for v in versions { checks.versions.insert(v.scalar?.text ?? "") }
            if !checks.versions.isEmpty && !checks.versions.contains(where: { $0.hasPrefix("HTTP/1.") }) {
                throw s.fail(
                    "valid_http_versions", expected: "HTTP/1.1 or HTTP/1.0 among them",
                    hint: "the HTTP client speaks HTTP/1.1 only: no answer could be valid")
            }
        }
        checks.failIfBodyMatches = try BlackboxKeys.patterns(s, "fail_if_body_matches_regexp")
        checks.failIfBodyNotMatches = try BlackboxKeys.patterns(s, "fail_if_body_not_matches_regexp")
        checks.failIfHeaderMatches = try Self.headerMatches(s, "fail_if_header_matches")
        checks.failIfHeaderNotMatches = try Self.headerMatches(s, "fail_if_header_not_matches")
        if checks.readsBody && method == .head {
            throw s.fail("method", expected: "GET (a body check needs a body)", found: "HEAD")
        }
        let follow = try s.bool("follow_redirects")
        let noFollow = try s.bool("no_follow_redirects")
        if let follow, let noFollow, follow == noFollow {
            throw s.fail("no_follow_redirects", expected: "the opposite of follow_redirects, or only one of them")
        }
        followRedirects = follow ?? noFollow.map { !$0 } ?? true
        failIfSSL = try s.bool("fail_if_ssl") ?? false
        failIfNotSSL = try s.bool("fail_if_not_ssl") ?? false
        if let limit = try s.string("body_size_limit", expected: "a size such as 1MB") {
            guard let bytes = Self.base2Bytes(limit), (1...(16 << 20)).contains(bytes) else {
                throw s.fail(
                    "body_size_limit", expected: "a size from 1B to 16MiB (KB, MB are powers of 1024, as in blackbox)")
            }
            bodyLimit = bytes
            checks.failsPastLimit = true
        }
        (caFile, serverName, insecureSkipVerify) = try BlackboxKeys.tls(s)
        caFile = caFile.map { $0.hasPrefix("/") ? $0 : dir + "/" + $0 }
        authorization = try Self.authorization(s, dir: dir)
        if try s.bool("enable_http2") == true {
            throw s.fail(
                "enable_http2", expected: "false or no key", found: "true", hint: "the HTTP client speaks HTTP/1.1 only"
            )
        }
        if try s.bool("enable_http3") == true {
            throw s.fail(
                "enable_http3", expected: "false or no key", found: "true", hint: "the HTTP client speaks HTTP/1.1 only"
            )
        }
        if let c = try s.string("compression", expected: "no compression"), c.lowercased() != "identity" {
            throw s.fail("compression", expected: "no compression", hint: "bodies are not decompressed here")
        }
        if try s.bool("skip_resolve_phase_with_proxy") == true {
            throw s.fail("skip_resolve_phase_with_proxy", expected: "false", hint: "the target is always resolved here")
        }
        if let url = try s.string("proxy_url", expected: "an http:// proxy URL") {
            do throws(ProbeConfigError) { proxy = .fixed(try HTTPProxy(parsing: url)) } catch {
                throw s.fail("proxy_url", expected: "an http://[user:password@]host[:port] proxy", hint: error.message)
            }
        }
        if try s.bool("proxy_from_environment") == true {
            if case .fixed = proxy { throw s.fail("proxy_from_environment", expected: "no proxy_url beside it") }
            do throws(ProbeConfigError) { proxy = .environment(try ProxyEnvironment(processEnvironment())) } catch {
                throw s.fail("proxy_from_environment", expected: "a usable HTTP_PROXY/HTTPS_PROXY", hint: error.message)
            }
        }
    }

    /// The web check of `url` with the module's settings; `address` (the resolved one, when the
    /// target's host is a name) is connected to, with the name kept for `Host` and TLS.
    /// `userinfo`: the `Authorization` the target URL's user information makes.
    func config(url: ProbeURL, address: SocketAddress?, interface: String?, userinfo: String? = nil)
        throws(ProbeConfigError) -> HTTPProbeConfig
    {
        var headers = self.headers
        if !headers.contains(where: { $0.name.lowercased() == "authorization" }),
            let auth = userinfo ?? authorization
        {
            headers.append(.init("Authorization", auth))
        }
        var connect = url.description
        var host = hostHeader
        var name = serverName
        if let address, !url.isIPLiteral {
            let literal = address.ipFamily == .ipv6 ? "[\(address.ip)]" : address.ip
            let port = url.port == url.scheme.defaultPort ? "" : ":\(url.port)"
            connect = "\(url.scheme.rawValue)://\(literal)\(port)\(url.target)"
            host = host ?? url.authority
        }
        // A Host header names the TLS server too, when tls_config has no server_name (as blackbox).
        if name == nil, let h = hostHeader {
            name = h.hasPrefix("[") ? String(h.dropFirst().prefix { $0 != "]" }) : String(h.prefix { $0 != ":" })
        }
        if address != nil, !url.isIPLiteral {
            name = name ?? url.host
        }
        var body = self.body
        if let bodyFile {
            guard let bytes = try? FileContents.read(bodyFile, limit: 1 << 20) else {
                throw ProbeConfigError(.httpBodyLimit, "body_file \(bodyFile): not a readable file of at most 1 MiB")
            }
            body = bytes
        }
        return try HTTPProbeConfig(
            url: connect, method: method, mode: .web, followRedirects: followRedirects, hostHeader: host,
            serverName: name, caFile: caFile, insecureSkipVerify: insecureSkipVerify, interface: interface,
            bodyLimit: bodyLimit, headers: headers, proxy: proxy, checks: checks, requestBody: body)
    }

    private static func headerMatches(_ s: ConfigMap, _ key: String) throws(ConfigError) -> [HTTPAnswerChecks
        .HeaderMatch]
    {
        guard let items = try s.list(key, expected: "a list of {header, regexp, allow_missing}") else { return [] }
        var out: [HTTPAnswerChecks.HeaderMatch] = []
        for (i, item) in items.enumerated() {
            let m = try ConfigMap(
                item, path: KeyPath.index(s.path(key), i), file: s.file, keys: ["header", "regexp", "allow_missing"],
                what: "a header match")
            guard let header = try m.string("header", expected: "a header name") else {
                throw m.missing("header", expected: "a header name")
            }
            guard let pattern = try m.scalar("regexp", expected: "a regular expression")?.text else {
                throw m.missing("regexp", expected: "a regular expression")
            }
            if let problem = HTTPAnswerChecks.problem(pattern) {
                throw m.fail("regexp", expected: "a regular expression", hint: problem)
            }
            out.append(.init(header: header, pattern: pattern, allowMissing: try m.bool("allow_missing") ?? false))
        }
        return out
    }

    /// `basic_auth`, `authorization` or `bearer_token`(`_file`): the `Authorization` value.
    private static func authorization(_ s: ConfigMap, dir: String) throws(ConfigError) -> String? {
        let given = ["basic_auth", "authorization", "bearer_token", "bearer_token_file"].filter { s.has($0) }
        guard given.count <= 1 else {
            throw s.fail(given[1], expected: "one way to authenticate", found: given.joined(separator: " and "))
        }
        func secretFile(_ m: ConfigMap, _ key: String) throws(ConfigError) -> String? {
            guard let name = try m.string(key, expected: "a file name") else { return nil }
            let path = name.hasPrefix("/") ? name : dir + "/" + name
            guard let bytes = try? FileContents.read(path, limit: 64 << 10) else {
                throw m.fail(key, expected: "a readable file (up to 64 KiB)")
            }
            return String(decoding: bytes, as: UTF8.self).trimmingTrailingNewlines
        }
        if let b = try s.map(
            "basic_auth", keys: ["username", "password", "password_file", "username_file"], what: "basic auth")
        {
            if b.has("username_file") {
                throw b.fail("username_file", expected: "username", hint: "not supported here")
            }
            let user = try b.scalar("username", expected: "a user name")?.text ?? ""
            var password = try b.scalar("password", expected: "a password")?.text ?? ""
            if let fromFile = try secretFile(b, "password_file") { password = fromFile }
            return "Basic " + Base64.encode(Array("\(user):\(password)".utf8))
        }
        if let a = try s.map("authorization", keys: ["type", "credentials", "credentials_file"], what: "authorization")
        {
            let type = try a.string("type", expected: "an authorization scheme") ?? "Bearer"
            var credentials = try a.scalar("credentials", expected: "credentials")?.text ?? ""
            if let fromFile = try secretFile(a, "credentials_file") { credentials = fromFile }
            return "\(type) \(credentials)"
        }
        if let token = try s.scalar("bearer_token", expected: "a token")?.text { return "Bearer \(token)" }
        if let token = try secretFile(s, "bearer_token_file") { return "Bearer \(token)" }
        return nil
    }

    /// alecthomas/units' `Base2Bytes`, as blackbox reads `body_size_limit`: `KB`, `MB`, `GB` (and
    /// `KiB`…) are powers of 1024.
    static func base2Bytes(_ text: String) -> Int? {
        let digits = text.prefix { $0.isASCII && $0.isNumber }
        guard let n = Int(digits) else { return nil }
        let units: [String: Int] = [
            "": 1, "B": 1, "KB": 1 << 10, "KiB": 1 << 10, "MB": 1 << 20, "MiB": 1 << 20, "GB": 1 << 30, "GiB": 1 << 30,
        ]
        guard let f = units[String(text.dropFirst(digits.count))] else { return nil }
        let (v, overflow) = n.multipliedReportingOverflow(by: f)
        return overflow ? nil : v
    }
}

extension String {
    fileprivate var trimmingTrailingNewlines: String {
        var s = Substring(self)
        while s.last == "\n" || s.last == "\r" { s = s.dropLast() }
        return String(s)
    }
}
