/// The configuration file (`--config.file`), decoded and checked against the schema: what it
/// sets and nothing else. Optional fields are nil when the file does not set them, so the
/// command line can fill them in (see `ExporterOptions` for the precedence). Built by
/// `ConfigLoader`; what a field means is in docs/configuration.md.
package struct ExporterConfig: Sendable, Equatable {
    /// The file it came from, as given (for messages).
    package var file: String
    package var global: GlobalConfig
    /// nil when the file does not mention `uplinks`.
    package var uplinks: UplinkSelection?
    /// nil when the file has no `history` section.
    package var history: HistorySection?
    /// `uplink_settings:` — per interface, the mark and source addresses its probes carry.
    package var uplinkRouting: [String: UplinkRouting] = [:]
    /// `uplink_settings:` — per interface, how often its probes run (at least the global interval).
    package var uplinkIntervals: [String: Duration] = [:]
    /// Where each uplink's `interval` is in the file (for errors found with the command line).
    package var uplinkIntervalMarks: [String: YAMLMark] = [:]
    /// `uplink_settings:` — per interface, the only probes (by name) that run bound to it.
    package var uplinkProbes: [String: [String]] = [:]
    /// Where each uplink's `probes` names are (checked against the probes once they are built).
    package var uplinkProbeMarks: [String: [YAMLMark]] = [:]
    /// Where each `uplink_settings` key is, by interface (every key, whatever it sets): checked
    /// against the uplinks once flags and file are combined.
    package var uplinkSettingMarks: [String: YAMLMark] = [:]
    /// `uplink_settings:` — per interface, a traffic budget for its probes.
    package var uplinkBudgets: [String: TrafficBudget] = [:]
    package var probes: [ProbeDefinition]

    package init(
        file: String, global: GlobalConfig = GlobalConfig(), uplinks: UplinkSelection? = nil,
        history: HistorySection? = nil, probes: [ProbeDefinition] = []
    ) {
        self.file = file
        self.global = global
        self.uplinks = uplinks
        self.history = history
        self.probes = probes
    }
}

/// `global:` — the scheduler and verdict settings. nil: not set in the file.
package struct GlobalConfig: Sendable, Equatable {
    package var interval: Duration?
    package var timeout: Duration?
    /// `policy` with its `quorum` folded in.
    package var policy: VerdictPolicy?
    package var failAfter: Int?
    package var recoverAfter: Int?
    /// `fast_recheck`: the faster re-check while not `full` (0 disables).
    package var fastRecheck: Duration?
    /// `path_monitor`: read at start-up only.
    package var pathMonitor: Bool?
    /// `trust_local_targets`: answers from the local network may prove `full` (labs only).
    package var trustLocalTargets: Bool?
    /// Where each key was (`interval` → 3:13), for errors found once flags are combined in.
    package var marks: [String: YAMLMark] = [:]

    package init() {}
}

/// `uplinks:` — `auto` (every interface holding a default route) or a list of interface names.
package enum UplinkSelection: Sendable, Equatable {
    case auto
    case interfaces([String])
}

/// `history:` — parsed and handed on; the history writer gives the values their meaning.
package struct HistorySection: Sendable, Equatable {
    package var dir: String?
    /// `max_file_size` in bytes.
    package var maxFileSize: Int64?
    package var retention: Duration?
    /// `max_total_size` in bytes.
    package var maxTotalSize: Int64?

    package init(dir: String? = nil, maxFileSize: Int64? = nil, retention: Duration? = nil, maxTotalSize: Int64? = nil)
    {
        self.dir = dir
        self.maxFileSize = maxFileSize
        self.retention = retention
        self.maxTotalSize = maxTotalSize
    }
}

