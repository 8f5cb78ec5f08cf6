/// A probe setting that cannot work: which one (`field`) and why, for a person
/// (`tcp target "example.com:99999": port must be 1–65535`). Every prober's configuration
/// throws it from its validating initialiser; the configuration file's loader points at the
/// field's key (`field.key`, below the probe) and says what it expects (`field.expected`); the
/// command line and the library show `description`.
package struct ProbeConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    package let field: ProbeField
    package let message: String
    /// A name that heads `description` (the HTTP prober's own names for its settings: `url`,
    /// `headers`, …); nil when the message names the setting itself.
    package let heading: String?

    package init(_ field: ProbeField, _ message: String, heading: String? = nil) {
        self.field = field
        self.message = Redaction.userinfo(in: message)
        self.heading = heading
    }

    /// The same message, about another field (a proxy URL parsed for `http.proxy_url`, say).
    package func about(_ field: ProbeField) -> ProbeConfigError { ProbeConfigError(field, message, heading: heading) }

    package var description: String { heading.map { "\($0): \(message)" } ?? message }
}

/// A setting of a probe, named as the configuration file names it below the probe.
package enum ProbeField: Sendable, Equatable, CaseIterable {
    case target, family, interface
    case httpMethod
    case httpExpectedStatus
    case httpFollowRedirects
    case httpMaxRedirects
    case httpHostHeader
    case httpHeaders
    case httpTLS
    case httpTLSServerName
    case httpTLSCAFile
    case httpProxyURL
    case httpProxyFromEnvironment
    /// Settings only the library sets (their keys name them in messages; the file has none).
    case httpBodyLimit
    case httpCacheBust
    case httpUserAgent
    case dnsServer
    case dnsTransport
    case dnsRecordType
    case dnsExpectAnswer
    case dnsExpectAnswerRegex
    case dnsTLS
    case dnsTLSServerName
    case dnsTLSCAFile
    case dnsRetransmitInterval
    case tcpExpect
    case tcpCanaryPort
    case tcpMaxAddresses
    case icmpCount
    case icmpSize
    case icmpSpacing
    case mtuExpect

    /// The configuration file's key of the field, below the probe (`dns.server`).
    package var key: String {
        switch self {
        case .target: "target"
        case .family: "family"
        case .interface: "interface"
        case .httpMethod: "http.method"
        case .httpExpectedStatus: "http.expected_status"
        case .httpFollowRedirects: "http.follow_redirects"
        case .httpMaxRedirects: "http.max_redirects"
        case .httpHostHeader: "http.host_header"
        case .httpHeaders: "http.headers"
        case .httpTLS: "http.tls"
        case .httpTLSServerName: "http.tls.server_name"
        case .httpTLSCAFile: "http.tls.ca_file"
        case .httpProxyURL: "http.proxy_url"
        case .httpProxyFromEnvironment: "http.proxy_from_environment"
        case .httpBodyLimit: "http.body_limit"
        case .httpCacheBust: "http.cache_bust"
        case .httpUserAgent: "http.user_agent"
        case .dnsServer: "dns.server"
        case .dnsTransport: "dns.transport"
        case .dnsRecordType: "dns.record_type"
        case .dnsExpectAnswer: "dns.expect_answer"
        case .dnsExpectAnswerRegex: "dns.expect_answer"
        case .dnsTLS: "dns.tls"
        case .dnsTLSServerName: "dns.tls.server_name"
        case .dnsTLSCAFile: "dns.tls.ca_file"
        case .dnsRetransmitInterval: "dns.retransmit_interval"
        case .tcpExpect: "tcp.expect"
        case .tcpCanaryPort: "tcp.canary_port"
        case .tcpMaxAddresses: "tcp.max_addresses"
        case .icmpCount: "icmp.count"
        case .icmpSize: "icmp.size"
        case .icmpSpacing: "icmp.spacing"
        case .mtuExpect: "mtu.expect"
        }
    }

    /// What the field expects, for the file's error messages ("expected …").
    package var expected: String {
        switch self {
        case .target: "a target this probe type can use"
        case .family: "a family that admits the target"
        case .interface: "an interface name"
        case .httpExpectedStatus: "HTTP status codes (100-599)"
        case .httpMethod: "a method that fits the expectation"
        case .httpFollowRedirects: "false for a captive check (a redirect is the portal signal)"
        case .httpTLS: "usable TLS settings"
        case .dnsTLS: "TLS options on a tls-transport probe only"
        case .httpTLSServerName, .dnsTLSServerName: "a host name or IP address"
        case .httpTLSCAFile, .dnsTLSCAFile: "a readable PEM file of CA certificates"
        case .httpHostHeader: "a host name without spaces or control characters"
        case .httpHeaders: "header names and values the prober may send"
        case .httpProxyURL: "an http:// proxy URL (http://[user:password@]host[:port])"
        case .httpProxyFromEnvironment: "proxy variables that hold http:// proxy URLs"
        case .dnsServer: "an IP address, optionally with a port and a scheme"
        case .dnsTransport: "a transport the server can be asked over"
        case .dnsRecordType: "a record type the probe can ask for"
        case .dnsExpectAnswer: "an answer expectation that fits the record type"
        case .tcpExpect, .dnsExpectAnswerRegex: "a regular expression (Swift Regex syntax)"
        case .tcpCanaryPort: "a port 1-65535"
        case .icmpCount: "a count of echoes in range"
        case .icmpSize: "a payload size in range"
        case .mtuExpect: "an MTU in range"
        case .httpMaxRedirects, .httpBodyLimit, .httpCacheBust, .httpUserAgent, .dnsRetransmitInterval,
            .tcpMaxAddresses, .icmpSpacing:
            "a value the prober accepts"
        }
    }
}

extension ProbeConfigError {
    /// Checks an interface name for SO_BINDTODEVICE (`InterfaceName`).
    static func checkInterface(_ name: String?) throws(ProbeConfigError) {
        guard let name, let problem = InterfaceName.problem(name) else { return }
        throw ProbeConfigError(.interface, "interface \(name.debugDescription): \(problem)")
    }
}

/// A prober configuration built without throwing (ICMP, MTU) that validates on demand.
package protocol ValidatedProbeConfiguration {
    /// Throws the first setting that cannot work, with its field.
    func validate() throws(ProbeConfigError)
}

extension ValidatedProbeConfiguration {
    /// What is wrong with this configuration, or nil if it is usable. Config loading reports it
    /// up front; a prober given a bad configuration fails each round with it.
    package var problem: String? {
        do throws(ProbeConfigError) {
            try validate()
            return nil
        } catch {
            return error.message
        }
    }
}
