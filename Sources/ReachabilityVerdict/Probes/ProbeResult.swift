/// The kinds of probe; the `probe` label of every probe metric.
public enum ProbeType: String, Sendable, CaseIterable, Codable {
    /// `icmp`: ICMP echo requests (ping).
    case icmp
    /// `http`: a plain HTTP request.
    case http
    /// `https`: an HTTP request over TLS.
    case https
    /// `dns`: a name lookup, through the system resolver or a direct query to a server.
    case dns
    /// `tcp`: a TCP connection (optionally with an expected banner).
    case tcp
    /// `mtu`: don't-fragment ICMP echoes of several sizes at once, measuring the path MTU.
    case mtu
    /// `doh`: DNS over HTTPS (RFC 8484), one lookup per round as a GET to a DoH server's URL.
    case doh
}

/// What a probe round trip concluded.
public enum ProbeStatus: String, Sendable, Codable {
    /// The expected answer came back.
    case success
    /// An answer came back, but a captive portal (or similar interceptor) wrote it.
    case portal
    /// No usable answer.
    case failure
}

/// Why a probe did not succeed: a stable, low-cardinality label value (`reason`).
/// Portal signals use the same type (`redirect`, `http_status`, `body_mismatch`, `private_address`).
public enum FailureReason: String, Sendable, CaseIterable, Codable {
    /// No answer before the probe's deadline.
    case timeout
    /// The connection or query was refused (a TCP reset to the SYN, an ICMP port unreachable,
    /// DNS REFUSED).
    case refused
    /// No route to the target: a network or host unreachable error, locally or from a router.
    case unreachable
    /// An established connection was reset.
    case reset
    /// Name resolution failed (the target's name, or a DNS probe's answer with another rcode).
    case dns
    /// The DNS server answered NXDOMAIN (rcode 3): the name does not exist.
    case nxdomain
    /// The DNS server answered SERVFAIL (rcode 2).
    case servfail
    /// The DNS answer held no record of the asked type.
    case noAnswer = "no_answer"
    /// A portal signal: a public name resolved to a private, loopback, link-local or CGNAT address.
    case privateAddress = "private_address"
    /// The TLS handshake or certificate check failed.
    case tls
    /// An HTTP status other than the expected one (a 4xx or 5xx fails; an unexpected 2xx is a portal signal).
    case httpStatus = "http_status"
    /// A portal signal: the HTTP body did not match the expected one.
    case bodyMismatch = "body_mismatch"
    /// A portal signal: the HTTP answer was a redirect (3xx) the probe does not follow.
    case redirect
    /// HTTP 511 (RFC 6585): an intercepting proxy or portal wants the client to log in.
    case networkAuthenticationRequired = "network_authentication_required"
    /// A certificate the trust store accepts, but for another name: someone else answered in
    /// place of the target (an HTTPS-intercepting portal). A portal signal.
    case tlsNameMismatch = "tls_name_mismatch"
    /// A UDP DNS query went unanswered (or was refused by ICMP) while the same server answered
    /// over TCP: something on the path drops or rejects DNS over UDP.
    case dnsUDPBlocked = "dns_udp_blocked"
    /// A DNS answer that does not meet the probe's `expect_answer`.
    case answerMismatch = "answer_mismatch"
    /// The HTTP proxy could not be reached (refused, unreachable, timed out, reset).
    case proxyRefused = "proxy_refused"
    /// The HTTP proxy asked for credentials, or refused the ones given (407).
    case proxyAuth = "proxy_auth"
    /// The HTTP proxy refused the tunnel or could not reach the origin (a CONNECT answered
    /// with another status than 2xx; 502, 503 or 504 to a proxied plain-HTTP request).
    case proxyStatus = "proxy_status"
    /// The HTTP response head was too large or had too many header fields.
    case tooLarge = "too_large"
    /// Packets of the expected size do not get through: the measured path MTU is below the `mtu`
    /// probe's `expect`, or a don't-fragment echo was too big for a link ("fragmentation needed",
    /// "packet too big", or EMSGSIZE from the local interface).
    case mtu
    /// A malformed or truncated answer: an HTTP response or DNS reply that does not parse or
    /// does not answer the request.
    case protocolError = "protocol"
    /// Echo replies from a target beyond the gateway arrived with a full initial TTL (0 hops
    /// away): the next router answered in the target's place, not the target.
    case forgedReply = "forged_reply"
    /// A TCP handshake was completed by something on the path: a port of the target that no
    /// server offers (the canary) connected too.
    case intercepted
    /// A TCP connection whose first bytes did not match the probe's `expect` (or that sent
    /// none): the handshake alone proves nothing.
    case bannerMismatch = "banner_mismatch"
    /// The host refused to send (EPERM or EACCES): a local firewall rule, or no permission for
    /// an ICMP socket.
    case permission
    /// Echoes were lost. A label value kept for reading other versions' history; this build's
    /// probers report an unanswered round as `timeout`.
    case loss
    /// Anything else: the probe was cancelled, its configuration is unusable, or its socket
    /// closed under it.
    case error
}

