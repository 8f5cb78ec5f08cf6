import ReachabilityVerdict

/// The `--web.config.file` in the exporter-toolkit format (Prometheus's and the exporters'
/// `web-config.yml`), so an operator's existing file works unchanged:
///
///     tls_server_config: {cert_file, key_file, cert, key, client_auth_type, client_ca_file,
///                         client_ca, client_allowed_sans, min_version, max_version,
///                         cipher_suites, prefer_server_cipher_suites, curve_preferences}
///     http_server_config: {http2, headers: {Content-Security-Policy, X-Frame-Options,
///                          X-Content-Type-Options, X-XSS-Protection, Strict-Transport-Security}}
///     basic_auth_users: {NAME: BCRYPT_HASH, ...}
///     basic_auth_excluded_paths: [PATH, ...]
///     rate_limit: {interval, burst}
///
/// Relative file names are relative to the web configuration file's directory, as in the
/// toolkit. Loading reads every file it names and builds the TLS context, so an unknown key, an
/// unreadable file, a key that does not match its certificate or a hash that is not bcrypt is a
/// `ConfigError` naming the file and the key. Only HTTP/1.1 is served: `http2: false` is accepted,
/// `http2: true` is refused (the toolkit's default is true: a file that asks for HTTP/2 gets an
/// error, not a silent HTTP/1.1).
package struct WebConfig: Sendable {
    package var tls: TLSServerContext?
    /// User name → bcrypt hash; empty: no authentication.
    package var users: [String: String] = [:]
    /// Paths served without basic auth (exact match on the path, as the router matches it).
    package var authExcludedPaths: Set<String> = []
    /// Extra response headers, in file order.
    package var headers: [(name: String, value: String)] = []
    /// Requests per second and burst of the toolkit's token bucket; nil: no limit.
    package var rateLimit: (interval: Duration, burst: Int)?
    /// Every file the configuration read (itself first): a change to any is a reload.
    package var files: [String] = []

    static let topKeys = [
        "tls_server_config", "http_server_config", "basic_auth_users", "basic_auth_excluded_paths", "rate_limit",
    ]
    static let tlsKeys = [
        "cert_file", "key_file", "cert", "key", "client_auth_type", "client_ca_file", "client_ca",
        "client_allowed_sans",
        "min_version", "max_version", "cipher_suites", "prefer_server_cipher_suites", "curve_preferences",
    ]
    /// The toolkit's header allow-list, with the values it accepts (nil: any).
    static let allowedHeaders: [(String, [String]?)] = [
        ("Content-Security-Policy", nil), ("X-Frame-Options", ["deny", "sameorigin"]),
        ("X-Content-Type-Options", ["nosniff"]), ("X-XSS-Protection", nil), ("Strict-Transport-Security", nil),
    ]

    package static func load(path: String) throws(ConfigError) -> WebConfig {
        let bytes: [UInt8]
        do throws(Errno) { bytes = try FileContents.read(path, limit: ConfigLoader.maximumSize) } catch {
            throw ConfigError(
                file: path, mark: nil, path: "", expected: "a readable web configuration file",
                found: FileContents.describe(error, limit: ConfigLoader.maximumSize))
        }
        var config = try parse(bytes, file: path)
        config.files.insert(path, at: 0)
        return config
    }

    // Long on purpose: the sections in the order the toolkit documents them.
    package static func parse(_ bytes: [UInt8], file: String) throws(ConfigError) -> WebConfig {
        var config = WebConfig()
        // An empty file is refused (as the main configuration is): emptied by a careless edit or
        // a full disk, it must not turn TLS and authentication off. No --web.config.file means plain HTTP.
        guard let root = try YAMLParser.parse(bytes, file: file) else {
            throw ConfigError(
                file: file, mark: nil, path: "", expected: "a web configuration",
                found: "an empty file (for plain HTTP without authentication, leave out --web.config.file)")
        }
        let top = try ConfigMap(root, path: "", file: file, keys: topKeys, what: "a web configuration")
        let dir = file.contains("/") ? String(file[..<file.lastIndex(of: "/")!]) : "."
        if let t = try top.map("tls_server_config", keys: tlsKeys, what: "the TLS settings") {
            config.tls = try tlsContext(t, dir: dir, files: &config.files)
        }
        if let h = try top.map("http_server_config", keys: ["http2", "headers"], what: "the HTTP settings") {
            if try h.bool("http2") == true {
                throw h.fail(
                    "http2", expected: "false or no key: this exporter serves HTTP/1.1 only", found: "true",
                    hint: "remove http2, or set it to false; Prometheus scrapes over HTTP/1.1")
            }
            if let node = h.value("headers") {
                let m = try ConfigMap(
                    node, path: h.path("headers"), file: file, keys: allowedHeaders.map(\.0), what: "response headers")
                for (name, values) in allowedHeaders {
                    guard let value = try m.scalar(name, expected: "a header value")?.text, !value.isEmpty else {
                        continue
                    }
                    if let values, !values.contains(value.lowercased()) {
                        throw m.fail(name, expected: "one of \(values.joined(separator: ", "))")
                    }
                    guard !value.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
                        throw m.fail(name, expected: "a header value without control characters")
                    }
                    config.headers.append((name, value))
                }
            }
        }
        if let node = top.value("basic_auth_users") {
            guard case .map(let entries) = node.kind else {
                throw top.fail("basic_auth_users", expected: "a map of user name: bcrypt hash")
            }
            for e in entries {
                let path = KeyPath.child("basic_auth_users", e.key)
                guard !e.key.isEmpty, !e.key.contains(":") else {
                    // Not the key's text: `alice:password` written as a user name is a password.
                    throw ConfigError(
                        file: file, mark: e.keyMark, path: "basic_auth_users", expected: "a user name without ':'",
                        found: e.key.isEmpty ? "an empty name" : "a name with ':' (not shown: it may hold a password)")
                }
                guard let hash = e.value.scalar?.text, PasswordHash.isBcrypt(hash) else {
                    throw ConfigError(
                        file: file, mark: e.value.mark, path: path,
                        expected: "a bcrypt hash ($2a$, $2b$ or $2y$, e.g. from htpasswd -nBC 10)",
                        found: "another value",
                        hint: "the value is not shown: it may be a password")
                }
                config.users[e.key] = hash
            }
        }
        for (i, item) in (try top.list("basic_auth_excluded_paths", expected: "a list of paths") ?? []).enumerated() {
            guard let text = item.scalar?.text, text.hasPrefix("/"), !text.contains("?") else {
                throw ConfigError(
                    file: file, mark: item.mark, path: KeyPath.index("basic_auth_excluded_paths", i),
                    expected: "a path such as /-/healthy", found: item.foundDescription)
            }
            config.authExcludedPaths.insert(text)
        }
        if let r = try top.map("rate_limit", keys: ["interval", "burst"], what: "the rate limit") {
            let interval = try r.duration("interval") ?? .zero
            let burst = try r.int("burst", 0...1_000_000) ?? 0
            if interval > .zero { config.rateLimit = (interval, max(1, burst)) }
        }
        return config
    }

    private static func tlsContext(_ t: ConfigMap, dir: String, files: inout [String]) throws(ConfigError)
        -> TLSServerContext
    {
        var s = TLSServerContext.Settings()
        func pem(_ fileKey: String, _ inlineKey: String, required: Bool) throws(ConfigError) -> [UInt8]? {
            let inline = try t.string(inlineKey, expected: "PEM text")
            let path = try t.string(fileKey, expected: "a file name")
            if inline != nil, path != nil {
                throw t.fail(inlineKey, expected: "either \(fileKey) or \(inlineKey)", found: "both")
            }
            if let inline { return Array(inline.utf8) }
            guard let path else {
                if required { throw t.missing(fileKey, expected: "a PEM file") }
                return nil
            }
            let full = path.hasPrefix("/") ? path : "\(dir)/\(path)"
            do throws(Errno) {
                let bytes = try FileContents.read(full, limit: 1 << 20)
                files.append(full)
                return bytes
            } catch {
                throw t.fail(
                    fileKey, expected: "a readable PEM file",
                    found: "\(full): \(FileContents.describe(error, limit: 1 << 20))")
            }
        }
        s.certificatePEM = try pem("cert_file", "cert", required: true) ?? []
        s.keyPEM = try pem("key_file", "key", required: true) ?? []
        s.clientCAPEM = try pem("client_ca_file", "client_ca", required: false)
        if let auth = try t.string("client_auth_type", expected: "a client auth type") {
            guard let a = TLSServerContext.ClientAuth(rawValue: auth) else {
                throw t.fail(
                    "client_auth_type",
                    expected: "one of " + TLSServerContext.ClientAuth.allCases.map(\.rawValue).joined(separator: ", "))
            }
            s.clientAuth = a
        }
        s.clientAllowedSANs = try strings(t, "client_allowed_sans")
        s.minVersion = try t.string("min_version", expected: "TLS10, TLS11, TLS12 or TLS13") ?? s.minVersion
        s.maxVersion = try t.string("max_version", expected: "TLS10, TLS11, TLS12 or TLS13") ?? s.maxVersion
        s.cipherSuites = try strings(t, "cipher_suites")
        s.preferServerCipherSuites = try t.bool("prefer_server_cipher_suites") ?? true
        s.curvePreferences = try strings(t, "curve_preferences")
        do throws(TLSServerContext.Failure) {
            return try TLSServerContext(s)
        } catch {
            let key = t.has(error.key) ? error.key : (error.key == "key_file" && t.has("key") ? "key" : error.key)
            throw t.fail(key, expected: "a setting OpenSSL accepts", found: error.message)
        }
    }

    private static func strings(_ m: ConfigMap, _ key: String) throws(ConfigError) -> [String] {
        guard let items = try m.list(key, expected: "a list of strings") else { return [] }
        var out: [String] = []
        for (i, item) in items.enumerated() {
            guard let s = item.scalar, !s.isNull, !s.text.isEmpty else {
                throw ConfigError(
                    file: m.file, mark: item.mark, path: KeyPath.index(m.path(key), i), expected: "a string",
                    found: item.foundDescription)
            }
            out.append(s.text)
        }
        return out
    }
}
