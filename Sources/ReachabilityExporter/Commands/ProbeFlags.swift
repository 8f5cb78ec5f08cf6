import ReachabilityVerdict

/// The probe and scheduler flags shared by the exporter and `check`, and how they become
/// `ProbeSpec`s and `MonitorSettings`.
package enum ProbeFlags {
    /// Set (to anything but empty or 0) by the test harness and CI: the exporter then refuses to
    /// fall back to the public default targets, so a forgotten probe flag fails instead of
    /// sending traffic off the machine.
    package static let refuseDefaultsVariable = "REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS"

    static let specs: [FlagSpec] =
        ProbeKind.all.flatMap { [kindFlag($0)] + settingFlags($0.types[0]) } + [
            FlagSpec(
                "probe.interval", .value(default: DurationParser.format(MonitorSettings().interval)),
                placeholder: "DURATION", help: "Time between probe rounds.", file: "global.interval"),
            FlagSpec(
                "probe.timeout", .value(default: DurationParser.format(MonitorSettings().timeout)),
                placeholder: "DURATION",
                help: "Deadline of each probe; must be below the interval.", file: "global.timeout"),
            FlagSpec(
                "probe.mode", .value(default: VerdictSettings().policy.description), placeholder: "POLICY",
                help: "How results combine: parallel (any success), http, icmp, quorum, quorum:N, quorum:N%.",
                file: "global.policy"),
            FlagSpec(
                "probe.fail-after", .value(default: String(VerdictSettings.defaultFailAfter)), placeholder: "N",
                help: "Consecutive failed rounds before leaving full.", file: "global.fail_after"),
            FlagSpec(
                "probe.recover-after", .value(default: String(VerdictSettings.defaultRecoverAfter)), placeholder: "N",
                help: "Consecutive good rounds before returning to full.", file: "global.recover_after"),
            FlagSpec(
                "probe.fast-recheck", .value(default: DurationParser.format(MonitorSettings().fastRecheck)),
                placeholder: "DURATION",
                help: "While not full, re-check after this, doubling up to the interval; 0 disables.",
                file: "global.fast_recheck"),
            FlagSpec(
                "probe.trust-local-targets", .bool(default: false),
                help:
                    "Let answers from loopback, on-link addresses and the gateway prove the internet (labs and tests only: on a real network a router or an interceptor answers there).",
                file: "global.trust_local_targets"
            ),
            FlagSpec(
                "probe.icmp.count", .value(default: String(ICMPProber.Configuration.defaultCount)), placeholder: "N",
                help: "Echo requests per ICMP round.", file: "icmp.count of a file probe"),
            FlagSpec(
                "probe.uplink", .repeated, placeholder: "INTERFACE",
                help: "Also run every probe bound to this interface (SO_BINDTODEVICE), with its own verdict.",
                file: "uplinks"),
            FlagSpec(
                "path.monitor", .bool(default: true),
                help:
                    "Watch links, addresses and routes over netlink: no usable path means `none` at once, and any change re-probes at once.",
                file: "global.path_monitor"),
        ]

    /// A kind's own flag (`--probe.icmp=HOST`), as its descriptor gives it: repeated, one probe each.
    private static func kindFlag(_ kind: ProbeKind) -> FlagSpec {
        FlagSpec(kind.flag.name, .repeated, placeholder: kind.flag.placeholder, help: kind.flag.help)
    }

    /// The flags that set up a kind's probes, listed after its own flag.
    private static func settingFlags(_ type: ProbeType) -> [FlagSpec] {
        switch type {
        case .http, .https:
            [
                FlagSpec(
                    "probe.http.each-family", .repeated, placeholder: "URL",
                    help:
                        "HTTP(S) captive-portal check run once per IP family, pinned (named ipv4:URL and ipv6:URL), so a portal that captures one family is seen; the --probe.http.* settings apply."
                ),
                FlagSpec(
                    "probe.http.expect-status", .value(default: nil), placeholder: "CODES",
                    help:
                        "Status codes the --probe.http checks expect: codes, ranges and classes, comma-separated (204, 200,204, 200-399, 2xx; default 204, or 200 with --probe.http.expect-body).",
                    file: "http.expected_status of a file probe"
                ),
                FlagSpec(
                    "probe.http.expect-body", .value(default: nil), placeholder: "TEXT",
                    help: "Text the --probe.http response bodies must contain (uses GET).",
                    file: "http.expected_body.contains of a file probe"),
                FlagSpec(
                    "probe.http.proxy-url", .value(default: nil), placeholder: "URL",
                    help:
                        "Send the --probe.http checks through this HTTP proxy (http://[user:password@]host[:port]; HTTPS through CONNECT).",
                    file: "http.proxy_url of a file probe"
                ),
                FlagSpec(
                    "probe.http.proxy-from-environment", .bool(default: false),
                    help:
                        "Send the --probe.http checks through the proxy HTTP_PROXY/HTTPS_PROXY name, except NO_PROXY hosts.",
                    file: "http.proxy_from_environment of a file probe"
                ),
            ]
        case .mtu:
            [
                FlagSpec(
                    "probe.mtu.expect", .value(default: String(MTUProber.Configuration.defaultExpect)),
                    placeholder: "BYTES",
                    help: "The path MTU the --probe.mtu targets must carry (IP packet bytes).",
                    file: "mtu.expect of a file probe")
            ]
        case .icmp, .dns, .tcp, .doh: []
        }
    }

    /// The built-in set (`Probe.defaultSet`, defined once) as the flags that give it. Never
    /// used by tests, which set `refuseDefaultsVariable`.
    package static var defaultArguments: [String] {
        var out: [String] = []
        for probe in Probe.defaultSet {
            let spec = probe.spec
            let flag =
                spec.family != nil && (spec.type == .http || spec.type == .https)
                ? "--probe.http.each-family=\(spec.target)"
                : "--\(spec.type.kind.flag.name)=\(probe.name)"
            if !out.contains(flag) { out.append(flag) }
        }
        return out
    }

    /// The flags that give probes: each kind's, and `--probe.http.each-family`.
    static let probeFlagNames = ProbeKind.all.map(\.flag.name) + ["probe.http.each-family"]

    /// Builds the probes the flags give. Without probe flags, the defaults — unless the
    /// environment forbids them. The scheduler and verdict flags are `ExporterOptions`'.
    static func probes(_ flags: ParsedFlags, environment: [String: String]) throws(UsageError) -> [ProbeSpec] {
        var source = flags
        if !probeFlagNames.contains(where: { flags.isSet($0) }) {
            let refuse = environment[refuseDefaultsVariable].map { !$0.isEmpty && $0 != "0" } ?? false
            if refuse {
                throw UsageError(
                    "no probe targets given and \(refuseDefaultsVariable) is set: refusing to probe the public default targets; pass \(ProbeKind.all.map { "--\($0.flag.name)" }.joined(separator: "/"))"
                )
            }
            source = try FlagParser(specs).parse(defaultArguments)
        }
        return try makeSpecs(source, flags: flags)
    }

    private static func makeSpecs(_ source: ParsedFlags, flags: ParsedFlags) throws(UsageError) -> [ProbeSpec] {
        var specs: [ProbeSpec] = []
        var names = Set<String>()
        func add(_ probe: Probe, flag: String, value: String) throws(UsageError) {
            if let problem = probe.problem {
                throw UsageError("invalid value \(value.debugDescription) for flag '--\(flag)': \(problem)")
            }
            guard names.insert(probe.name).inserted else {
                throw UsageError("probe \(probe.name.debugDescription) is given twice")
            }
            specs.append(probe.spec)
        }
        let expectation = try httpExpectation(flags)
        let proxy = try httpProxy(flags)
        for url in source.strings("probe.http.each-family") {
            // An IP literal has one family: its check pinned to the other would fail every
            // round and call that family limited.
            if let parsed = try? ProbeURL(url), SocketAddress(ip: parsed.host) != nil {
                throw UsageError(
                    "invalid value for flag '--probe.http.each-family': \(parsed.host) is an IP address, of one family; give a host name with addresses of both, or use --probe.http"
                )
            }
            for family in IPFamily.allCases {
                try add(
                    .http(url, expectation: expectation, proxy: proxy, family: family), flag: "probe.http.each-family",
                    value: url)
            }
        }
        let count =
            try flags.int("probe.icmp.count", range: 1...ICMPProber.Configuration.maxCount)
            ?? ICMPProber.Configuration.defaultCount
        let expect =
            try flags.int("probe.mtu.expect", range: MTUProber.Configuration.expectRange)
            ?? MTUProber.Configuration.defaultExpect
        for kind in ProbeKind.all.sorted(by: { specOrder($0.types[0]) < specOrder($1.types[0]) }) {
            for value in source.strings(kind.flag.name) {
                let probe: Probe
                switch kind.types[0] {
                case .http, .https: probe = .http(value, expectation: expectation, proxy: proxy)
                case .icmp: probe = .icmp(value, count: count)
                case .mtu: probe = .mtu(value, expect: expect)
                case .tcp: probe = .tcp(value)
                case .dns:
                    let (name, server) = nameAt(value)
                    probe = .dns(name, server: server)
                case .doh:
                    let (name, url) = nameAt(value)
                    probe = .doh(name, url: url ?? "")
                }
                try add(probe, flag: kind.flag.name, value: value)
            }
        }
        return specs
    }

    /// Where a kind's probes come in the flags' list (`Probe.defaultSet`'s order): HTTP, DNS,
    /// TCP, ICMP, MTU, then the kinds added since.
    private static func specOrder(_ type: ProbeType) -> Int {
        switch type {
        case .http, .https: 0
        case .dns: 1
        case .tcp: 2
        case .icmp: 3
        case .mtu: 4
        case .doh: 5
        }
    }

    /// `NAME@REST` → (NAME, REST); without `@`, (value, nil).
    private static func nameAt(_ value: String) -> (String, String?) {
        let parts = value.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        return (parts[0], parts.count == 2 ? parts[1] : nil)
    }

    private static func httpProxy(_ flags: ParsedFlags) throws(UsageError) -> HTTPProxySetting {
        let fromEnvironment = flags.bool("probe.http.proxy-from-environment")
        guard let text = flags.string("probe.http.proxy-url") else {
            guard fromEnvironment else { return .direct }
            do throws(ProbeConfigError) { return .environment(try ProxyEnvironment(processEnvironment())) } catch {
                throw UsageError("flag '--probe.http.proxy-from-environment': \(error.message)")
            }
        }
        guard !fromEnvironment else {
            throw UsageError(
                "flags '--probe.http.proxy-url' and '--probe.http.proxy-from-environment' exclude each other")
        }
        do throws(ProbeConfigError) { return .fixed(try HTTPProxy(parsing: text)) } catch {
            throw UsageError("invalid value for flag '--probe.http.proxy-url': \(error.message)")
        }
    }

    private static func httpExpectation(_ flags: ParsedFlags) throws(UsageError) -> HTTPExpectation {
        var codes: Set<Int>?
        if let text = flags.string("probe.http.expect-status") {
            do throws(HTTPStatusSet.ParseError) {
                codes = try HTTPStatusSet.parse(text)
            } catch {
                throw UsageError(
                    "invalid value \(text.debugDescription) for flag '--probe.http.expect-status': \(error.message); expected codes, ranges or classes such as 204, 200,204, 200-399 or 2xx"
                )
            }
        }
        if let body = flags.string("probe.http.expect-body") {
            guard !body.isEmpty else {
                throw UsageError("invalid value \"\" for flag '--probe.http.expect-body': must not be empty")
            }
            var e = HTTPExpectation.bodyContains(body)
            if let codes { e = HTTPExpectation(statusCodes: codes, body: e.body) }
            return e
        }
        return codes.map { HTTPExpectation(statusCodes: $0) } ?? .noContent
    }

    /// With ICMP probes configured, checks at start-up that an ICMP socket can be opened (ping
    /// socket or raw), so a missing permission is a clear error, not a silent zero.
    static func checkICMPPermission(_ specs: [ProbeSpec]) -> String? {
        guard specs.contains(where: { $0.type == .icmp || $0.type == .mtu }) else { return nil }
        do {
            _ = try ICMPEngine.shared.socketKind(family: .ipv4)
            return nil
        } catch {
            return error.description
        }
    }
}