/// A phase of a probe, for `*_phase_duration_seconds{phase}`.
public enum ProbePhase: String, Sendable, CaseIterable, Codable, Comparable {
    /// `resolve`: name resolution (for a DNS probe, the whole lookup).
    case resolve
    /// `connect`: the TCP connect (to the proxy, when there is one).
    case connect
    /// `proxy`: the CONNECT exchange with a proxy.
    case proxy
    /// `tls`: the TLS handshake.
    case tls
    /// `query`: a direct DNS query's exchange, after connect and TLS.
    case query
    /// `processing`: the time to the first response byte.
    case processing
    /// `transfer`: the rest of the response.
    case transfer
    /// `rtt`: an ICMP probe's mean round trip (for an MTU probe, the smallest size's).
    case rtt

    /// In the order a probe goes through them, as declared.
    public static func < (a: ProbePhase, b: ProbePhase) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

/// ICMP echo details of one round.
public struct ICMPDetail: Sendable, Equatable, Codable {
    /// Echo requests sent.
    public var sent: Int
    /// Echo replies received.
    public var received: Int
    /// Round trip of each echo that came back, in send order.
    public var rtts: [Duration]
    /// TTL (IPv4) or hop limit (IPv6) of the last reply, when the socket mode reports it.
    public var ttl: Int?

    /// When the replies came 0 hops away from a target that is not loopback or link-local: the
    /// address nobody holds (`203.0.113.254`, `2001:db8:ffff:ffff::fe`) that was pinged once to tell a box that
    /// answers for every address from a legitimate 0-hop path, if it answered too. Nil: not
    /// asked, or no answer.
    public var phantomReply: String?

    /// Routers the last reply crossed, estimated from its TTL: senders start at 64, 128 or 255
    /// (Linux and the BSDs 64, Windows 128, many routers 255), so a reply with TTL 61 left a
    /// host 3 hops away. Nil without a TTL.
    public var hops: Int? { ttl.flatMap(Self.hops(ttl:)) }

    /// The hop estimate of a TTL or hop limit: the nearest usual initial value above it, less it.
    public static func hops(ttl: Int) -> Int? {
        guard (1...255).contains(ttl) else { return nil }
        let initial = [64, 128, 255].first { $0 >= ttl } ?? 255
        return initial - ttl
    }

    /// The details of a round that sent `sent` echoes and got `received` replies.
    public init(sent: Int, received: Int, rtts: [Duration], ttl: Int? = nil) {
        self.sent = sent
        self.received = received
        self.rtts = rtts
        self.ttl = ttl
    }

    /// The share of echoes that got no reply, 0 to 1 (0 when none was sent).
    public var lossRatio: Double { sent == 0 ? 0 : Double(sent - received) / Double(sent) }
}

/// HTTP(S) details of one round.
public struct HTTPDetail: Sendable, Equatable, Codable {
    /// The final response's status code; nil when no response head came.
    public var statusCode: Int?
    /// Redirects followed.
    public var redirects: Int = 0
    /// The `Location` header of a redirect answer, when there was one.
    public var location: String?
    /// Bytes of response body read.
    public var bodyBytes: Int = 0
    /// The negotiated TLS version (`TLSv1.3`); nil for plain HTTP.
    public var tlsVersion: String?
    /// The negotiated TLS cipher suite; nil for plain HTTP.
    public var tlsCipher: String?
    /// The leaf certificate's notAfter, in seconds since the Unix epoch.
    public var certificateNotAfter: Double?
    /// The final response's protocol version (`HTTP/1.1`); nil when no response head came.
    public var version: String?
    /// The final response's `Content-Length`, when it had a valid one.
    public var contentLength: Int?

    /// Details with this status code and nothing else yet.
    public init(statusCode: Int? = nil) { self.statusCode = statusCode }
}

/// DNS details of one round.
public struct DNSDetail: Sendable, Equatable, Codable {
    /// The response code (0 NOERROR, 2 SERVFAIL, 3 NXDOMAIN, 5 REFUSED); nil for the system resolver.
    public var rcode: Int?
    /// Records in the answer section, of any type (for the system resolver, the addresses).
    public var answers: Int
    /// The addresses answered, for A and AAAA queries (empty for the other types).
    public var addresses: [String]
    /// The server set TC over UDP: the answer did not fit in the datagram (it is asked again
    /// over TCP; `transport` says which answer was judged).
    public var truncated: Bool = false
    /// The answer records of the asked type, in presentation form (`10 mx.example.`,
    /// `"v=spf1 -all"`); for A/AAAA the same as `addresses`.
    public var records: [String] = []
    /// How the judged answer came: `udp`, `tcp`, `tls`; nil for the system resolver.
    public var transport: String?
    /// The header's authority and additional record counts (nil for the system resolver).
    package var authorityCount: Int?
    package var additionalCount: Int?
    /// Every answer record as miekg/dns writes it (`DNSRecord.zoneText`), for `/probe`'s validators.
    package var answerTexts: [String] = []

