import Glibc

/// The probe and scheduler flags shared by the exporter and `check`, and how they become
/// `ProbeSpec`s and `MonitorSettings`.
public enum ProbeFlags {
    /// Set (to anything but empty or 0) by the test harness and CI: the exporter then refuses to
    /// fall back to the public default targets, so a forgotten probe flag fails instead of
    /// sending traffic off the machine.
    public static let refuseDefaultsVariable = "REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS"

    static let specs: [FlagSpec] = [
        FlagSpec("probe.http", .repeated, placeholder: "URL", help: "HTTP(S) captive-portal check; expects status 204 unless --probe.http.expect-status/--probe.http.expect-body say otherwise."),
        FlagSpec("probe.http.expect-status", .value(default: nil), placeholder: "CODES", help: "Comma-separated status codes the --probe.http checks expect (default 204, or 200 with --probe.http.expect-body)."),
        FlagSpec("probe.http.expect-body", .value(default: nil), placeholder: "TEXT", help: "Text the --probe.http response bodies must contain (uses GET)."),
        FlagSpec("probe.icmp", .repeated, placeholder: "HOST", help: "ICMP echo target (name or address; names are re-resolved every round)."),
        FlagSpec("probe.dns", .repeated, placeholder: "NAME[@SERVER]", help: "DNS lookup of NAME through the system resolver, or as a direct UDP query to SERVER (an IP, optional :port)."),
        FlagSpec("probe.tcp", .repeated, placeholder: "HOST:PORT", help: "TCP connect target."),
        FlagSpec("probe.interval", .value(default: "5s"), placeholder: "DURATION", help: "Time between probe rounds."),
        FlagSpec("probe.timeout", .value(default: "3s"), placeholder: "DURATION", help: "Deadline of each probe; must be below the interval."),
        FlagSpec("probe.mode", .value(default: "parallel"), placeholder: "POLICY", help: "How results combine: parallel (any success), http, icmp, quorum, quorum:N, quorum:N%."),
        FlagSpec("probe.fail-after", .value(default: "3"), placeholder: "N", help: "Consecutive failed rounds before leaving full."),
        FlagSpec("probe.recover-after", .value(default: "2"), placeholder: "N", help: "Consecutive good rounds before returning to full."),
        FlagSpec("probe.fast-recheck", .value(default: "1s"), placeholder: "DURATION", help: "While not full, re-check after this, doubling up to the interval; 0 disables."),
        FlagSpec("probe.trust-local-targets", .bool(default: false), help: "Let answers from loopback, on-link addresses and the gateway prove the internet (labs and tests only: on a real network a router or an interceptor answers there)."),
        FlagSpec("probe.icmp.count", .value(default: "3"), placeholder: "N", help: "Echo requests per ICMP round."),
        FlagSpec("probe.uplink", .repeated, placeholder: "INTERFACE", help: "Also run every probe bound to this interface (SO_BINDTODEVICE), with its own verdict."),
        FlagSpec("path.monitor", .bool(default: true), help: "Watch links, addresses and routes over netlink: no usable path means `none` at once, and any change re-probes at once."),
    ]

    /// Starts the netlink path monitor when enabled; on failure logs why and lets probes alone decide.
    static func startPathGate(_ flags: ParsedFlags, logger: Logger, registry: MetricsRegistry?) -> (any PathGate, PathMonitor?) {
        guard flags.bool("path.monitor") else { return (OpenPathGate(), nil) }
        let monitor = PathMonitor()
        do {
            try monitor.start()
        } catch {
            logger.warn("path monitor unavailable; probes alone decide", ("err", error.description))
            return (OpenPathGate(), nil)
        }
        if let registry { PathMetrics.register(in: registry, source: monitor) }
        return (SnapshotPathGate(monitor), monitor)
    }

    /// The built-in set for real hosts: captive-style HTTP checks against well-known connectivity
    /// endpoints, an HTTPS check, ICMP to two public anycast resolvers over IPv4 and IPv6, and a
    /// DNS lookup. Never used by tests, which set `refuseDefaultsVariable`.
    public static let defaultArguments: [String] = [
        "--probe.http=http://connectivitycheck.gstatic.com/generate_204",
        "--probe.http=https://www.google.com/generate_204",
        "--probe.icmp=1.1.1.1", "--probe.icmp=8.8.8.8",
        "--probe.icmp=2606:4700:4700::1111", "--probe.icmp=2001:4860:4860::8888",
        "--probe.dns=example.com",
    ]

    static let probeFlagNames = ["probe.http", "probe.icmp", "probe.dns", "probe.tcp"]

    /// Builds the probes the flags give. Without probe flags, the defaults — unless the
    /// environment forbids them. The scheduler and verdict flags are `ExporterOptions`'.
    static func probes(_ flags: ParsedFlags, environment: [String: String]) throws(UsageError) -> [ProbeSpec] {
        var source = flags
        if !probeFlagNames.contains(where: { flags.isSet($0) }) {
            let refuse = environment[refuseDefaultsVariable].map { !$0.isEmpty && $0 != "0" } ?? false
            if refuse {
                throw UsageError("no probe targets given and \(refuseDefaultsVariable) is set: refusing to probe the public default targets; pass --probe.http/--probe.icmp/--probe.dns/--probe.tcp")
            }
            source = try FlagParser(specs).parse(defaultArguments)
        }
        return try makeSpecs(source, flags: flags)
    }

