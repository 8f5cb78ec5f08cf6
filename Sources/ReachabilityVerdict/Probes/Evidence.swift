/// What a probe's success can show about the internet: the evidence model of the verdict.
///
/// A round is `full` only on evidence that something beyond the local network answered. An
/// answer that can come from the local network proves nothing about the internet:
/// - the system resolver (a router's caching forwarder keeps answering from its cache when the
///   router's uplink is down, and by itself when the router drops all forwarded traffic);
/// - any plain DNS query, even to a public server: gateways intercept port 53 and answer for it;
/// - a target that is not beyond the gateway: loopback, link-local, an address on one of the
///   host's own networks, or a default route's gateway (`PathGate.isLocal(address:)`);
/// - a TCP connect to a port that intercepting gateways redirect (53, 80, 443): the
///   interceptor completes the handshake itself;
/// - a plain-HTTP web check, or an HTTPS one without certificate verification: a portal's own
///   page answers 200 as well.
///
/// Such results still take part in the verdict: they can degrade it (`limited (dns)`, `portal`)
/// and count toward a quorum, but they never by themselves make it `full`.
///
/// What can prove: a captive-style HTTP(S) check that gets its exact expected answer (a portal
/// answers with a redirect, a 511 or its own page instead; so over plain HTTP only a body
/// check or a status set without 200 and 3xx proves), an HTTPS check whose certificate
/// verifies, an ICMP echo reply, or a TCP connection to another port, from beyond the gateway.
package enum Evidence: String, Sendable, Codable, CaseIterable {
    /// The answer came from beyond the gateway: it can make a round `full`.
    case internet
    /// The answer may have come from the local network: it can degrade a round, never make it `full`.
    case local

    /// The best evidence a success of `type` can give when nothing else is known: its kind's
    /// (`ProbeKind.typicalEvidence`; DNS answers are local, the other kinds can reach the internet).
    package static func typical(of type: ProbeType) -> Evidence { type.kind.typicalEvidence }
}

extension TCPProbeConfig {
    /// Ports that intercepting gateways and captive portals redirect to themselves (DNS, HTTP,
    /// HTTPS): a connection there may be completed by the gateway.
    package static let interceptablePorts: Set<UInt16> = [53, 80, 443]

    /// A TCP connect proves the internet unless its port is one gateways intercept.
    package var evidence: Evidence { Self.interceptablePorts.contains(target.port) ? .local : .internet }
}

extension HTTPProbeConfig {
    /// A web check proves only over HTTPS with a verified certificate (over plain HTTP, or
    /// without verification, a portal's page also answers 200–399). A captive check proves by
    /// its exact expected answer: over verified HTTPS any expected answer; otherwise only an
    /// answer a portal does not give — a body check, or a status set without 200 and without
    /// redirects (`204`): a set such as `200-399` or `2xx` is met by a portal's own page or its
    /// redirect, so it can degrade the verdict but never prove the internet.
    ///
    /// Through a proxy, TLS still runs end to end (CONNECT), so verified HTTPS proves as
    /// before; a plain-HTTP answer may come from the proxy's cache, so it is local evidence.
    package var evidence: Evidence {
        let verified = url.scheme == .https && !insecureSkipVerify
        if !verified, proxy.mayProxy { return .local }
        switch mode {
        case .captive(let expectation):
            return verified || expectation.isUnlikeAPortalAnswer ? .internet : .local
        case .web:
            return verified ? .internet : .local
        }
    }
}

extension HTTPExpectation {
    /// Whether no captive portal answers this way by itself: a body check, or only status codes
    /// other than 200 and 3xx (portals answer with their page, 200, or a redirect).
    package var isUnlikeAPortalAnswer: Bool {
        if body != nil { return true }
        return !statusCodes.isEmpty && !statusCodes.contains { $0 == 200 || (300...399).contains($0) }
    }
}
