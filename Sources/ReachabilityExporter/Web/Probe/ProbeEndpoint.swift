import ReachabilityVerdict
import Synchronization

/// `/probe?target=…&module=…`: blackbox_exporter's multi-target endpoint, so Prometheus's
/// relabelling for blackbox works unchanged. Parameters, defaults, status codes and the timeout
/// are blackbox's: `module` defaults to `http_2xx`; no `target` is `400 Target parameter is
/// missing`, an unknown module `400 Unknown module "x"`; the probe gets the scrape's
/// `X-Prometheus-Scrape-Timeout-Seconds` (120 s without it) less `--modules.timeout-offset`,
/// or the module's `timeout` when that is shorter; a failed probe is `probe_success 0` in a
/// `200`. `debug=true` answers the probe's log, the metrics and the module as text.
///
/// Beyond blackbox: at most `--modules.max-concurrent` probes at once per client (an address;
/// an IPv6 client by its /64) and eight times that in all (`503` beyond), so one client cannot
/// take every place from the scraper; and `--modules.allow-target` entries a target must match
/// (`403` otherwise).
package final class ProbeEndpoint: Sendable {
    package struct Options: Sendable {
        package var timeoutOffset: Duration = .milliseconds(500)
        /// Per client; all clients together get `maxTotal`.
        package var maxConcurrent = 32
        package var maxTotal: Int { maxConcurrent * 8 }
        package var allowed = TargetAllowList()
        package init() {}
    }

    let options: Options
    private let file: Mutex<BlackboxModuleFile>
    /// Probes running, per client key and in all.
    private let places = Mutex<(byClient: [String: Int], total: Int)>(([:], 0))

    package init(_ file: BlackboxModuleFile, options: Options = Options()) {
        self.file = Mutex(file)
        self.options = options
    }

    /// Takes a reloaded module file; probes already running finish with the modules they had.
    package func replace(_ file: BlackboxModuleFile) { self.file.withLock { $0 = file } }

    package var modules: BlackboxModuleFile { file.withLock { $0 } }

    /// The route: `/probe` (after the route prefix), else nil.
    package func route(_ request: HTTPRequest) async -> HTTPResponse? {
        guard request.path == "/probe" else { return nil }
        guard request.method == "GET" || request.method == "HEAD" else {
            return WebRoutes.methodNotAllowed("GET, HEAD")
        }
        let query = GoParsing.query(request.target)
        let moduleName = query["module"].flatMap { $0.isEmpty ? nil : $0 } ?? "http_2xx"
        let file = modules
        if let error = file.refused[moduleName] {
            return Self.refusal(400, "Module \(Self.quoted(moduleName)) was refused at load: \(error.description)")
        }
        guard let module = file.modules[moduleName] else {
            return Self.refusal(400, "Unknown module \(Self.quoted(moduleName))")
        }
        let timeout: Duration
        switch Self.timeout(
            header: request.header("x-prometheus-scrape-timeout-seconds"), module: module, offset: options.timeoutOffset
        ) {
        case .success(let t): timeout = t
        case .failure(let error):
            return Self.refusal(500, "Failed to parse timeout from Prometheus header: \(error.message)")
        }
        guard var target = query["target"], !target.isEmpty else {
            return Self.refusal(400, "Target parameter is missing")
        }
        // blackbox unescapes the value once more (a target relabelled already escaped).
        target = percentDecode(Substring(target))
        guard target.utf8.count <= 2048,
            !target.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
        else {
            return Self.refusal(400, "Target parameter is not a target (control characters, or over 2048 bytes)")
        }
        let hostname = query["hostname"].flatMap { $0.isEmpty ? nil : $0 }
        if let hostname, case .http(let h) = module.settings, let configured = h.hostHeader, configured != hostname {
            return Self.refusal(
                400,
                "host header defined both in module configuration (\(configured)) and with URL-parameter 'hostname' (\(hostname))"
            )
        }
        let client = Self.clientKey(request.client)
        if let full = take(client) { return Self.refusal(503, full) }
        defer { give(client) }
        var run = ProbeRun(
            module: module, target: target, hostname: hostname, timeout: timeout, allowed: options.allowed)
        let debug = query["debug"] == "true"
        run.keepsLog = debug
        let outcome = await run.run()
        if case .refused(let message) = outcome.refusal {
            return Self.refusal(403, message)
        }
        if debug {
            // Credentials never show: the module's secret values, and user information in URLs
            // (the target's too), as blackbox shows its `Secret`s.
            let text =
                "Logs for the probe:\n" + Redaction.userinfo(in: outcome.log.joined())
                + "\n\n\nMetrics that would have been returned:\n"
                + Redaction.userinfo(in: outcome.metrics.renderString())
                + "\n\n\nModule configuration:\n" + Redaction.yamlSecrets(in: module.text) + "\n"
            return HTTPResponse(status: 200, contentType: "text/plain", body: Array(text.utf8))
        }
        let format = ExpositionFormat.negotiate(accept: request.header("accept"))
        return HTTPResponse(status: 200, contentType: format.contentType, body: outcome.metrics.renderNow(format))
    }

    /// A place for one more probe of `client`, or why there is none.
    private func take(_ client: String) -> String? {
        places.withLock { p in
            let held = p.byClient[client, default: 0]
            if held >= options.maxConcurrent {
                return "Too many probes in flight for this client (--modules.max-concurrent=\(options.maxConcurrent))"
            }
            if p.total >= options.maxTotal {
                return "Too many probes in flight (\(options.maxTotal) for all clients, 8 x --modules.max-concurrent)"
            }
            p.byClient[client] = held + 1
            p.total += 1
            return nil
        }
    }

    private func give(_ client: String) {
        places.withLock { p in
            let held = p.byClient[client, default: 1] - 1
            p.byClient[client] = held > 0 ? held : nil
            p.total -= 1
        }
    }

    /// Whose places a request takes: the client's address, an IPv6 client by its /64 (one host
    /// holds a /64 and may use any of it), an IPv4-mapped one as IPv4.
    static func clientKey(_ address: String) -> String {
        guard let a = SocketAddress(ip: address) else { return address }
        let bytes = BlackboxMetrics.unmapped(a.addressBytes)
        guard bytes.count == 16 else { return bytes.map(String.init).joined(separator: ".") }
        return bytes.prefix(8).map { String($0, radix: 16) }.joined(separator: ":") + "::/64"
    }

    /// blackbox's `getTimeout`: the scrape timeout (120 s without the header) less the offset, or
    /// the module's timeout when it is shorter (or the difference is below zero).
    static func timeout(header: String?, module: BlackboxModule, offset: Duration) -> Result<Duration, TimeoutError> {
        var seconds = 0.0
        if let header, !header.isEmpty {
            guard let v = GoParsing.parseFloat(header) else {
                return .failure(
                    TimeoutError(message: "strconv.ParseFloat: parsing \(Self.quoted(header)): invalid syntax"))
            }
            seconds = v
        }
        if seconds == 0 { seconds = 120 }
        let maxSeconds = seconds - offset.secondsValue
        let moduleSeconds = module.timeout?.secondsValue ?? 0
        let chosen = (moduleSeconds < maxSeconds && moduleSeconds > 0) || maxSeconds < 0 ? moduleSeconds : maxSeconds
        // A zero timeout (no module timeout, a scrape timeout below the offset) would end every
        // probe at once: blackbox's context then expires at once too.
        // NaN, or more seconds than Go's Duration holds (`Inf`), ends the probe at once, as Go's
        // overflowing conversion to a Duration does.
        let overflows = chosen.isNaN || chosen * 1e9 >= 0x1p63
        return .success(.nanoseconds(Int64((overflows ? 0 : max(0, min(chosen, 3600))) * 1e9)))
    }

    struct TimeoutError: Error { let message: String }

    /// Go's `%q`: `"a\x01b"`, `"\n"`, C1 and line separators as `\u0085`, other text as is.
    static func quoted(_ s: String) -> String {
        Logger.quoted(s) { c in
            let hex = String(c.value, radix: 16)
            return c.value < 0x20 || c.value == 0x7F ? "\\x" + hex.leftPadded(2) : "\\u" + hex.leftPadded(4)
        }
    }

    /// An error answer as Go's `http.Error` writes it (with `X-Content-Type-Options: nosniff`).
    static func refusal(_ status: Int, _ text: String) -> HTTPResponse {
        HTTPResponse(status: status, text: text + "\n", headers: [("X-Content-Type-Options", "nosniff")])
    }
}
