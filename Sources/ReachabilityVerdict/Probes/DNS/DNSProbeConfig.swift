/// How a direct DNS query travels.
public enum DNSTransport: String, Sendable, CaseIterable, Codable {
    /// One datagram per query (retransmitted), RFC 1035; an answer with TC set is asked again over TCP.
    case udp
    /// A TCP connection with the two-byte length framing of RFC 1035 §4.2.2 (RFC 7766).
    case tcp
    /// DNS over TLS, RFC 7858: the TCP framing inside TLS, port 853 by default.
    case tls

    /// The port when the server gives none.
    package var defaultPort: UInt16 { self == .tls ? 853 : 53 }
}

/// What a DNS answer must contain, beyond being there. Checked on NOERROR answers only.
package enum DNSAnswerExpectation: Sendable, Equatable, CustomStringConvertible {
    /// At least one answer record, in presentation form (`DNSRecord.presentation`), matches
    /// this regular expression (Swift `Regex` syntax, unanchored).
    case regex(String)
    /// Every address in the answer is one of these (A/AAAA only): an answer with an address
    /// outside the set is someone else's.
    case addresses(Set<String>)

    package var description: String {
        switch self {
        case .regex(let pattern): "an answer matching /\(pattern)/"
        case .addresses(let set): "addresses in {\(set.sorted().joined(separator: ", "))}"
        }
    }
}

