/// What a DNS-over-HTTPS probe asks and whom (RFC 8484): one name and record type, sent as a
/// GET of the server's URL with `?dns=` and the query in base64url, `Accept:
/// application/dns-message`. Built only through the throwing initialiser, so a value that
/// exists is valid.
///
/// Evidence: over https with a verified certificate, an answer came from the holder of the
/// server's key, beyond anything on the path (as with verified HTTPS); each query carries a
/// random id, so each request's URL is new and no HTTP cache can answer it from a stored copy.
/// Over http://, or without verification, a gateway can answer for the server: local evidence.
package struct DoHProbeConfig: Sendable, Equatable {
    /// The name to resolve: a valid DNS name (no IP literal), without a trailing dot.
    package let name: String
    package let queryType: DNSQueryType
    /// The server's URL: `https://dns.example/dns-query`.
    package let url: ProbeURL
    /// The URL as written, for the probe's name (`NAME@URL`).
    package let urlText: String
    /// Accept private answers for public names (split-horizon DNS) instead of a portal.
    package let allowPrivateAnswers: Bool
    package let expectAnswer: DNSAnswerExpectation?
    /// TLS SNI and certificate name instead of the URL's host.
    package let serverName: String?
    /// How the HTTP client connects: family, interface, trust; the DNS media type as `Accept`.
    private(set) var client: HTTPClientSettings

    /// A DoH answer proves only over https with a verified certificate.
    package var evidence: Evidence { url.scheme == .https && !client.insecureSkipVerify ? .internet : .local }

    /// The longest URL: a label value is at most 1024 bytes, and the destination is `NAME@URL`.
    package static let maxURLBytes = 768

    /// The largest DNS message (RFC 8484 §6: the media type carries one, of at most 65,535 bytes).
    package static let maxAnswerBytes = 65_535

    // Long on purpose: each option checked in turn, with its own message.
    package init(
        name: String, queryType: DNSQueryType = .a, url: String, family: FamilyPreference = .any,
        interface: String? = nil, allowPrivateAnswers: Bool = false, expectAnswer: DNSAnswerExpectation? = nil,
        serverName: String? = nil, caFile: String? = nil, insecureSkipVerify: Bool = false
    ) throws(ProbeConfigError) {
        guard SocketAddress(ip: name) == nil else {
            throw ProbeConfigError(
                .target, "doh name \(name.debugDescription): is an IP address; a DNS probe needs a name")
        }
        do {
            _ = try DNSMessage.validatedLabels(name)
        } catch {
            throw ProbeConfigError(.target, "doh name \(name.debugDescription): \(error)")
        }
        // RFC 8484's URI template as servers publish it: its one variable is the query we add.
        let url = url.hasSuffix("{?dns}") ? String(url.dropLast(6)) : url
        guard !url.contains("{") && !url.contains("}") else {
            throw ProbeConfigError(
                .dohURL, "doh url \(url.debugDescription): a URI template other than {?dns} at its end is not expanded")
        }
        guard url.utf8.count <= Self.maxURLBytes else {
            throw ProbeConfigError(
                .dohURL,
                "doh url: \(url.utf8.count) bytes, at most \(Self.maxURLBytes) (the probe's destination label NAME@URL carries it)"
            )
        }
        guard !url.isEmpty else {
            throw ProbeConfigError(
                .dohURL, "doh url: missing: give the DoH server's URL, as https://dns.example/dns-query")
        }
        do throws(ProbeURL.ParseError) {
            self.url = try ProbeURL(url)
        } catch {
            throw ProbeConfigError(.dohURL, "doh url: \(error.description)")
        }
        do throws(ProbeConfigError) {
            try DNSProbeConfig.check(expectAnswer, type: queryType)
        } catch {
            let field: ProbeField = error.field == .dnsExpectAnswerRegex ? .dohExpectAnswerRegex : .dohExpectAnswer
            throw ProbeConfigError(field, "doh" + error.message.dropFirst(3))
        }
        if self.url.scheme == .http, serverName != nil || caFile != nil || insecureSkipVerify {
            throw ProbeConfigError(.dohTLS, "doh tls: applies to an https:// url only")
        }
        if caFile != nil && insecureSkipVerify {
            throw ProbeConfigError(
                .dohTLSCAFile, "doh tls ca_file: a CA file and insecure_skip_verify exclude each other")
        }
        if let serverName, SocketAddress(ip: serverName) == nil, !Resolver.isPlausibleHostName(serverName) {
            throw ProbeConfigError(
                .dohTLSServerName,
                "doh tls server_name \(serverName.debugDescription): is not a host name or IP address")
        }
        try ProbeConfigError.checkInterface(interface)
        self.name = name.hasSuffix(".") ? String(name.dropLast()) : name
        self.queryType = queryType
        self.urlText = url
        self.allowPrivateAnswers = allowPrivateAnswers
        if case .addresses(let set) = expectAnswer {
            self.expectAnswer = .addresses(Set(set.compactMap { SocketAddress(ip: $0)?.ip }))
        } else {
            self.expectAnswer = expectAnswer
        }
        self.serverName = serverName
        client = HTTPClientSettings(
            family: family, interface: interface, caFile: caFile, insecureSkipVerify: insecureSkipVerify,
            bodyLimit: Self.maxAnswerBytes, headers: [.init("Accept", DoHProber.mediaType)])
        if self.url.scheme == .https {
            do throws(TLSContext.Failure) {
                _ = try TLSContext.shared(client.tlsOptions)
            } catch {
                throw ProbeConfigError(.dohTLSCAFile, "doh tls ca_file: \(error.message)")
            }
        }
    }

    /// The same probe bound to `interface` (nil: the routing table's choice).
    package func bound(to interface: String?) throws(ProbeConfigError) -> DoHProbeConfig {
        try ProbeConfigError.checkInterface(interface)
        var c = self
        c.client.interface = interface
        return c
    }
}

