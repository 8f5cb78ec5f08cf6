import ReachabilityVerdict

/// One `/probe` request's probe: the target parsed and resolved as blackbox resolves it (its
/// `preferred_ip_protocol` and `ip_protocol_fallback`), checked against the allow-list, the
/// module's prober run by the deadline on the chosen address (an HTTP probe keeps the name for
/// `Host` and TLS), and the result turned into blackbox's metrics and log.
struct ProbeRun {
    let module: BlackboxModule
    let target: String
    /// The `hostname` parameter: an HTTP probe's `Host`, a TCP probe's TLS name.
    let hostname: String?
    let timeout: Duration
    let allowed: TargetAllowList
    /// Whether the probe's log is kept (only `debug=true` shows it; formatting it costs a tenth
    /// of a probe).
    var keepsLog = true

    enum Refusal { case refused(String) }

    struct Outcome {
        var metrics = MetricsRegistry()
        var log: [String] = []
        var refusal: Refusal?
    }

    /// What was resolved: the address to connect to, the name (nil for an IP literal).
    private struct Resolved {
        var address: SocketAddress
        var name: String?
    }

    func run() async -> Outcome {
        var out = Outcome()
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start + timeout
        let metrics = BlackboxMetrics(out.metrics)
        log(
            &out, .debug, "Beginning probe", ("probe", module.prober.rawValue),
            ("timeout_seconds", timeout.secondsValue))
        // A target that cannot be parsed or resolved is a failed round like any other: blackbox
        // writes its prober's metrics (zeros) then too.
        var result: ProbeResult?
        var resolvedAddress = false
        switch hostAndPort() {
        case .failure(let failure):
            log(&out, .error, failure.message)
            result = .failure(.error, failure.message, duration: start.duration(to: clock.now))
        case .success(let (host, port)):
            switch await resolve(host, deadline: deadline, metrics: metrics, out: &out) {
            case nil: result = .failure(.dns, "cannot resolve \(host)", duration: start.duration(to: clock.now))
            case let resolved?:
                guard allowed.allows(name: resolved.name, address: resolved.address) else {
                    out.refusal = .refused(
                        "Target \(target.debugDescription) (\(resolved.address.ip)) is not allowed by --modules.allow-target"
                    )
                    return out
                }
                result = await probe(resolved, port: port, deadline: deadline, out: &out)
                // A module that could not be built for the target (a missing ca_file) fails as
                // blackbox fails it before connecting: its http phases stop at `resolve`.
                resolvedAddress = result?.detail.hasPrefix(Self.cannotProbe) != true
            }
        }
        var success = result?.succeeded ?? false
        if let result {
            success = judge(result, success: success, out: &out)
            metrics.record(
                result, module: module, resolved: resolvedAddress, judged: overruled(result, success: success))
        }
        let elapsed = start.duration(to: clock.now).secondsValue
        metrics.common(success: success, duration: elapsed, timeout: timeout.secondsValue)
        if success {
            log(&out, .debug, "Probe succeeded", ("duration_seconds", elapsed))
        } else {
            log(&out, .error, "Probe failed", ("duration_seconds", elapsed))
        }
        return out
    }

    /// The host to resolve and the port, as blackbox reads each prober's target.
    private func hostAndPort() -> Result<(String, UInt16), Failure> {
        switch module.prober {
        case .http:
            guard let url = httpURL else { return .failure(Failure("Could not parse target URL")) }
            return .success((url.host, url.port))
        case .icmp:
            let host = target.hasPrefix("[") && target.hasSuffix("]") ? String(target.dropFirst().dropLast()) : target
            return .success((host, 0))
        case .tcp, .dns:
            let defaultPort: UInt16? =
                module.prober == .tcp ? nil : (dnsSettings?.transport == .tls ? 853 : 53)
            do throws(ProbeConfigError) {
                let hp = try HostPort(parsing: target, defaultPort: defaultPort)
                return .success((hp.host, hp.port))
            } catch {
                return .failure(Failure("Error splitting target address and port: \(error.message)"))
            }
        }
    }

    static let cannotProbe = "the module cannot probe this target: "

    struct Failure: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    /// blackbox prefixes a target without a scheme with `http://`. User information
    /// (`http://user:pass@host/`) is taken off: Go's client sends it as basic auth.
    private var httpURL: ProbeURL? {
        let text = target.hasPrefix("http://") || target.hasPrefix("https://") ? target : "http://" + target
        return try? ProbeURL(Self.splitUserinfo(text).url)
    }

