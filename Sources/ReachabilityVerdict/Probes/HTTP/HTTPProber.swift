import Synchronization

/// Probes an http or https URL with our own HTTP/1.1 client and judges the answer as a captive
/// portal check (redirects are portal signals) or a web check (200–399, redirects followed).
/// Returns a value, never throws, and returns by the deadline, which covers resolve, connect,
/// TLS, processing (to the first response byte) and transfer of every hop.
///
/// Not for: keep-alive, HTTP/2, request bodies, or metrics (the recorder turns results into metrics).
package struct HTTPProber: Prober {
    package let config: HTTPProbeConfig
    package var type: ProbeType { config.probeType }

    package init(_ config: HTTPProbeConfig) {
        self.config = config
    }

    package func probe(deadline: ContinuousClock.Instant) async -> ProbeResult {
        var trace = HTTPRoundTrace()
        var url = config.url
        if let bust = config.cacheBust {
            url = url.appendingQueryItem(name: bust.parameter, value: Self.cacheBustValue(bust.value))
        }
        // Credentials stay with their origin: once a redirect leaves it (another scheme, an
        // https-to-http downgrade included, host or port), they are not sent again this round,
        // even if a later hop comes back (as Go since CVE-2024-45336).
        var sendsCredentials = true
        var method = config.method
        var body = config.requestBody
        while true {
            let sameHost = url.host == config.url.host
            sendsCredentials = sendsCredentials && url.isSameOrigin(as: config.url)
            var exchange = HTTPExchange(
                url: url, method: method,
                hostHeader: sameHost ? (config.hostHeader ?? url.authority) : url.authority,
                serverName: sameHost ? (config.serverName ?? url.host) : url.host,
                client: config.client, sendsCredentials: sendsCredentials)
            exchange.body = body
            let response: HTTPExchange.Response
            do throws(ProbeFailure) {
                response = try await exchange.run(deadline: deadline, trace: &trace)
            } catch {
                // blackbox (Go's client) has no response when a request after a redirect fails.
                if config.checks != nil && trace.detail.redirects > 0 {
                    trace.detail.statusCode = nil
                    trace.detail.version = nil
                    trace.detail.contentLength = nil
                    trace.detail.bodyBytes = 0
                }
                return trace.result(error.status, error.reason, error.message)
            }
            let status = response.head.status
            trace.detail.statusCode = status
            trace.detail.bodyBytes = response.body.count
            trace.detail.version = response.head.version
            trace.detail.contentLength = response.head.value(of: "Content-Length").flatMap { Int($0) }
            let location = response.head.value(of: "Location")
            if (300...399).contains(status), let location { trace.detail.location = location }
            switch config.mode {
            case .captive(let expectation):
                if expectation.privateAnswerIsPortal, !config.proxy.mayProxy,
                    let why = Self.privateAnswer(url, trace.address?.ip)
                {
                    return trace.result(.portal, .privateAddress, why)
                }
                if expectation.redirectsStayOnHost, (300...399).contains(status),
                    let away = Self.leavesHost(url, location)
                {
                    return trace.result(.portal, .redirect, "\(response.head.statusLine) to \(away)")
                }
                let (verdict, reason, text) = Self.judge(response, against: expectation)
                return trace.result(verdict, reason, text)
            case .web:
                // A module's checks judge 511 as any status (blackbox's rule).
                if status == 511 && config.checks == nil {
                    return trace.result(.portal, .networkAuthenticationRequired, Self.loginWanted(response.head))
                }
                let redirect = (300...399).contains(status) ? location : nil
                let follows = config.followRedirects && redirect != nil
                if let checks = config.checks, !follows || trace.detail.redirects >= config.maxRedirects {
                    // blackbox counts a redirect it does not follow and reads no body after it.
                    if redirect != nil {
                        trace.detail.redirects += 1
                        trace.detail.bodyBytes = 0
                    }
                    let (verdict, reason, text) = checks.judge(response)
                    return trace.result(verdict, reason, text)
                }
                guard follows, let location = redirect else {
                    let ok = (200...399).contains(status)
                    return trace.result(ok ? .success : .failure, .httpStatus, response.head.statusLine)
                }
                if trace.detail.redirects >= config.maxRedirects {
                    return trace.result(
                        .failure, .redirect, "more than \(config.maxRedirects) redirects (last to \(location))")
                }
                do throws(ProbeURL.ParseError) {
                    url = try url.resolving(location)
                } catch {
                    return trace.result(.failure, .redirect, "cannot follow \(response.head.statusLine): \(error)")
                }
                trace.detail.redirects += 1
                // 301, 302 and 303 turn a request with a body into a GET without it (307 and 308 keep both).
                if [301, 302, 303].contains(status) && !method.isSafe {
                    method = .get
                    body = []
                }
            }
        }
    }

    /// Captive-portal judgement of a final response (see `HTTPProbeConfig.Mode.captive`).
    package static func judge(_ response: HTTPExchange.Response, against expectation: HTTPExpectation) -> (
        ProbeStatus, FailureReason?, String
    ) {
        let head = response.head
        let status = head.status
        if expectation.admits(status: status) {
            guard let match = expectation.body else { return (.success, nil, head.statusLine) }
            let text = String(decoding: response.body, as: UTF8.self)
            let read = "\(response.body.count) bytes\(response.bodyTruncated ? " (truncated)" : "")"
            if match.matches(text) { return (.success, nil, "\(head.statusLine), body matched in \(read)") }
            return (
                .portal, .bodyMismatch,
                "\(head.statusLine), body does not match: \(read) \(HTTPResponseParser.printable(response.body.prefix(48)))"
            )
        }
        if status == 511 { return (.portal, .networkAuthenticationRequired, loginWanted(head)) }
        if (300...399).contains(status) {
            return (.portal, .redirect, "\(head.statusLine) to \(head.value(of: "Location") ?? "(no Location)")")
        }
        if (200...299).contains(status) {
            let wanted = HTTPStatusSet.format(expectation.statusCodes)
            return (.portal, .httpStatus, "\(head.statusLine), expected \(wanted)")
        }
        return (.failure, .httpStatus, head.statusLine)
    }

    /// Why an answer for `url` from `address` is a portal signal: a public name answered from a
    /// private address (`DNSPortalRule`, the DNS probe's rule); nil for an IP literal, a local
    /// name, or a public address.
    package static func privateAnswer(_ url: ProbeURL, _ address: String?) -> String? {
        guard let address, !url.isIPLiteral,
            !DNSPortalRule.offendingAddresses([address], name: url.host, allowPrivateAnswers: false).isEmpty
        else { return nil }
        return "public name \(url.host) answered from private address \(address)"
    }

    /// Where a redirect from `url` leads when that is not `url`'s host: the `Location` (or
    /// "(no Location)", or the unreadable reference); nil when it stays on the host.
    package static func leavesHost(_ url: ProbeURL, _ location: String?) -> String? {
        guard let location else { return "(no Location)" }
        guard let next = try? url.resolving(location) else { return location }
        return next.host.lowercased() == url.host.lowercased() ? nil : location
    }

    package static func loginWanted(_ head: HTTPResponseHead) -> String {
        "\(head.statusLine): the network asks for a login (RFC 6585)"
    }

    // MARK: - Cache busting

    private static let monotonicSeed = WallClock.nanosecondsSinceEpoch()
    private static let monotonicCounter = Atomic<UInt64>(0)

    package static func cacheBustValue(_ kind: HTTPProbeConfig.CacheBust.Value) -> String {
        switch kind {
        case .random:
            let hex = String(UInt64.random(in: .min ... .max), radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        case .monotonic:
            return String(monotonicSeed &+ monotonicCounter.add(1, ordering: .relaxed).newValue)
        }
    }
}
