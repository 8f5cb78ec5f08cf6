/// Everything one HTTP(S) prober needs, validated in the throwing initialiser so that a bad URL,
/// header or CA file is a configuration error at load time, never a probe-time failure.
package struct HTTPProbeConfig: Sendable, Equatable {
    package enum Method: String, Sendable, Equatable, CaseIterable {
        case head = "HEAD"
        case get = "GET"
        /// Web checks of a `/probe` module only (blackbox's `method:`), with `requestBody`.
        case post = "POST"
        case put = "PUT"
        case patch = "PATCH"
        case delete = "DELETE"
        case options = "OPTIONS"

        /// GET and HEAD: what a captive check and the file's probes may send.
        package var isSafe: Bool { self == .get || self == .head }
    }

    /// How an answer is judged.
    package enum Mode: Sendable, Equatable {
        /// Captive-portal detection: redirects are never followed. Every 3xx (307 and 308
        /// too) is a portal signal (`redirect`), so is 511 (`network_authentication_required`,
        /// RFC 6585), an unexpected 2xx (`http_status`) and a wrong body (`body_mismatch`); any
        /// other 4xx/5xx is a plain failure (`http_status`).
        case captive(HTTPExpectation)
        /// Ordinary web check: 200–399 is success; redirects are followed when enabled; 511 is
        /// a portal signal.
        case web
    }

    /// An extra request header.
    package struct Header: Sendable, Equatable {
        package var name: String
        package var value: String
        package init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// A query parameter that makes every request URL unique, so no cache answers for the network.
    package struct CacheBust: Sendable, Equatable {
        package enum Value: Sendable, Equatable {
            /// 64 random bits in hex.
            case random
            /// Wall-clock nanoseconds at first use, then +1 per request: increasing, and unique across restarts.
            case monotonic
        }
        package var parameter: String
        package var value: Value
        package init(parameter: String = "_rx", value: Value = .random) {
            self.parameter = parameter
            self.value = value
        }
    }

    /// `reachability_exporter/<version>`.
    package static let defaultUserAgent = "reachability_exporter/\(BuildInfo.version)"

    package let url: ProbeURL
    package let method: Method
    package let mode: Mode
    /// Web mode only; captive mode never follows.
    package let followRedirects: Bool
    package let maxRedirects: Int
    /// Redirects a `web` check follows at most (the file's `http.max_redirects`).
    package static let defaultMaxRedirects = 10
    /// Host header for the first request instead of the URL's authority (not for redirected hosts).
    package let hostHeader: String?
    /// TLS SNI and certificate name instead of the URL host (first host only).
    package let serverName: String?
    package let caFile: String?
    package let insecureSkipVerify: Bool
    package let family: FamilyPreference
    /// Network interface to bind to (`SO_BINDTODEVICE`), for probing one uplink.
    package private(set) var interface: String?
    /// Body bytes read at most; the rest is not read and a body match judges what was read.
    package let bodyLimit: Int
    package let cacheBust: CacheBust?
    package let headers: [Header]
    package let userAgent: String
    /// Direct, one proxy for every request, or the environment's choice per URL.
    package let proxy: HTTPProxySetting
    /// Web mode: what the final answer must be beyond 200–399 (a `/probe` module's checks);
    /// nil: 200–399.
    package let checks: HTTPAnswerChecks?
    /// What the first request sends after its head (`Content-Length` is set), for methods
    /// other than GET and HEAD; a 301, 302 or 303 turns the next request into a GET without it,
    /// as browsers and Go's client do.
    package let requestBody: [UInt8]

    /// The probe type, from the URL scheme.
    package var probeType: ProbeType { url.scheme == .https ? .https : .http }
    package var tlsOptions: TLSContext.Options {
        TLSContext.Options(caFile: caFile, insecureSkipVerify: insecureSkipVerify)
    }

    /// - Parameters:
    ///   - method: nil picks GET, as Android and Apple do: some portals answer HEAD differently
    ///     (openNDS answers every non-GET request with 511); HEAD only when asked.
    ///   - mode: defaults to a captive check expecting status 204.
    ///   - followRedirects: nil means "follow" in web mode; must not be true in captive mode.
    package init(
        url: String, method: Method? = nil, mode: Mode = .captive(.noContent), followRedirects: Bool? = nil,
        maxRedirects: Int = defaultMaxRedirects, hostHeader: String? = nil, serverName: String? = nil,
        caFile: String? = nil,
        insecureSkipVerify: Bool = false, family: FamilyPreference = .any, interface: String? = nil,
        bodyLimit: Int = 65_536, cacheBust: CacheBust? = nil, headers: [Header] = [],
        userAgent: String = HTTPProbeConfig.defaultUserAgent, proxy: HTTPProxySetting = .direct,
        checks: HTTPAnswerChecks? = nil, requestBody: [UInt8] = []
    ) throws(ProbeConfigError) {
        func fail(_ field: ProbeField, _ message: String) -> ProbeConfigError {
            ProbeConfigError(field, message, heading: Self.heading(field))
        }
        do throws(ProbeURL.ParseError) {
            self.url = try ProbeURL(url)
        } catch {
            throw fail(.target, error.description)
        }
        var checksBody = false
        if case .captive(let expectation) = mode {
            checksBody = expectation.body != nil
            if followRedirects == true {
                throw fail(
                    .httpFollowRedirects, "a captive check never follows redirects: a redirect is the portal signal")
            }
            if let bad = expectation.statusCodes.first(where: { !(100...599).contains($0) }) {
                throw fail(.httpExpectedStatus, "\(bad) is not an HTTP status code")
            }
        }
        if let checks {
            guard case .web = mode else {
                throw fail(.httpExpectedStatus, "answer checks are for web checks; a captive check has its expectation")
            }
            if let bad = checks.statusCodes.first(where: { !(100...599).contains($0) }) {
                throw fail(.httpExpectedStatus, "\(bad) is not an HTTP status code")
            }
            checksBody = checks.readsBody
        }
        self.checks = checks
        self.method = method ?? .get
        if checks == nil && !self.method.isSafe {
            throw fail(.httpMethod, "\(self.method.rawValue): GET or HEAD (a request body is for /probe modules)")
        }
        if !requestBody.isEmpty && self.method.isSafe {
            throw fail(.httpMethod, "a request body needs POST, PUT, PATCH, DELETE or OPTIONS")
        }
        guard requestBody.count <= 1 << 20 else { throw fail(.httpBodyLimit, "a request body of at most 1 MiB") }
        self.requestBody = requestBody
        if checksBody && self.method == .head {
            throw fail(.httpMethod, "a body expectation needs GET (HEAD has no body)")
        }
        self.mode = mode
        if case .web = mode { self.followRedirects = followRedirects ?? true } else { self.followRedirects = false }
        guard (0...100).contains(maxRedirects) else {
            throw fail(.httpMaxRedirects, "must be in 0...100, got \(maxRedirects)")
        }
        self.maxRedirects = maxRedirects
        if let hostHeader, hostHeader.isEmpty || hostHeader.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) {
            throw fail(.httpHostHeader, "must be non-empty without spaces or control characters")
        }
        self.hostHeader = hostHeader
        if let serverName, SocketAddress(ip: serverName) == nil, !Resolver.isPlausibleHostName(serverName) {
            throw fail(.httpTLSServerName, "\(serverName.debugDescription) is not a host name or IP address")
        }
        self.serverName = serverName
        if caFile != nil && insecureSkipVerify {
            throw fail(.httpTLSCAFile, "a CA file and insecure_skip_verify exclude each other")
        }
        self.caFile = caFile
        self.insecureSkipVerify = insecureSkipVerify
        self.family = family
        if let interface, let problem = InterfaceName.problem(interface) {
            throw fail(.interface, "\(interface.debugDescription) is not an interface name: \(problem)")
        }
        self.interface = interface
        guard (0...16 << 20).contains(bodyLimit) else {
            throw fail(.httpBodyLimit, "must be in 0...16 MiB, got \(bodyLimit)")
        }
        if checksBody && bodyLimit == 0 { throw fail(.httpBodyLimit, "a body expectation needs a body limit above 0") }
        self.bodyLimit = bodyLimit
        if let cacheBust, cacheBust.parameter.isEmpty || !cacheBust.parameter.utf8.allSatisfy(Self.isUnreserved) {
            throw fail(.httpCacheBust, "parameter name must use only letters, digits, '-', '.', '_', '~'")
        }
        self.cacheBust = cacheBust
        for header in headers {
            if let problem = Self.validate(header) { throw fail(.httpHeaders, problem) }
        }
        self.headers = headers
        if userAgent.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            throw fail(.httpUserAgent, "control characters are not allowed")
        }
        self.userAgent = userAgent
        self.proxy = proxy
        // Load the trust settings now (https, or web mode that may be redirected to https) so an
        // unreadable CA file fails at configuration time, not at probe time.
        if self.url.scheme == .https || self.followRedirects || caFile != nil {
            do throws(TLSContext.Failure) {
                _ = try TLSContext.shared(tlsOptions)
            } catch {
                throw fail(caFile == nil ? .httpTLS : .httpTLSCAFile, error.message)
            }
        }
    }

    /// Headers that carry credentials (lower-cased): sent only to the first URL's origin, never
    /// after a redirect to another scheme, host or port. Go's net/http and the Fetch standard
    /// strip these; so are the usual API-key and token headers (`X-API-Key`, `X-Auth-Token`,
    /// `PRIVATE-TOKEN`, …), see `isCredentialHeader`. `Proxy-Authorization` is reserved: it is
    /// the proxy's, never the origin's.
    package static let credentialHeaders: Set<String> = [
        "authorization", "www-authenticate", "cookie", "cookie2", "proxy-authorization",
    ]

    /// Whether a header (any case) may carry a credential: `credentialHeaders`, the config's
    /// secret keys (`Redaction`), or a name that speaks of auth, tokens, keys, secrets,
    /// passwords or sessions. Such headers stay with the first URL's origin.
    package static func isCredentialHeader(_ name: String) -> Bool {
        let lower = name.lowercased()
        if credentialHeaders.contains(lower) || Redaction.isSecret(path: lower) { return true }
        return ["auth", "token", "secret", "passw", "session", "api-key", "apikey", "api_key", "cookie"].contains {
            lower.contains($0)
        }
    }

    private static let reservedHeaders: Set<String> = [
        "host", "connection", "content-length", "transfer-encoding", "proxy-authorization",
    ]

    private static func validate(_ header: Header) -> String? {
        if header.name.isEmpty || !header.name.utf8.allSatisfy(isTokenByte) {
            return "\(header.name.debugDescription) is not a header name"
        }
        if reservedHeaders.contains(header.name.lowercased()) {
            return "\(header.name) is set by the prober"
                + (header.name.lowercased() == "host" ? " (use host_header)" : "")
        }
        if header.value.utf8.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) {
            return "the value of \(header.name) has control characters"
        }
        return nil
    }

    private static func isUnreserved(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2D || b == 0x2E
            || b == 0x5F || b == 0x7E
    }

    private static func isTokenByte(_ b: UInt8) -> Bool {
        isUnreserved(b) || "!#$%&'*+^`|".utf8.contains(b)
    }
}

extension HTTPProbeConfig {
    /// The same probe bound to `interface` (nil: the routing table's choice).
    package func bound(to interface: String?) throws(ProbeConfigError) -> HTTPProbeConfig {
        if let interface, let problem = InterfaceName.problem(interface) {
            throw ProbeConfigError(
                .interface, "\(interface.debugDescription) is not an interface name: \(problem)", heading: "interface")
        }
        var c = self
        c.interface = interface
        return c
    }
}

extension HTTPProbeConfig {
    /// The HTTP prober's own name of a setting, which heads its error messages (`url: …`).
    package static func heading(_ field: ProbeField) -> String {
        switch field {
        case .target: "url"
        case .httpTLS: "tls"
        case .httpTLSCAFile: "ca_file"
        case .httpTLSServerName: "server_name"
        default: String(field.key.split(separator: ".").last ?? "")
        }
    }
}
