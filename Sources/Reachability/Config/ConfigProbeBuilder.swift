/// Turns a probe of the configuration file into the scheduler's `ProbeSpec`, building (and so
/// validating) the prober's own configuration once: a bad URL, DNS name or CA file is a
/// `ConfigError` at load time, pointing at the key, never a probe-time failure.
package enum ConfigProbeBuilder {
    /// Maps the file's keys to the prober's configuration; a configuration error points at the
    /// key of the field it names (`ProbeConfigError.field`), with what that field expects.
    package static func spec(_ d: ProbeDefinition, file: String) throws(ConfigError) -> ProbeSpec {
        var spec = try unlabelled(d, file: file)
        spec.labels = d.labels
        return spec
    }

    private static func unlabelled(_ d: ProbeDefinition, file: String) throws(ConfigError) -> ProbeSpec {
        let at = ProbeSpec.Placement(
            name: d.name, target: d.target, family: d.family.flatMap { IPFamily(rawValue: $0.rawValue) },
            interval: d.interval, timeout: d.timeout)
        if d.type == .icmp || d.type == .mtu, let refused = hostProblem(d, file: file) { throw refused }
        do throws(ProbeConfigError) {
            switch d.type {
            case .http, .https: return .http(try httpConfig(d), at)
            case .dns:
                let o = d.dns ?? DNSOptions()
                let config = try DNSProbeConfig(
                    name: d.target, queryType: o.recordType, server: o.server, transport: o.transport,
                    allowPrivateAnswers: o.allowPrivateAnswers, expectAnswer: o.expectAnswer,
                    tlsServerName: o.tls.serverName, caFile: o.tls.caFile, insecureSkipVerify: o.tls.insecureSkipVerify,
                    tcpFallback: o.tcpFallback)
                var placed = at
                placed.target = o.server.map { "\(d.target)@\($0)" } ?? d.target
                return .dns(config, placed)
            case .tcp:
                let o = d.tcp ?? TCPOptions()
                let config = try TCPProbeConfig(
                    target: d.target, family: d.family ?? .any, expect: o.expect, canaryPort: o.canaryPort)
                return .tcp(config, at)
            case .icmp, .mtu:
                if d.type == .mtu {
                    let config = MTUProber.Configuration(
                        host: d.target, family: d.family ?? .any, expect: (d.mtu ?? MTUOptions()).expect)
                    try config.validate()
                    return .mtu(config, at)
                }
                let icmp = d.icmp ?? ICMPOptions()
                let config = ICMPProber.Configuration(
                    host: d.target, family: d.family ?? .any, count: icmp.count, payloadSize: icmp.size,
                    dontFragment: icmp.dontFragment)
                try config.validate()
                return .icmp(config, at)
            }
        } catch {
            let expected = error.field == .target ? ProbeSchema.targetText(d.type) : error.field.expected
            throw fail(d, error.field.key, expected: expected, found: error.message, file: file)
        }
    }

    /// Why an ICMP or MTU target cannot be probed (an IP address its family does not admit,
    /// or not a plausible host name), or nil.
    private static func hostProblem(_ d: ProbeDefinition, file: String) -> ConfigError? {
        if let literal = SocketAddress(ip: d.target) {
            if let f = d.family, !f.admits(literal.ipFamily) {
                return fail(
                    d, "family", expected: "a family that admits the \(literal.ipFamily.rawValue) address \(d.target)",
                    found: f.rawValue, file: file)
            }
        } else if !Resolver.isPlausibleHostName(d.target) {
            return fail(
                d, "target", expected: "a host name or IP address", found: d.target.debugDescription, file: file)
        }
        return nil
    }

    private static func httpConfig(_ d: ProbeDefinition) throws(ProbeConfigError) -> HTTPProbeConfig {
        let o = d.http ?? HTTPOptions()
        let mode: HTTPProbeConfig.Mode = o.mode == .web ? .web : .captive(o.expectation)
        // The environment is read once, when the file is loaded (a reload reads it again).
        var proxy = HTTPProxySetting.direct
        if let url = o.proxyURL {
            do throws(ProbeConfigError) { proxy = .fixed(try HTTPProxy(parsing: url)) } catch {
                throw error.about(.httpProxyURL)
            }
        }
        if o.proxyFromEnvironment {
            do throws(ProbeConfigError) { proxy = .environment(try ProxyEnvironment(processEnvironment())) } catch {
                throw error.about(.httpProxyFromEnvironment)
            }
        }
        return try HTTPProbeConfig(
            url: d.target, method: o.method, mode: mode, followRedirects: o.followRedirects,
            maxRedirects: o.maxRedirects ?? HTTPProbeConfig.defaultMaxRedirects, hostHeader: o.hostHeader,
            serverName: o.tls.serverName, caFile: o.tls.caFile, insecureSkipVerify: o.tls.insecureSkipVerify,
            family: d.family ?? .any, headers: o.headers, proxy: proxy)
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