/// Resolves one name per round over DNS over HTTPS (RFC 8484, GET, HTTP/1.1) with the HTTP
/// client the HTTP probes use, and judges the answer as a DNS probe does (`DNSAnswerJudge`).
/// Returns a value, never throws, by the deadline.
///
/// Failure reasons: those of the HTTP client (`dns` for the server's name, `refused`, `tls`,
/// `timeout`, …), `http_status` (not 200), `redirect` (3xx: not followed), `protocol` (another
/// media type, a malformed answer or one to another query), then the DNS probe's (`nxdomain`,
/// `servfail`, `refused`, `no_answer`, `answer_mismatch`); a 511 or a public name answered with a
/// private address is a portal. Phases: the HTTP probe's.
///
/// Not for: POST, HTTP/2-only servers, or the server's own name (resolved by the system resolver).
package struct DoHProber: Prober {
    package let config: DoHProbeConfig
    package var type: ProbeType { .doh }

    /// RFC 8484's media type of a DNS message.
    package static let mediaType = "application/dns-message"

    package init(config: DoHProbeConfig) {
        self.config = config
    }

    package func probe(deadline: ContinuousClock.Instant) async -> ProbeResult {
        var trace = HTTPRoundTrace()
        let what = "\(config.queryType.rawValue) \(config.name) @\(config.urlText)"
        let id = UInt16.random(in: .min ... .max)
        let query: [UInt8]
        do {
            query = try DNSMessage.encodeQuery(name: config.name, type: config.queryType, id: id)
        } catch {
            return trace.result(.failure, .error, "\(what): \(error)")  // the config validated the name
        }
        let url = config.url.appendingQueryItem(name: "dns", value: Self.base64url(query))
        let exchange = HTTPExchange(
            url: url, method: .get, hostHeader: url.authority, serverName: config.serverName ?? url.host,
            client: config.client)
        let response: HTTPExchange.Response
        do throws(ProbeFailure) {
            response = try await exchange.run(deadline: deadline, trace: &trace)
        } catch {
            return trace.result(error.status, error.reason, "\(what): \(error.message)")
        }
        let head = response.head
        trace.detail.statusCode = head.status
        trace.detail.bodyBytes = response.body.count
        if head.status == 511 {
            return trace.result(.portal, .networkAuthenticationRequired, HTTPProber.loginWanted(head))
        }
        guard head.status == 200 else {
            let reason: FailureReason = (300...399).contains(head.status) ? .redirect : .httpStatus
            return trace.result(.failure, reason, "\(what): \(head.statusLine)")
        }
        let media = head.mediaType
        guard media == Self.mediaType else {
            return trace.result(
                .failure, .protocolError,
                "\(what): answered \(media ?? "without a Content-Type"), not \(Self.mediaType)")
        }
        guard !response.bodyTruncated else {
            return trace.result(
                .failure, .protocolError,
                "\(what): the answer is longer than a DNS message (\(DoHProbeConfig.maxAnswerBytes) bytes)")
        }
        var match = DNSExchange(id: id, name: config.name, type: config.queryType)
        switch match.consider(response.body) {
        case .ignored:
            return trace.result(.failure, .protocolError, "\(what): the answer is not to this query (\(match.summary))")
        case .malformed(let error):
            return trace.result(.failure, .protocolError, "\(what): malformed answer: \(error)")
        case .answer(let answer):
            let judge = DNSAnswerJudge(
                name: config.name, queryType: config.queryType, allowPrivateAnswers: config.allowPrivateAnswers,
                expectAnswer: config.expectAnswer, nat64: NAT64Prefixes.round?.current ?? [])
            let judged = judge.conclude(answer, via: "@\(config.urlText)", elapsed: .zero)
            var r = trace.result(judged.status, judged.reason, judged.detail)
            r.dns = judged.dns
            r.dns?.transport = "https"
            return r
        }
    }

    /// base64url without padding (RFC 8484 §4.1, RFC 4648 §5).
    package static func base64url(_ bytes: [UInt8]) -> String {
        String(
            Base64.encode(bytes).compactMap { c -> Character? in c == "+" ? "-" : c == "/" ? "_" : c == "=" ? nil : c })
    }
}
