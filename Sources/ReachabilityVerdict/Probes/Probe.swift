/// One probe to run, built by a static factory: `.http(_:)`, `.icmp(_:)`, `.dns(_:server:)`,
/// `.tcp(_:port:)`, `.mtu(_:)`, `.doh(_:url:)`. The factories never throw: a value that cannot work (a bad URL, say) is
/// reported by `problem`, and such a probe fails every round with that reason instead of
/// running with something else. The command line's probe flags are built by the same factories.
public struct Probe: Sendable {
    package let spec: ProbeSpec
    /// Why this probe cannot run as given, or nil when it can.
    public let problem: String?

    /// The name the probe is reported under (its `target` label): the URL, host or `name@server`.
    public var name: String { spec.name }

    /// The same probe reported under another name.
    public func named(_ name: String) -> Probe {
        var spec = self.spec
        spec.name = name
        return Probe(spec: spec, problem: problem)
    }

    package init(spec: ProbeSpec, problem: String? = nil) {
        self.spec = spec
        self.problem = problem
    }

    /// A probe that cannot be built: every round fails at once with `problem`.
    private static func unusable(_ name: String, _ type: ProbeType, _ problem: String) -> Probe {
        Probe(
            spec: ProbeSpec(name: name, type: type, target: name) { _ in UnusableProber(type: type, problem: problem) },
            problem: problem)
    }

    /// A captive-portal check of an http or https URL, as Android and Apple do: `GET`, no
    /// redirect followed, success only for the expected answer (status 204 by default); a
    /// redirect, a 511, another 2xx or a wrong body is a portal signal.
    public static func http(_ url: String, expecting statusCodes: Set<Int> = [204], bodyContaining body: String? = nil)
        -> Probe
    {
        let expectation = HTTPExpectation(statusCodes: statusCodes, body: body.map { .contains($0) })
        return http(url, expectation: expectation)
    }

    package static func http(
        _ url: String, expectation: HTTPExpectation, proxy: HTTPProxySetting = .direct, family: IPFamily? = nil
    ) -> Probe {
        let name = family.map { "\($0.rawValue):\(url)" } ?? url
        do throws(ProbeConfigError) {
            let config = try HTTPProbeConfig(
                url: url, mode: .captive(expectation), family: family.map { $0 == .ipv4 ? .ipv4 : .ipv6 } ?? .any,
                proxy: proxy)
            return Probe(spec: .http(config, .init(name: name, target: url, family: family)))
        } catch {
            return unusable(name, url.lowercased().hasPrefix("https:") ? .https : .http, error.description)
        }
    }

    /// One captive check of `url` per IP family, each pinned to it and named `ipv4:URL` and
    /// `ipv6:URL`: a portal that captures one family only (IPv4 HTTP redirected, IPv6 left
    /// alone) is seen in that family's verdict, which a check following the preferred family
    /// would pass by. Costs one more HTTP exchange per round than a single check.
    public static func httpEachFamily(_ url: String, expecting statusCodes: Set<Int> = [204]) -> [Probe] {
        let expectation = HTTPExpectation(statusCodes: statusCodes, body: nil)
        return IPFamily.allCases.map { http(url, expectation: expectation, family: $0) }
    }

    /// ICMP echo requests to a host (a name is re-resolved every round), `count` per round.
    public static func icmp(_ host: String, count: Int = Probe.defaultICMPCount) -> Probe {
        let config = ICMPProber.Configuration(host: host, count: count)
        if let problem = config.problem { return unusable(host, .icmp, problem) }
        return Probe(spec: .icmp(config, .init(name: host, target: host, family: SocketAddress(ip: host)?.ipFamily)))
    }

    /// A path-MTU probe of a host (a name is re-resolved every round): don't-fragment echoes of
    /// several sizes at once each round; below `expect` bytes it fails with `mtu` and the
    /// verdict is `limited (mtu)`. See `MTUProber`.
    /// Reported as `mtu:HOST` (`mtuName`), so it can share its host with an ICMP probe.
    public static func mtu(_ host: String, expect: Int = Probe.defaultMTUExpect) -> Probe {
        let config = MTUProber.Configuration(host: host, expect: expect)
        if let problem = config.problem { return unusable(mtuName(host), .mtu, problem) }
        return Probe(
            spec: .mtu(config, .init(name: mtuName(host), target: host, family: SocketAddress(ip: host)?.ipFamily)))
    }

