import ReachabilityVerdict

/// A `/probe` answer's metrics under blackbox_exporter's names, help texts and labels, in a
/// registry of the request's own (as blackbox makes one per probe). Only what the prober
/// measured is written: a value this exporter does not know (the authority records of a DNS
/// answer, an intermediate certificate's expiry) is left out, not written as 0.
/// docs/probe-endpoint.md lists each metric and where it differs from blackbox's.
final class BlackboxMetrics {
    let registry: MetricsRegistry

    init(_ registry: MetricsRegistry) { self.registry = registry }

    private func gauge(_ name: String, _ help: String, _ value: Double) {
        registry.gauge(name, help: help).labels([]).set(value)
    }

    private func gauge(_ name: String, _ help: String, label: String, _ values: [(String, Double)]) {
        let family = registry.gauge(name, help: help, labels: [label])
        for (v, x) in values { family.labels(v).set(x) }
    }

    func common(success: Bool, duration: Double, timeout: Double) {
        gauge("probe_success", "Displays whether or not the probe was a success", success ? 1 : 0)
        gauge("probe_duration_seconds", "Returns how long the probe took to complete in seconds", duration)
        gauge("probe_timeout_seconds", "Returns how long the probe timeout is in seconds", timeout)
    }

    /// blackbox's `chooseProtocol` metrics: the lookup's time, the family and a hash of the address.
    func lookup(seconds: Double, address: SocketAddress?) {
        gauge("probe_dns_lookup_time_seconds", "Returns the time taken for probe dns lookup in seconds", seconds)
        gauge(
            "probe_ip_protocol", "Specifies whether probe ip protocol is IP4 or IP6",
            address.map { Self.unmapped($0.addressBytes).count == 4 ? 4 : 6 } ?? 0)
        gauge(
            "probe_ip_addr_hash", "Specifies the hash of IP address. It's useful to detect if the IP address changes.",
            address.map { Double(Self.fnv32a(Self.unmapped($0.addressBytes))) } ?? 0)
        lookupSeconds = seconds
        lookedUp = true
    }

    /// Whether the target's name was looked up (an unparsable target never is).
    private var lookedUp = false

    /// The resolve phase of the probers' duration metrics is the lookup's time.
    private var lookupSeconds = 0.0

