/// Turns a probe of the configuration file into the scheduler's `ProbeSpec`, building (and so
/// validating) the prober's own configuration once: a bad URL, DNS name or CA file is a
/// `ConfigError` at load time, pointing at the key, never a probe-time failure.
package enum ConfigProbeBuilder {
    // Long on purpose: one case per probe type, each mapping its errors to the file's keys.
    package static func spec(_ d: ProbeDefinition, file: String) throws(ConfigError) -> ProbeSpec {
        let family = d.family.flatMap { IPFamily(rawValue: $0.rawValue) }
        switch d.type {
        case .http, .https:
            let make = httpConfig(d)
            let config: HTTPProbeConfig
            do throws(HTTPProbeConfigError) { config = try make(nil) } catch {
                throw httpError(d, error, file: file)
            }
            return ProbeSpec(
                name: d.name, type: config.probeType, target: d.target, family: family, interval: d.interval,
                timeout: d.timeout,
                evidence: config.evidence
            ) { iface throws(ProbeConfigError) in
                guard iface != nil else { return HTTPProber(config) }
                do throws(HTTPProbeConfigError) { return HTTPProber(try make(iface)) } catch {
                    throw ProbeConfigError(error.description)
                }
            }
        case .dns:
            let o = d.dns ?? DNSOptions()
            let make = { @Sendable (iface: String?) throws(ProbeConfigError) -> DNSProbeConfig in
                try DNSProbeConfig(
                    name: d.target, queryType: o.recordType, server: o.server, transport: o.transport,
                    interface: iface, allowPrivateAnswers: o.allowPrivateAnswers, expectAnswer: o.expectAnswer,
                    tlsServerName: o.tls.serverName, caFile: o.tls.caFile, insecureSkipVerify: o.tls.insecureSkipVerify,
                    tcpFallback: o.tcpFallback)
            }
            let config: DNSProbeConfig
            do throws(ProbeConfigError) { config = try make(nil) } catch {
                let (key, expected) = dnsErrorKey(error.message)
                throw fail(d, key, expected: expected, found: error.message, file: file)
            }
            let destination = o.server.map { "\(d.target)@\($0)" } ?? d.target
            // The system resolver cannot be bound to an interface: without a server the probe runs
            // on the routing table only.
            return ProbeSpec(
                name: d.name, type: .dns, target: destination, family: family, interval: d.interval, timeout: d.timeout,
                evidence: config.evidence, bindsToUplinks: o.server != nil
            ) { iface throws(ProbeConfigError) in
                guard iface != nil else { return DNSProber(config: config) }
                return DNSProber(config: try make(iface))
            }
        case .tcp:
            let config: TCPProbeConfig
            let o = d.tcp ?? TCPOptions()
            do throws(ProbeConfigError) {
                config = try TCPProbeConfig(
                    target: d.target, family: d.family ?? .any, expect: o.expect, canaryPort: o.canaryPort)
            } catch {
                let key =
                    error.message.hasPrefix("tcp expect")
                    ? "tcp.expect" : error.message.contains("family") ? "family" : "target"
                throw fail(
                    d, key, expected: key == "tcp.expect" ? "a regular expression (Swift Regex syntax)" : "host:port",
                    found: error.message, file: file)
            }
            return ProbeSpec(
                name: d.name, type: .tcp, target: d.target, family: family, interval: d.interval, timeout: d.timeout,
                evidence: config.evidence
            ) { iface throws(ProbeConfigError) in
                guard iface != nil else { return TCPProber(config: config) }
                return TCPProber(config: try config.bound(to: iface))
            }
        case .icmp, .mtu:
            let icmp = d.icmp ?? ICMPOptions()
            if let literal = SocketAddress(ip: d.target) {
                if let f = d.family, !f.admits(literal.ipFamily) {
                    throw fail(
                        d, "family",
                        expected: "a family that admits the \(literal.ipFamily.rawValue) address \(d.target)",
                        found: f.rawValue, file: file)
                }
            } else if !Resolver.isPlausibleHostName(d.target) {
                throw fail(
                    d, "target", expected: "a host name or IP address", found: d.target.debugDescription, file: file)
            }
            if d.type == .mtu {
                let expect = d.mtu?.expect ?? MTUOptions().expect
                return ProbeSpec(
                    name: d.name, type: .mtu, target: d.target, family: family, interval: d.interval,
                    timeout: d.timeout
                ) { iface in
                    MTUProber(
                        MTUProber.Configuration(
                            host: d.target, family: d.family ?? .any, expect: expect, interface: iface))
                }
            }
            return ProbeSpec(
                name: d.name, type: .icmp, target: d.target, family: family, interval: d.interval, timeout: d.timeout
            ) { iface in
                ICMPProber(
                    ICMPProber.Configuration(
                        host: d.target, family: d.family ?? .any, count: icmp.count, payloadSize: icmp.size,
                        interface: iface, dontFragment: icmp.dontFragment))
            }
        }
    }

    /// The `dns.` key a DNS configuration error is about, and what that key expects.
    private static func dnsErrorKey(_ message: String) -> (String, String) {
        let table: [(String, String, String)] = [
            ("dns server", "dns.server", "an IP address, optionally with a port and a scheme"),
            ("dns transport", "dns.transport", "a transport the server can be asked over"),
            ("dns record type", "dns.record_type", "a record type the probe can ask for"),
            ("dns expect_answer regex", "dns.expect_answer", "a regular expression (Swift Regex syntax)"),
            ("dns expect_answer", "dns.expect_answer", "an answer expectation that fits the record type"),
            ("dns tls ca_file", "dns.tls.ca_file", "a readable PEM file of CA certificates"),
            ("dns tls server_name", "dns.tls.server_name", "a host name or IP address"),
            ("dns tls", "dns.tls", "TLS options on a tls-transport probe only"),
        ]
        for (prefix, key, expected) in table where message.hasPrefix(prefix) { return (key, expected) }
        return ("target", "a DNS name to look up")
    }

    private static func httpConfig(_ d: ProbeDefinition)
        -> @Sendable (String?) throws(HTTPProbeConfigError) -> HTTPProbeConfig
    {
        let o = d.http ?? HTTPOptions()
        let mode: HTTPProbeConfig.Mode = o.mode == .web ? .web : .captive(o.expectation)
        // The environment is read once, when the file is loaded (a reload reads it again).
        let environment = o.proxyFromEnvironment ? processEnvironment() : [:]
        return { iface throws(HTTPProbeConfigError) in
            var proxy = HTTPProxySetting.direct
            do throws(ProbeConfigError) {
                if let url = o.proxyURL { proxy = .fixed(try HTTPProxy(parsing: url)) }
                if o.proxyFromEnvironment { proxy = .environment(try ProxyEnvironment(environment)) }
            } catch {
                throw HTTPProbeConfigError(
                    field: o.proxyURL != nil ? "proxy_url" : "proxy_from_environment", message: error.message)
            }
            return try HTTPProbeConfig(
                url: d.target, method: o.method, mode: mode, followRedirects: o.followRedirects,
                maxRedirects: o.maxRedirects ?? 10, hostHeader: o.hostHeader, serverName: o.tls.serverName,
                caFile: o.tls.caFile, insecureSkipVerify: o.tls.insecureSkipVerify, family: d.family ?? .any,
                interface: iface, headers: o.headers, proxy: proxy)
        }
    }

    private static func httpError(_ d: ProbeDefinition, _ e: HTTPProbeConfigError, file: String) -> ConfigError {
        let key: String
        let expected: String
        switch e.field {
        case "url": (key, expected) = ("target", ProbeSchema.targetText(d.type))
        case "ca_file": (key, expected) = ("http.tls.ca_file", "a readable PEM file of CA certificates")
        case "server_name": (key, expected) = ("http.tls.server_name", "a host name or IP address")
        case "tls": (key, expected) = (d.marks["http.tls"] != nil ? "http.tls" : "target", "usable TLS settings")
        case "host_header": (key, expected) = ("http.host_header", "a host name without spaces or control characters")
        case "headers": (key, expected) = ("http.headers", "header names and values the prober may send")
        case "proxy_url":
            (key, expected) = ("http.proxy_url", "an http:// proxy URL (http://[user:password@]host[:port])")
        case "proxy_from_environment":
            (key, expected) = ("http.proxy_from_environment", "proxy variables that hold http:// proxy URLs")
        default: (key, expected) = ("http.\(e.field)", "a value the HTTP prober accepts")
        }
        return fail(d, key, expected: expected, found: e.message, file: file)
    }

    private static func fail(_ d: ProbeDefinition, _ key: String, expected: String, found: String, file: String)
        -> ConfigError
    {
        var mark = d.marks[key]
        var prefix = key
        while mark == nil, let dot = prefix.lastIndex(of: ".") {
            prefix = String(prefix[..<dot])
            mark = d.marks[prefix]
        }
        return ConfigError(file: file, mark: mark ?? d.mark, path: "\(d.path).\(key)", expected: expected, found: found)
    }
}
