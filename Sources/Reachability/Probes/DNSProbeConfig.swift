/// What a DNS probe asks, and whom: a name and record type, sent either through the system
/// resolver or straight to one server over UDP. Built only through the throwing initialiser,
/// so a value that exists is valid.
package struct DNSProbeConfig: Sendable, Equatable {
    /// The name to resolve: a valid DNS name (no IP literal), without a trailing dot.
    package let name: String
    package let queryType: DNSQueryType
    /// The server to query directly over UDP; nil means the system resolver (getaddrinfo, so
    /// /etc/hosts, nsswitch and resolv.conf apply, and only `dns`/`timeout` failures are known).
    package let server: SocketAddress?
    /// Device to bind the query socket to (SO_BINDTODEVICE); direct mode only.
    package let interface: String?
    /// Accept private, loopback and link-local answers for public names (split-horizon DNS)
    /// instead of reporting a portal; see `DNSPortalRule`.
    package let allowPrivateAnswers: Bool
    /// Direct mode: time before the same query is sent again, up to `maxTransmissions` sends.
    package let retransmitInterval: Duration

    /// Sends per round in direct mode (the first plus retransmissions).
    package static let maxTransmissions = 3

    /// - Parameters:
    ///   - server: an IP literal, optionally with a port: `192.0.2.53`, `192.0.2.53:5353`,
    ///     `2001:db8::53`, `[2001:db8::53]:5353`. Port 53 when absent. Names are refused (a probe
    ///     of DNS must not depend on DNS to find its server).
    package init(
        name: String, queryType: DNSQueryType = .a, server: String? = nil, interface: String? = nil,
        allowPrivateAnswers: Bool = false, retransmitInterval: Duration = .seconds(1)
    ) throws(ProbeConfigError) {
        guard SocketAddress(ip: name) == nil else {
            throw ProbeConfigError("dns name \(name.debugDescription): is an IP address; a DNS probe needs a name")
        }
        do {
            _ = try DNSMessage.validatedLabels(name)
        } catch {
            throw ProbeConfigError("dns name \(name.debugDescription): \(error)")
        }
        var parsedServer: SocketAddress?
        if let server {
            let hostPort: HostPort
            do {
                hostPort = try HostPort(parsing: server, defaultPort: 53)
            } catch {
                throw ProbeConfigError("dns server \(error.message)")
            }
            guard let address = hostPort.numericAddress else {
                throw ProbeConfigError(
                    "dns server \(server.debugDescription): must be an IP address, optionally with :port or [ipv6]:port"
                )
            }
            parsedServer = address
        }
        try ProbeConfigError.checkInterface(interface)
        if interface != nil, parsedServer == nil {
            throw ProbeConfigError(
                "dns interface \(interface ?? ""): needs a server; the system resolver cannot be bound to an interface")
        }
        guard retransmitInterval >= .milliseconds(10) else {
            throw ProbeConfigError("dns retransmit interval \(retransmitInterval): must be at least 10ms")
        }
        self.name = name.hasSuffix(".") ? String(name.dropLast()) : name
        self.queryType = queryType
        self.server = parsedServer
        self.interface = interface
        self.allowPrivateAnswers = allowPrivateAnswers
        self.retransmitInterval = retransmitInterval
    }
}