/// What a DNS probe asks, and whom: a name and record type, sent either through the system
/// resolver or straight to one server over UDP, TCP or TLS. Built only through the throwing
/// initialiser, so a value that exists is valid.
package struct DNSProbeConfig: Sendable, Equatable {
    /// The name to resolve: a valid DNS name (no IP literal), without a trailing dot.
    package let name: String
    package let queryType: DNSQueryType
    /// The server to query directly; nil means the system resolver (getaddrinfo, so
    /// /etc/hosts, nsswitch and resolv.conf apply, and only `dns`/`timeout` failures are known).
    package let server: SocketAddress?
    /// The server as written (`tls://192.0.2.53`), for the probe's name (`NAME@SERVER`).
    package let serverText: String?
    package let transport: DNSTransport
    /// Device to bind the query socket to (SO_BINDTODEVICE); direct mode only.
    package private(set) var interface: String?
    /// Accept private, loopback and link-local answers for public names (split-horizon DNS)
    /// instead of reporting a portal; see `DNSPortalRule`.
    package let allowPrivateAnswers: Bool
    /// Direct UDP: time before the same query is sent again, up to `maxTransmissions` sends.
    package let retransmitInterval: Duration
    package let expectAnswer: DNSAnswerExpectation?
    /// TLS: the name the server's certificate must carry (and SNI); nil: its IP address.
    package let tlsServerName: String?
    package let caFile: String?
    package let insecureSkipVerify: Bool
    /// UDP: when the datagrams go unanswered (or are refused by ICMP), ask the same server over
    /// TCP in the round's last third; an answer there makes the reason `dns_udp_blocked`.
    package let tcpFallback: Bool

    /// Sends per round in direct UDP mode (the first plus retransmissions).
    package static let maxTransmissions = 3

    package var tlsOptions: TLSContext.Options {
        TLSContext.Options(caFile: caFile, insecureSkipVerify: insecureSkipVerify)
    }

    /// A DNS answer is local evidence, except over TLS with a verified certificate: then the
    /// answer came from the holder of that certificate's key, as with verified HTTPS.
    package var evidence: Evidence { transport == .tls && !insecureSkipVerify ? .internet : .local }

    /// - Parameters:
    ///   - server: an IP literal, optionally with a port, optionally after `udp://`, `tcp://` or
    ///     `tls://`: `192.0.2.53`, `192.0.2.53:5353`, `[2001:db8::53]:5353`, `tls://192.0.2.53`.
    ///     Port 53 (853 for TLS) when absent. Names are refused (a probe of DNS must not depend
    ///     on DNS to find its server).
    ///   - transport: nil takes the server's scheme, else UDP; a scheme that disagrees is refused.
    // Long on purpose: each option checked in turn, with its own message.
    package init(
        name: String, queryType: DNSQueryType = .a, server: String? = nil, transport: DNSTransport? = nil,
        interface: String? = nil, allowPrivateAnswers: Bool = false, retransmitInterval: Duration = .seconds(1),
        expectAnswer: DNSAnswerExpectation? = nil, tlsServerName: String? = nil, caFile: String? = nil,
        insecureSkipVerify: Bool = false, tcpFallback: Bool = true
    ) throws(ProbeConfigError) {
        guard SocketAddress(ip: name) == nil else {
            throw ProbeConfigError(
                .target, "dns name \(name.debugDescription): is an IP address; a DNS probe needs a name")
        }
        do {
            _ = try DNSMessage.validatedLabels(name)
        } catch {
            throw ProbeConfigError(.target, "dns name \(name.debugDescription): \(error)")
        }
        var chosen = transport
        var parsedServer: SocketAddress?
        if let server {
            let (scheme, rest) = try Self.splitScheme(server)
            if let scheme, let transport, scheme != transport {
                throw ProbeConfigError(
                    .dnsServer,
                    "dns server \(server.debugDescription): says \(scheme.rawValue):// but the transport is \(transport.rawValue)"
                )
            }
            chosen = chosen ?? scheme
            parsedServer = try Self.parseServer(rest, original: server, port: (chosen ?? .udp).defaultPort)
        } else if let transport, transport != .udp {
            throw ProbeConfigError(
                .dnsTransport,
                "dns transport \(transport.rawValue): needs a server; the system resolver chooses its own")
        }
        self.transport = chosen ?? .udp
        try ProbeConfigError.checkInterface(interface)
        if interface != nil, parsedServer == nil {
            throw ProbeConfigError(
                .interface,
                "dns interface \(interface ?? ""): needs a server; the system resolver cannot be bound to an interface")
        }
        if !queryType.isAddress, parsedServer == nil {
            throw ProbeConfigError(
                .dnsRecordType,
                "dns record type \(queryType.rawValue): needs a server; the system resolver looks up addresses only")
        }
        guard retransmitInterval >= .milliseconds(10) else {
            throw ProbeConfigError(
                .dnsRetransmitInterval, "dns retransmit interval \(retransmitInterval): must be at least 10ms")
        }
        try Self.check(expectAnswer, type: queryType)
        if self.transport != .tls, tlsServerName != nil || caFile != nil || insecureSkipVerify {
            throw ProbeConfigError(
                .dnsTLS, "dns tls: applies to the tls transport only, not \(self.transport.rawValue)")
        }
        if caFile != nil && insecureSkipVerify {
            throw ProbeConfigError(
                .dnsTLSCAFile, "dns tls ca_file: a CA file and insecure_skip_verify exclude each other")
        }
        if let tlsServerName, SocketAddress(ip: tlsServerName) == nil, !Resolver.isPlausibleHostName(tlsServerName) {
            throw ProbeConfigError(
                .dnsTLSServerName,
                "dns tls server_name \(tlsServerName.debugDescription): is not a host name or IP address")
        }
        self.name = name.hasSuffix(".") ? String(name.dropLast()) : name
        self.queryType = queryType
        self.server = parsedServer
        self.serverText = server
        self.interface = interface
        self.allowPrivateAnswers = allowPrivateAnswers
        self.retransmitInterval = retransmitInterval
        if case .addresses(let set) = expectAnswer {
            self.expectAnswer = .addresses(Set(set.compactMap { SocketAddress(ip: $0)?.ip }))
        } else {
            self.expectAnswer = expectAnswer
        }
        self.tlsServerName = tlsServerName
        self.caFile = caFile
        self.insecureSkipVerify = insecureSkipVerify
        self.tcpFallback = tcpFallback
        if self.transport == .tls {
            do throws(TLSContext.Failure) {
                _ = try TLSContext.shared(tlsOptions)
            } catch {
                throw ProbeConfigError(.dnsTLSCAFile, "dns tls ca_file: \(error.message)")
            }
        }
    }

    /// `tls://rest` → (.tls, rest); no scheme → (nil, server).
    private static func splitScheme(_ server: String) throws(ProbeConfigError) -> (DNSTransport?, String) {
        guard let range = server.firstRange(of: "://") else { return (nil, server) }
        let scheme = server[..<range.lowerBound].lowercased()
        guard let transport = DNSTransport(rawValue: scheme) else {
            throw ProbeConfigError(
                .dnsServer,
                "dns server \(server.debugDescription): unknown scheme \(scheme.debugDescription); use udp://, tcp:// or tls://"
            )
        }
        return (transport, String(server[range.upperBound...]))
    }

    private static func parseServer(_ text: String, original: String, port: UInt16) throws(ProbeConfigError)
        -> SocketAddress
    {
        let hostPort: HostPort
        do {
            hostPort = try HostPort(parsing: text, defaultPort: port)
        } catch {
            throw ProbeConfigError(.dnsServer, "dns server \(error.message)")
        }
        guard let address = hostPort.numericAddress else {
            throw ProbeConfigError(
                .dnsServer,
                "dns server \(original.debugDescription): must be an IP address, optionally with :port or [ipv6]:port"
            )
        }
        return address
    }

    package static func check(_ expectation: DNSAnswerExpectation?, type: DNSQueryType) throws(ProbeConfigError) {
        switch expectation {
        case nil: return
        case .regex(let pattern):
            guard !pattern.isEmpty else {
                throw ProbeConfigError(.dnsExpectAnswerRegex, "dns expect_answer regex: must not be empty")
            }
            do {
                _ = try Regex(pattern)
            } catch {
                throw ProbeConfigError(
                    .dnsExpectAnswerRegex, "dns expect_answer regex \(pattern.debugDescription): \(error)")
            }
        case .addresses(let set):
            guard type.isAddress else {
                throw ProbeConfigError(
                    .dnsExpectAnswer,
                    "dns expect_answer addresses: apply to A and AAAA records, not \(type.rawValue); use regex")
            }
            guard !set.isEmpty else {
                throw ProbeConfigError(.dnsExpectAnswer, "dns expect_answer addresses: must not be empty")
            }
            if let bad = set.sorted().first(where: { SocketAddress(ip: $0)?.ipFamily != type.family }) {
                throw ProbeConfigError(
                    .dnsExpectAnswer,
                    "dns expect_answer addresses: \(bad.debugDescription) is not an \(type == .a ? "IPv4" : "IPv6") address"
                )
            }
        }
    }
}

extension DNSProbeConfig {
    /// The same probe bound to `interface` (nil: the routing table's choice). Only a direct
    /// query can be bound: the system resolver chooses its own way.
    package func bound(to interface: String?) throws(ProbeConfigError) -> DNSProbeConfig {
        try ProbeConfigError.checkInterface(interface)
        if interface != nil, server == nil {
            throw ProbeConfigError(
                .interface,
                "dns interface \(interface ?? ""): needs a server; the system resolver cannot be bound to an interface")
        }
        var c = self
        c.interface = interface
        return c
    }
}