    /// `resolved`: the target had an address (blackbox writes an http probe's phases after
    /// `resolve` only then).
    /// `judged`: the status and reason after blackbox's own checks (`fail_if_ssl`, rcodes, answer
    /// validation), when they overrule the prober's.
    func record(
        _ result: ProbeResult, module: BlackboxModule, resolved: Bool,
        judged: (status: ProbeStatus, reason: FailureReason?)? = nil
    ) {
        let phase = { (p: ProbePhase) in result.phases[p]?.secondsValue ?? 0 }
        switch module.prober {
        case .http:
            let h = result.http
            // blackbox: no phase at all for a target it cannot parse, only `resolve` for one it
            // cannot resolve.
            if lookedUp {
                gauge(
                    "probe_http_duration_seconds", "Duration of http request by phase, summed over all redirects",
                    label: "phase",
                    [("resolve", lookupSeconds + phase(.resolve))]
                        + (resolved
                            ? [
                                ("connect", phase(.connect)), ("tls", phase(.tls)), ("processing", phase(.processing)),
                                ("transfer", phase(.transfer)),
                            ] : []))
            }
            // -1: a response of unknown length; 0: no response (Go's ContentLength).
            // Go sets 0 for an answer that cannot have a body (1xx, 204, 304).
            let bodiless = h?.statusCode.map { (100...199).contains($0) || $0 == 204 || $0 == 304 } ?? false
            gauge(
                "probe_http_content_length", "Length of http content response",
                h?.statusCode == nil || bodiless ? 0 : Double(h?.contentLength ?? -1))
            gauge(
                "probe_http_uncompressed_body_length", "Length of uncompressed response body", Double(h?.bodyBytes ?? 0)
            )
            gauge("probe_http_redirects", "The number of redirects", Double(h?.redirects ?? 0))
            gauge("probe_http_ssl", "Indicates if SSL was used for the final redirect", h?.tlsVersion == nil ? 0 : 1)
            gauge("probe_http_status_code", "Response HTTP status code", Double(h?.statusCode ?? 0))
            gauge(
                "probe_http_version", "Returns the version of HTTP of the probe response",
                h?.version.flatMap { Double($0.dropFirst("HTTP/".count)) } ?? 0)
            // A body past the limit fails the body checks too (blackbox cannot read it whole).
            let bodyChecked: Bool = {
                if case .http(let settings) = module.settings { return settings.checks.readsBody }
                return false
            }()
            let regexFailed = result.reason == .bodyMismatch || (result.reason == .tooLarge && bodyChecked)
            gauge("probe_failed_due_to_regex", "Indicates if probe failed due to regex", regexFailed ? 1 : 0)
            tlsSet(h, cipher: true)
        case .icmp:
            gauge(
                "probe_icmp_duration_seconds", "Duration of icmp request by phase", label: "phase",
                [("resolve", lookupSeconds), ("setup", 0), ("rtt", result.icmp?.rtts.first?.secondsValue ?? 0)])
            if let ttl = result.icmp?.ttl, result.icmp?.received ?? 0 > 0 {
                gauge("probe_icmp_reply_hop_limit", "Replied packet hop limit (TTL for ipv4)", Double(ttl))
            }
        case .dns:
            gauge(
                "probe_dns_duration_seconds", "Duration of DNS request by phase", label: "phase",
                [("resolve", lookupSeconds), ("connect", phase(.connect)), ("request", phase(.query))])
            // Written from the start in blackbox: 0 until an answer comes.
            let d = result.dns
            gauge(
                "probe_dns_answer_rrs", "Returns number of entries in the answer resource record list",
                Double(d?.answers ?? 0))
            gauge(
                "probe_dns_authority_rrs", "Returns number of entries in the authority resource record list",
                Double(d?.authorityCount ?? 0))
            gauge(
                "probe_dns_additional_rrs", "Returns number of entries in the additional resource record list",
                Double(d?.additionalCount ?? 0))
            gauge(
                "probe_dns_query_succeeded", "Displays whether or not the query was executed successfully",
                result.dns?.rcode == nil ? 0 : 1)
        case .tcp:
            // Registered once the connection is made (blackbox): 1 when an expect met the end of the stream.
            if result.phases[.connect] != nil, result.reason != .refused, result.reason != .unreachable {
                gauge(
                    "probe_failed_due_to_regex", "Indicates if probe failed due to regex",
                    result.reason == .bannerMismatch ? 1 : 0)
            }
            tlsSet(result.http, cipher: false)
        }
        // What only this exporter says: why a probe failed or proves nothing, in its own words.
        registry.gauge(
            "reachability_probe_result_info",
            help:
                "1 for the probe's status (success, portal, failure) and reason (intercepted, forged_reply, timeout…; empty on success), as reachability_exporter judges it.",
            labels: ["status", "reason"]
        ).labels((judged?.status ?? result.status).rawValue, (judged.map(\.reason) ?? result.reason)?.rawValue ?? "")
            .set(1)
    }

    /// blackbox's TLS metrics, when the connection was TLS (the cipher: http only, as blackbox).
    private func tlsSet(_ h: HTTPDetail?, cipher: Bool) {
        guard let v = h?.tlsVersion else { return }
        gauge(
            "probe_tls_version_info", "Returns the TLS version used or NaN when unknown", label: "version",
            [(Self.tlsVersion(v), 1)])
        if cipher, let c = h?.tlsCipher {
            gauge(
                "probe_tls_cipher_info", "Returns the TLS cipher negotiated during handshake", label: "cipher", [(c, 1)]
            )
        }
        if let notAfter = h?.certificateNotAfter {
            gauge("probe_ssl_earliest_cert_expiry", "Returns last SSL chain expiry in unixtime", notAfter)
        }
    }

    /// `TLSv1.3` (OpenSSL) as Go writes it: `TLS 1.3`.
    static func tlsVersion(_ openssl: String) -> String {
        openssl.hasPrefix("TLSv") ? "TLS " + openssl.dropFirst(4) : openssl
    }

    /// An IPv4-mapped IPv6 address as its IPv4 bytes (Go's `To4`).
    static func unmapped(_ b: [UInt8]) -> [UInt8] {
        b.count == 16 && b[0..<10].allSatisfy { $0 == 0 } && b[10] == 0xFF && b[11] == 0xFF ? Array(b[12...]) : b
    }

    /// 32-bit FNV-1a, blackbox's `ipHash`.
    static func fnv32a(_ bytes: [UInt8]) -> UInt32 {
        var h: UInt32 = 2_166_136_261
        for b in bytes {
            h ^= UInt32(b)
            h = h &* 16_777_619
        }
        return h
    }
}