    private static func makeSpecs(_ source: ParsedFlags, flags: ParsedFlags) throws(UsageError) -> [ProbeSpec] {
        var specs: [ProbeSpec] = []
        var names = Set<String>()
        func add(_ spec: ProbeSpec) throws(UsageError) {
            guard names.insert(spec.name).inserted else { throw UsageError("probe \(spec.name.debugDescription) is given twice") }
            specs.append(spec)
        }
        let expectation = try httpExpectation(flags)
        for url in source.strings("probe.http") {
            let config: HTTPProbeConfig
            do throws(HTTPProbeConfigError) { config = try HTTPProbeConfig(url: url, mode: .captive(expectation)) } catch {
                throw UsageError("invalid value \(url.debugDescription) for flag '--probe.http': \(error.description)")
            }
            try add(ProbeSpec(name: url, type: config.probeType, target: url, evidence: config.evidence) { iface throws(ProbeConfigError) in
                guard let iface else { return HTTPProber(config) }
                do throws(HTTPProbeConfigError) {
                    return HTTPProber(try HTTPProbeConfig(url: url, mode: .captive(expectation), interface: iface))
                } catch {
                    throw ProbeConfigError(error.description)
                }
            })
        }
        for target in source.strings("probe.dns") {
            let parts = target.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let server = parts.count == 2 ? parts[1] : nil
            let config: DNSProbeConfig
            do throws(ProbeConfigError) { config = try DNSProbeConfig(name: parts[0], server: server) } catch {
                throw UsageError("invalid value \(target.debugDescription) for flag '--probe.dns': \(error.message)")
            }
            try add(ProbeSpec(name: target, type: .dns, target: target, bindsToUplinks: server != nil) { iface throws(ProbeConfigError) in
                guard let iface else { return DNSProber(config: config) }
                return DNSProber(config: try DNSProbeConfig(name: parts[0], server: server, interface: iface))
            })
        }
        for target in source.strings("probe.tcp") {
            let config: TCPProbeConfig
            do throws(ProbeConfigError) { config = try TCPProbeConfig(target: target) } catch {
                throw UsageError("invalid value \(target.debugDescription) for flag '--probe.tcp': \(error.message)")
            }
            try add(ProbeSpec(name: target, type: .tcp, target: target, evidence: config.evidence) { iface throws(ProbeConfigError) in
                guard let iface else { return TCPProber(config: config) }
                return TCPProber(config: try TCPProbeConfig(target: target, interface: iface))
            })
        }
        try addICMP(source, flags: flags, add: add)
        return specs
    }

    private static func httpExpectation(_ flags: ParsedFlags) throws(UsageError) -> HTTPExpectation {
        var codes: Set<Int>?
        if let text = flags.string("probe.http.expect-status") {
            var parsed = Set<Int>()
            for part in text.split(separator: ",") {
                guard let code = Int(part.trimmingSpaces), (100...599).contains(code) else {
                    throw UsageError("invalid value \(text.debugDescription) for flag '--probe.http.expect-status': expected status codes such as 204 or 200,204")
                }
                parsed.insert(code)
            }
            codes = parsed
        }
        if let body = flags.string("probe.http.expect-body") {
            guard !body.isEmpty else { throw UsageError("invalid value \"\" for flag '--probe.http.expect-body': must not be empty") }
            var e = HTTPExpectation.bodyContains(body)
            if let codes { e = HTTPExpectation(statusCodes: codes, body: e.body) }
            return e
        }
        return codes.map { HTTPExpectation(statusCodes: $0) } ?? .noContent
    }

    private static func addICMP(_ source: ParsedFlags, flags: ParsedFlags, add: (ProbeSpec) throws(UsageError) -> Void) throws(UsageError) {
        let count = try flags.int("probe.icmp.count", range: 1...ICMPProber.Configuration.maxCount) ?? 3
        for host in source.strings("probe.icmp") {
            let config = ICMPProber.Configuration(host: host, count: count)
            if let problem = config.problem {
                throw UsageError("invalid value \(host.debugDescription) for flag '--probe.icmp': \(problem)")
            }
            let family: IPFamily? = SocketAddress(ip: host)?.ipFamily
            try add(ProbeSpec(name: host, type: .icmp, target: host, family: family) { iface in
                var c = config
                c.interface = iface
                return ICMPProber(c)
            })
        }
    }

    /// With ICMP probes configured, checks at start-up that an ICMP socket can be opened (ping
    /// socket or raw), so a missing permission is a clear error, not a silent zero.
    static func checkICMPPermission(_ specs: [ProbeSpec]) -> String? {
        guard specs.contains(where: { $0.type == .icmp }) else { return nil }
        do {
            _ = try ICMPEngine.shared.socketKind(family: .ipv4)
            return nil
        } catch {
            return error.description
        }
    }
}

/// The process environment as a dictionary.
func processEnvironment() -> [String: String] {
    var out: [String: String] = [:]
    var p = environ
    while let entry = p.pointee {
        let s = String(cString: entry)
        if let eq = s.firstIndex(of: "=") { out[String(s[..<eq])] = String(s[s.index(after: eq)...]) }
        p += 1
    }
    return out
}
