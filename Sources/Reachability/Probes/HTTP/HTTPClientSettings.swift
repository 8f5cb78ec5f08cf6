/// How the HTTP client (`HTTPExchange`) connects and what it sends beside the request line,
/// whatever a probe then makes of the answer: the captive and web checks (`HTTPProbeConfig`)
/// and DNS over HTTPS (`DoHProbeConfig`) each give their own. Validated by the configuration
/// that holds it.
struct HTTPClientSettings: Sendable, Equatable {
    /// The address family to connect over.
    var family: FamilyPreference = .any
    /// Network interface to bind to (`SO_BINDTODEVICE`), for probing one uplink.
    var interface: String?
    /// Trust: a CA file instead of the system's, or no verification at all.
    var caFile: String?
    var insecureSkipVerify = false
    /// Body bytes read at most; the rest is not read.
    var bodyLimit = 65_536
    /// Extra request headers (an `Accept` here replaces the client's `*/*`).
    var headers: [HTTPProbeConfig.Header] = []
    var userAgent = HTTPProbeConfig.defaultUserAgent
    /// Direct, one proxy for every request, or the environment's choice per URL.
    var proxy: HTTPProxySetting = .direct

    var tlsOptions: TLSContext.Options { TLSContext.Options(caFile: caFile, insecureSkipVerify: insecureSkipVerify) }
}

extension HTTPProbeConfig {
    /// The client settings of this check.
    var client: HTTPClientSettings {
        HTTPClientSettings(
            family: family, interface: interface, caFile: caFile, insecureSkipVerify: insecureSkipVerify,
            bodyLimit: bodyLimit, headers: headers, userAgent: userAgent, proxy: proxy)
    }
}