    /// The details of one answer; `records` defaults to `addresses`.
    public init(
        rcode: Int? = nil, answers: Int, addresses: [String], truncated: Bool = false, records: [String]? = nil,
        transport: String? = nil
    ) {
        self.rcode = rcode
        self.answers = answers
        self.addresses = addresses
        self.truncated = truncated
        self.records = records ?? addresses
        self.transport = transport
    }
}

/// The outcome of one probe round: a value, never an error. Probers put no metrics anywhere;
/// the recorder turns these into metrics and history.
///
/// A value with its fields behind one copy-on-write reference: a round's result is copied into
/// the outcome, the verdict's entries per scope, the latest outcome of each probe and the
/// status, and at 10,000 probes those copies of a ~300-byte value were most of a round's
/// memory peak and its `memmove` (#33). Copies now share the fields until one is changed.
public struct ProbeResult: Sendable, Equatable {
    fileprivate struct Fields: Equatable {
        package var status: ProbeStatus
        package var reason: FailureReason?
        package var detail: String
        package var duration: Duration
        package var phases: [ProbePhase: Duration]
        package var address: String?
        package var family: IPFamily?
        package var icmp: ICMPDetail?
        package var http: HTTPDetail?
        package var dns: DNSDetail?
        package var mtu: Int?
    }

    /// Written only through `fields` after `isKnownUniquelyReferenced`, so no copy sees a change.
    fileprivate final class Storage: @unchecked Sendable {
        package var fields: Fields
        package init(_ fields: Fields) { self.fields = fields }
    }

    private var storage: Storage

    private mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.fields) }
    }

    /// Whether the round trip succeeded, failed, or met a portal.
    public var status: ProbeStatus {
        get { storage.fields.status }
        _modify {
            makeUnique()
            yield &storage.fields.status
        }
    }
    /// Set when `status` is not `.success`.
    public var reason: FailureReason? {
        get { storage.fields.reason }
        _modify {
            makeUnique()
            yield &storage.fields.reason
        }
    }
    /// Human detail for logs, history and the debug page: errno text, the status line seen, etc.
    public var detail: String {
        get { storage.fields.detail }
        _modify {
            makeUnique()
            yield &storage.fields.detail
        }
    }
    /// Wall time of the whole round (monotonic).
    public var duration: Duration {
        get { storage.fields.duration }
        _modify {
            makeUnique()
            yield &storage.fields.duration
        }
    }
    /// The time spent in each phase the probe went through.
    public var phases: [ProbePhase: Duration] {
        get { storage.fields.phases }
        _modify {
            makeUnique()
            yield &storage.fields.phases
        }
    }
    /// The address actually probed, when one was reached or tried.
    public var address: String? {
        get { storage.fields.address }
        _modify {
            makeUnique()
            yield &storage.fields.address
        }
    }
    /// The IP family of `address`; nil when no address was tried.
    public var family: IPFamily? {
        get { storage.fields.family }
        _modify {
            makeUnique()
            yield &storage.fields.family
        }
    }
    /// The echo details of an ICMP or MTU probe; nil for other probes.
    public var icmp: ICMPDetail? {
        get { storage.fields.icmp }
        _modify {
            makeUnique()
            yield &storage.fields.icmp
        }
    }
    /// The HTTP details of an HTTP(S) probe; nil for other probes.
    public var http: HTTPDetail? {
        get { storage.fields.http }
        _modify {
            makeUnique()
            yield &storage.fields.http
        }
    }
    /// The answer details of a DNS probe that got an answer; nil otherwise.
    public var dns: DNSDetail? {
        get { storage.fields.dns }
        _modify {
            makeUnique()
            yield &storage.fields.dns
        }
    }
    /// The path MTU an `mtu` probe measured (IP packet bytes: the largest don't-fragment echo
    /// that came back); nil when nothing came back or for other probes.
    public var mtu: Int? {
        get { storage.fields.mtu }
        _modify {
            makeUnique()
            yield &storage.fields.mtu
        }
    }

    /// A result with these fields (`mtu` nil).
    public init(
        status: ProbeStatus, reason: FailureReason? = nil, detail: String = "", duration: Duration,
        phases: [ProbePhase: Duration] = [:], address: String? = nil, family: IPFamily? = nil,
        icmp: ICMPDetail? = nil, http: HTTPDetail? = nil, dns: DNSDetail? = nil
    ) {
        storage = Storage(
            Fields(
                status: status, reason: reason, detail: detail, duration: duration, phases: phases, address: address,
                family: family, icmp: icmp, http: http, dns: dns, mtu: nil))
    }

    /// Equal fields (shared storage is equal without comparing them).
    public static func == (a: ProbeResult, b: ProbeResult) -> Bool {
        a.storage === b.storage || a.storage.fields == b.storage.fields
    }

    /// A failed result for `reason`, with `detail` for logs.
    public static func failure(
        _ reason: FailureReason, _ detail: String, duration: Duration, phases: [ProbePhase: Duration] = [:]
    ) -> ProbeResult {
        ProbeResult(status: .failure, reason: reason, detail: detail, duration: duration, phases: phases)
    }

    /// The status is `success`.
    public var succeeded: Bool { status == .success }
}
