import ReachabilityVerdict

/// What an unauthenticated client on the network gets from the endpoints, decided at start: the
/// status page, `/debug/probe` and `/metrics` show probe targets, interface names, uplinks and
/// gateway addresses. On a router's WAN side that is a map of the LAN's reachability for anyone.
/// The exporter still serves (a central Prometheus must reach it, as Debian's exporters do),
/// but says so at start for every address that is not loopback while TLS or authentication is
/// missing.
struct WebExposure: Sendable {
    /// TLS is on.
    let tls: Bool
    /// A client must prove who it is: basic-auth users, or a verified client certificate required.
    let auth: Bool

    init(_ config: WebConfig?) {
        tls = config?.tls != nil
        auth = !(config?.users.isEmpty ?? true) || config?.tls?.settings.clientAuth == .requireAndVerify
    }

    /// The start-up warning for a bound address, `nil` for a loopback one or a protected server.
    func warning(_ address: SocketAddress) -> String? {
        guard !Self.isLoopback(address), !(tls && auth) else { return nil }
        let missing = [tls ? nil : "TLS", auth ? nil : "authentication"].compactMap { $0 }.joined(separator: " or ")
        return "serving without \(missing) on a non-loopback address: whoever reaches it reads the status page, "
            + "/debug/probe and /metrics (targets, interfaces, gateways); on a host with an untrusted side, listen "
            + "on a trusted address only, or set TLS and basic_auth_users in --web.config.file (docs/security.md)"
    }

    /// `127.0.0.0/8`, `::1` and `::ffff:127.0.0.0/104`; the unspecified address is every address.
    static func isLoopback(_ address: SocketAddress) -> Bool {
        let b = address.addressBytes
        if address.ipFamily == .ipv4 { return b.first == 127 }
        guard b.count == 16 else { return false }
        if b[0..<15].allSatisfy({ $0 == 0 }) && b[15] == 1 { return true }
        return b[0..<10].allSatisfy({ $0 == 0 }) && b[10] == 0xFF && b[11] == 0xFF && b[12] == 127
    }
}