/// One entry of `probes:`.
package struct ProbeDefinition: Sendable, Equatable {
    /// The `target` label of its series; defaults to `target`.
    package var name: String
    package var type: ProbeType
    /// URL (http, https), host (icmp), host:port (tcp) or the name to look up (dns).
    package var target: String
    package var interval: Duration?
    package var timeout: Duration?
    package var family: FamilyPreference?
    package var labels: [ProbeLabel]
    /// Present for http and https probes (defaults filled in), nil otherwise.
    package var http: HTTPOptions?
    /// Present for dns probes, nil otherwise.
    package var dns: DNSOptions?
    /// Present for icmp probes, nil otherwise.
    package var icmp: ICMPOptions?
    /// Present for mtu probes, nil otherwise.
    package var mtu: MTUOptions?
    /// Present for tcp probes, nil otherwise.
    package var tcp: TCPOptions?
    /// Where the entry starts and its key path (`probes[2]`).
    package var mark: YAMLMark
    package var path: String
    /// Where each key of the entry was, by relative key path (`http.tls.ca_file`).
    package var marks: [String: YAMLMark]

    /// Equal apart from where it is written: a probe that only moved in the file is unchanged.
    package func sameSettings(as other: ProbeDefinition) -> Bool {
        var a = self
        let b = other
        (a.mark, a.path, a.marks) = (b.mark, b.path, b.marks)
        return a == b
    }

    package init(
        name: String, type: ProbeType, target: String, interval: Duration? = nil, timeout: Duration? = nil,
        family: FamilyPreference? = nil, labels: [ProbeLabel] = [], http: HTTPOptions? = nil, dns: DNSOptions? = nil,
        icmp: ICMPOptions? = nil, mark: YAMLMark = YAMLMark(line: 0, column: 0), path: String = "",
        marks: [String: YAMLMark] = [:]
    ) {
        self.name = name
        self.type = type
        self.target = target
        self.interval = interval
        self.timeout = timeout
        self.family = family
        self.labels = labels
        self.http = http
        self.dns = dns
        self.icmp = icmp
        self.mark = mark
        self.path = path
        self.marks = marks
    }
}

/// `http:` of an http or https probe.
package struct HTTPOptions: Sendable, Equatable {
    package enum Mode: String, Sendable, CaseIterable { case captive, web }

    package var mode: Mode = .captive
    /// nil: GET when the body is checked, HEAD otherwise.
    package var method: HTTPProbeConfig.Method?
    /// Captive mode; nil: 204, or 200 with `expected_body`.
    package var expectedStatus: [Int]?
    package var expectedBody: HTTPExpectation.BodyMatch?
    /// Web mode; nil: follow.
    package var followRedirects: Bool?
    package var maxRedirects: Int?
    package var hostHeader: String?
    package var headers: [HTTPProbeConfig.Header] = []
    package var tls = TLSOptions()
    /// `http.proxy_url`, as written (parsed when the probe is built).
    package var proxyURL: String?
    package var proxyFromEnvironment = false

    package init() {}

    /// The captive-mode expectation these options describe.
    package var expectation: HTTPExpectation {
        let codes = Set(expectedStatus ?? (expectedBody == nil ? [204] : [200]))
        return HTTPExpectation(statusCodes: codes, body: expectedBody)
    }
}

/// `http.tls:` of an https probe (or a web probe that may be redirected to https).
package struct TLSOptions: Sendable, Equatable {
    package var caFile: String?
    package var serverName: String?
    package var insecureSkipVerify = false

    package init() {}
}

/// `dns:` of a dns probe.
package struct DNSOptions: Sendable, Equatable {
    /// An IP with an optional port; nil: the system resolver.
    package var server: String?
    /// nil: the server's scheme, else udp.
    package var transport: DNSTransport?
    package var recordType: DNSQueryType = .a
    package var allowPrivateAnswers = false
    package var expectAnswer: DNSAnswerExpectation?
    /// `dns.tls:` (tls transport only).
    package var tls = TLSOptions()
    package var tcpFallback = true

    package init() {}
}

/// `icmp:` of an icmp probe.
package struct ICMPOptions: Sendable, Equatable {
    package var count = ICMPProber.Configuration.defaultCount
    /// Payload bytes after the 8-byte ICMP header (`size`).
    package var size = ICMPProber.Configuration.defaultPayloadSize
    /// `dont_fragment`: DF set, never fragmented locally; too big for a link fails with `mtu`.
    package var dontFragment = false

    package init() {}
}

/// `tcp:` of a tcp probe.
package struct TCPOptions: Sendable, Equatable {
    /// `expect`: a regular expression the server's first bytes must match.
    package var expect: String?
    /// `canary_port`: the port of the same address that must not connect; nil: none (`0`).
    package var canaryPort: UInt16? = TCPProbeConfig.defaultCanaryPort

    package init() {}
}

/// `mtu:` of an mtu probe.
package struct MTUOptions: Sendable, Equatable {
    /// The path MTU the path must carry (`expect`, IP packet bytes).
    package var expect = MTUProber.Configuration.defaultExpect

    package init() {}
}
