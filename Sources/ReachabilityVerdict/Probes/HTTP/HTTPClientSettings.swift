/// How the HTTP client (`HTTPExchange`) connects and what it sends beside the request line,
/// whatever a probe then makes of the answer: the captive and web checks (`HTTPProbeConfig`)
/// and DNS over HTTPS (`DoHProbeConfig`) each give their own. Validated by the configuration
/// that holds it.
package struct HTTPClientSettings: Sendable, Equatable {
    /// The address family to connect over.
    package var family: FamilyPreference = .any
    /// Network interface to bind to (`SO_BINDTODEVICE`), for probing one uplink.
    package var interface: String?
    /// Trust: a CA file instead of the system's, or no verification at all.
    package var caFile: String?
    package var insecureSkipVerify = false
    /// Body bytes read at most; the rest is not read.
    package var bodyLimit = 65_536
    /// Extra request headers (an `Accept` here replaces the client's `*/*`).
    package var headers: [HTTPProbeConfig.Header] = []
    package var userAgent = HTTPProbeConfig.defaultUserAgent
    /// Direct, one proxy for every request, or the environment's choice per URL.
    package var proxy: HTTPProxySetting = .direct

    package var tlsOptions: TLSContext.Options {
        TLSContext.Options(caFile: caFile, insecureSkipVerify: insecureSkipVerify)
    }
}

extension HTTPProbeConfig {
    /// The client settings of this check.
    package var client: HTTPClientSettings {
        HTTPClientSettings(
            family: family, interface: interface, caFile: caFile, insecureSkipVerify: insecureSkipVerify,
            bodyLimit: bodyLimit, headers: headers, userAgent: userAgent, proxy: proxy)
    }
}