    /// `scheme://user:pass@rest` as the URL without the user information, and the
    /// `Authorization` value Go's client would send for it (percent-decoded, `Basic`).
    static func splitUserinfo(_ url: String) -> (url: String, authorization: String?) {
        guard let schemeEnd = url.firstRange(of: "://") else { return (url, nil) }
        let rest = url[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        guard let at = rest[..<authorityEnd].lastIndex(of: "@") else { return (url, nil) }
        // Go's url.Parse refuses user information with other characters (`\`): so does the
        // probe (the URL, left whole, does not parse).
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._:~!$&'()*+,;=%@".utf8)
        guard rest[..<at].utf8.allSatisfy(allowed.contains) else { return (url, nil) }
        let parts = rest[..<at].split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let user: String = percentDecode(Substring(parts[0].replacing("+", with: "%2B")))
        let password: String = parts.count > 1 ? percentDecode(Substring(parts[1].replacing("+", with: "%2B"))) : ""
        let head = String(url[..<schemeEnd.upperBound])
        let tail = String(rest[rest.index(after: at)...])
        let credentials: [UInt8] = Array(user.utf8) + [UInt8(ascii: ":")] + Array(password.utf8)
        return (head + tail, "Basic " + Base64.encode(credentials))
    }

    private var dnsSettings: BlackboxDNS? {
        if case .dns(let d) = module.settings { return d }
        return nil
    }

    /// blackbox's `chooseProtocol`: the preferred family's first address, else (with the
    /// fallback) the other family's; without the fallback only the preferred family is asked.
    private func resolve(
        _ host: String, deadline: ContinuousClock.Instant, metrics: BlackboxMetrics, out: inout Outcome
    ) async -> Resolved? {
        let clock = ContinuousClock()
        let began = clock.now
        let preferred = module.ipProtocol.preferred
        let family: FamilyPreference = module.ipProtocol.fallback ? .any : (preferred == .ipv4 ? .ipv4 : .ipv6)
        log(
            &out, .debug, "Resolving target address", ("target", host),
            ("ip_protocol", preferred == .ipv4 ? "ip4" : "ip6"))
        let addresses: [SocketAddress]
        do throws(Resolver.Failure) {
            addresses = try await Resolver.resolve(host, family: family, deadline: deadline)
        } catch {
            metrics.lookup(seconds: began.duration(to: clock.now).secondsValue, address: nil)
            log(&out, .error, "Resolution with IP protocol failed", ("target", host), ("err", error.message))
            return nil
        }
        // The preferred family's first address, else the other family's last (blackbox's loop
        // keeps overwriting its fallback); an IPv4-mapped IPv6 address counts as IPv4.
        let family4 = { (a: SocketAddress) in
            BlackboxMetrics.unmapped(a.addressBytes).count == 4 ? IPFamily.ipv4 : .ipv6
        }
        guard let chosen = addresses.first(where: { family4($0) == preferred }) ?? addresses.last else {
            metrics.lookup(seconds: began.duration(to: clock.now).secondsValue, address: nil)
            log(
                &out, .error, "Resolution with IP protocol failed", ("target", host),
                ("err", "unable to find ip; no fallback"))
            return nil
        }
        metrics.lookup(seconds: began.duration(to: clock.now).secondsValue, address: chosen)
        log(&out, .debug, "Resolved target address", ("target", host), ("ip", chosen.ip))
        return Resolved(address: chosen, name: SocketAddress(ip: host) == nil ? host : nil)
    }

    /// Builds the module's prober for the resolved address and runs it by `deadline`.
    private func probe(
        _ resolved: Resolved, port: UInt16, deadline: ContinuousClock.Instant, out: inout Outcome
    ) async -> ProbeResult? {
        let ip = resolved.address.ip
        let bracketed = resolved.address.ipFamily == .ipv6 ? "[\(ip)]" : ip
        let prober: any Prober
        do throws(ProbeConfigError) {
            switch module.settings {
            case .http(var h):
                if let hostname { h.hostHeader = hostname }
                if !allowed.isEmpty && h.followRedirects {
                    h.followRedirects = false
                    log(&out, .info, "Redirects are not followed: --modules.allow-target is set")
                }
                // Go's client: the URL's user information is basic auth, unless a `headers:` entry
                // set Authorization; the module's basic_auth gives way to either.
                let text = target.hasPrefix("http://") || target.hasPrefix("https://") ? target : "http://" + target
                prober = HTTPProber(
                    try h.config(
                        url: httpURL!, address: resolved.address, interface: module.uplink,
                        userinfo: Self.splitUserinfo(text).authorization))
            case .tcp(let t):
                prober = TCPProber(
                    config: try t.config(
                        target: HostPort(host: ip, port: port), name: hostname ?? resolved.name ?? ip,
                        interface: module.uplink))
            case .icmp(var i):
                // An IPv4-mapped address is echoed as IPv4 (Go's net reads it as one).
                let bytes = BlackboxMetrics.unmapped(resolved.address.addressBytes)
                let v4 = bytes.count == 4 ? bytes.map(String.init).joined(separator: ".") : nil
                // blackbox sets don't-fragment on IPv4 only.
                if v4 == nil { i.dontFragment = false }
                prober = ICMPProber(try i.config(host: v4 ?? ip, interface: module.uplink))
            case .dns(let d):
                prober = DNSProber(config: try d.config(server: "\(bracketed):\(port)", interface: module.uplink))
            }
        } catch {
            // A failed round like any other: blackbox writes the prober's metrics (zeros).
            log(&out, .error, "The module cannot probe this target", ("err", error.description))
            return .failure(.error, Self.cannotProbe + error.description, duration: .zero)
        }
        let result = await prober.probe(deadline: deadline)
        log(
            &out, result.succeeded ? .debug : .error, "Probe result", ("status", result.status.rawValue),
            ("reason", result.reason?.rawValue ?? ""), ("detail", result.detail))
        return result
    }

    /// The status and reason `reachability_probe_result_info` says when blackbox's checks overrule
    /// the prober (nil when they agree): a success of a valid rcode other than NOERROR, or a
    /// failure of `fail_if_ssl`, `fail_if_not_ssl`, an rcode or an answer validator. A portal
    /// stays a portal either way: that the answer proves nothing is what only this exporter says.
    private func overruled(_ result: ProbeResult, success: Bool) -> (status: ProbeStatus, reason: FailureReason?)? {
        guard success != result.succeeded, result.status != .portal else { return nil }
        if success { return (.success, nil) }
        switch module.settings {
        case .http: return (.failure, .tls)
        case .dns(let d):
            guard let rcode = result.dns?.rcode, d.validRcodes.contains(rcode) else {
                switch result.dns?.rcode {
                case 3: return (.failure, .nxdomain)
                case 2: return (.failure, .servfail)
                default: return (.failure, .dns)
                }
            }
            return (.failure, .answerMismatch)
        case .tcp, .icmp: return nil
        }
    }

    /// What blackbox decides beyond the prober's own verdict: `fail_if_ssl`, `fail_if_not_ssl`,
    /// and a DNS answer judged by its rcode alone.
    private func judge(_ result: ProbeResult, success: Bool, out: inout Outcome) -> Bool {
        switch module.settings {
        case .http(let h):
            let tls = result.http?.tlsVersion != nil
            if success && h.failIfSSL && tls {
                log(&out, .error, "Final request was over SSL")
                return false
            }
            if success && h.failIfNotSSL && !tls {
                log(&out, .error, "Final request was not over SSL")
                return false
            }
            return success
        case .dns(let d):
            guard let rcode = result.dns?.rcode else { return false }
            guard d.validRcodes.contains(rcode) else {
                log(&out, .error, "Rcode is not one of the valid rcodes", ("rcode", rcode))
                return false
            }
            if let problem = d.answerChecks.problem(result.dns?.answerTexts ?? []) {
                log(&out, .error, problem)
                return false
            }
            return true
        case .tcp, .icmp:
            return success
        }
    }

    private func log(
        _ out: inout Outcome, _ level: LogLevel, _ message: String, _ fields: (String, any LogValueConvertible)...
    ) {
        guard keepsLog else { return }
        let record = Logger.Record(
            time: Logger.timestamp(), level: level, source: "ProbeRun.swift", message: message,
            fields: [("module", .string(module.name)), ("target", .string(target))]
                + fields.map { ($0.0, $0.1.logValue) })
        out.log.append(record.line(.logfmt))
    }
}

extension Duration {
    /// Seconds as a real number.
    var secondsValue: Double {
        let (s, attos) = components
        return Double(s) + Double(attos) / 1e18
    }
}