    /// The default name of an MTU probe of `host`: `mtu:HOST`.
    public static func mtuName(_ host: String) -> String { "mtu:\(host)" }

    /// A DNS lookup of `name` (an A record by default): through the system resolver, or as a
    /// direct query to `server` (an IP address, optionally with a port): over UDP, or over TCP
    /// or TLS when the server is written `tcp://…` or `tls://…`. DNS answers can come from the
    /// local network, so they degrade a verdict but never prove `full` alone — except over TLS
    /// with a verified certificate.
    public static func dns(_ name: String, server: String? = nil, recordType: DNSQueryType = .a) -> Probe {
        let target = server.map { "\(name)@\($0)" } ?? name
        do throws(ProbeConfigError) {
            let config = try DNSProbeConfig(name: name, queryType: recordType, server: server)
            return Probe(spec: .dns(config, .init(name: target, target: target)))
        } catch {
            return unusable(target, .dns, error.message)
        }
    }

    /// A DNS-over-HTTPS lookup of `name` (RFC 8484): a GET of `url` (the server's, as
    /// `https://dns.example/dns-query`) with the query, answered as a DNS probe's. Over https
    /// with a verified certificate an answer proves the internet; over http:// it cannot.
    /// Reported as `NAME@URL`.
    public static func doh(_ name: String, url: String, recordType: DNSQueryType = .a) -> Probe {
        let target = "\(name)@\(url)"
        do throws(ProbeConfigError) {
            let config = try DoHProbeConfig(name: name, queryType: recordType, url: url)
            return Probe(spec: config.spec(.init(name: target, target: name)))
        } catch {
            return unusable(target, .doh, error.message)
        }
    }

    /// A TCP connection to `host` (a name or an IP address) on `port`.
    public static func tcp(_ host: String, port: UInt16) -> Probe {
        tcp(HostPort(host: host, port: port).description)
    }

    /// A TCP connection to `host:port` (`[v6]:port` for IPv6 literals).
    package static func tcp(_ target: String) -> Probe {
        do throws(ProbeConfigError) {
            return Probe(spec: .tcp(try TCPProbeConfig(target: target), .init(name: target, target: target)))
        } catch {
            return unusable(target, .tcp, error.message)
        }
    }

    /// Echo requests per round of an ICMP probe (the ICMP prober's default).
    public static let defaultICMPCount = ICMPProber.Configuration.defaultCount
    /// The path MTU an MTU probe expects (the MTU prober's default).
    public static let defaultMTUExpect = MTUProber.Configuration.defaultExpect

    /// The seed's HTTP check URL, the default `httpProbeURL` of `Reachability.Configuration`.
    public static let defaultHTTPURL = "http://connectivitycheck.gstatic.com/generate_204"
    /// The seed's ICMP host, the default `icmpHost` of `Reachability.Configuration`.
    public static let defaultICMPHost = "1.1.1.1"

    /// The built-in set for real hosts, the exporter's default and `Reachability.shared`'s:
    /// the captive-style HTTP check once per IP family (`httpEachFamily`: a portal that captures
    /// one family is seen), an HTTPS check against a well-known connectivity endpoint (so a TLS
    /// interceptor shows as `partial`), ICMP to public anycast resolvers over IPv4 and IPv6, and
    /// a system-resolver lookup. Every target is public: tests never use it.
    public static var defaultSet: [Probe] {
        httpEachFamily(defaultHTTPURL) + [
            .http("https://www.google.com/generate_204"), .dns("example.com"),
            .icmp(defaultICMPHost), .icmp("8.8.8.8"), .icmp("2606:4700:4700::1111"), .icmp("2001:4860:4860::8888"),
        ]
    }
}
