/// The configuration file (`--config.file`), decoded and checked against the schema: what it
/// sets and nothing else. Optional fields are nil when the file does not set them, so the
/// command line can fill them in (see `ExporterOptions` for the precedence). Built by
/// `ConfigLoader`; what a field means is in docs/configuration.md.
public struct ExporterConfig: Sendable, Equatable {
    /// The file it came from, as given (for messages).
    public var file: String
    public var global: GlobalConfig
    /// nil when the file does not mention `uplinks`.
    public var uplinks: UplinkSelection?
    /// nil when the file has no `history` section.
    public var history: HistorySection?
    public var probes: [ProbeDefinition]

    public init(file: String, global: GlobalConfig = GlobalConfig(), uplinks: UplinkSelection? = nil,
                history: HistorySection? = nil, probes: [ProbeDefinition] = []) {
        self.file = file
        self.global = global
        self.uplinks = uplinks
        self.history = history
        self.probes = probes
    }
}

/// `global:` — the scheduler and verdict settings. nil: not set in the file.
public struct GlobalConfig: Sendable, Equatable {
    public var interval: Duration?
    public var timeout: Duration?
    /// `policy` with its `quorum` folded in.
    public var policy: VerdictPolicy?
    public var failAfter: Int?
    public var recoverAfter: Int?
    /// `fast_recheck`: the faster re-check while not `full` (0 disables).
    public var fastRecheck: Duration?
    /// `path_monitor`: read at start-up only.
    public var pathMonitor: Bool?
    /// `trust_local_targets`: answers from the local network may prove `full` (labs only).
    public var trustLocalTargets: Bool?
    /// Where each key was (`interval` → 3:13), for errors found once flags are combined in.
    public var marks: [String: YAMLMark] = [:]

    public init() {}
}

/// `uplinks:` — `auto` (every interface holding a default route) or a list of interface names.
public enum UplinkSelection: Sendable, Equatable {
    case auto
    case interfaces([String])
}

/// `history:` — parsed and handed on; the history writer gives the values their meaning.
public struct HistorySection: Sendable, Equatable {
    public var dir: String?
    /// `max_file_size` in bytes.
    public var maxFileSize: Int64?
    public var retention: Duration?

    public init(dir: String? = nil, maxFileSize: Int64? = nil, retention: Duration? = nil) {
        self.dir = dir
        self.maxFileSize = maxFileSize
        self.retention = retention
    }
}

/// One constant label of a probe, exported on `reachability_probe_labels_info`.
public struct ProbeLabel: Sendable, Equatable {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// One entry of `probes:`.
public struct ProbeDefinition: Sendable, Equatable {
    /// The `target` label of its series; defaults to `target`.
    public var name: String
    public var type: ProbeType
    /// URL (http, https), host (icmp), host:port (tcp) or the name to look up (dns).
    public var target: String
    public var interval: Duration?
    public var timeout: Duration?
    public var family: FamilyPreference?
    public var labels: [ProbeLabel]
    /// Present for http and https probes (defaults filled in), nil otherwise.
    public var http: HTTPOptions?
    /// Present for dns probes, nil otherwise.
    public var dns: DNSOptions?
    /// Present for icmp probes, nil otherwise.
    public var icmp: ICMPOptions?
    /// Where the entry starts and its key path (`probes[2]`).
    public var mark: YAMLMark
    public var path: String
    /// Where each key of the entry was, by relative key path (`http.tls.ca_file`).
    public var marks: [String: YAMLMark]

    /// Equal apart from where it is written: a probe that only moved in the file is unchanged.
    public func sameSettings(as other: ProbeDefinition) -> Bool {
        var a = self, b = other
        (a.mark, a.path, a.marks) = (b.mark, b.path, b.marks)
        return a == b
    }

    public init(name: String, type: ProbeType, target: String, interval: Duration? = nil, timeout: Duration? = nil,
                family: FamilyPreference? = nil, labels: [ProbeLabel] = [], http: HTTPOptions? = nil, dns: DNSOptions? = nil,
                icmp: ICMPOptions? = nil, mark: YAMLMark = YAMLMark(line: 0, column: 0), path: String = "", marks: [String: YAMLMark] = [:]) {
        self.name = name; self.type = type; self.target = target; self.interval = interval; self.timeout = timeout
        self.family = family; self.labels = labels; self.http = http; self.dns = dns; self.icmp = icmp
        self.mark = mark; self.path = path; self.marks = marks
    }
}

/// `http:` of an http or https probe.
public struct HTTPOptions: Sendable, Equatable {
    public enum Mode: String, Sendable, CaseIterable { case captive, web }

    public var mode: Mode = .captive
    /// nil: GET when the body is checked, HEAD otherwise.
    public var method: HTTPProbeConfig.Method?
    /// Captive mode; nil: 204, or 200 with `expected_body`.
    public var expectedStatus: [Int]?
    public var expectedBody: HTTPExpectation.BodyMatch?
    /// Web mode; nil: follow.
    public var followRedirects: Bool?
    public var maxRedirects: Int?
    public var hostHeader: String?
    public var headers: [HTTPProbeConfig.Header] = []
    public var tls = TLSOptions()

    public init() {}

    /// The captive-mode expectation these options describe.
    public var expectation: HTTPExpectation {
        let codes = Set(expectedStatus ?? (expectedBody == nil ? [204] : [200]))
        return HTTPExpectation(statusCodes: codes, body: expectedBody)
    }
}

/// `http.tls:` of an https probe (or a web probe that may be redirected to https).
public struct TLSOptions: Sendable, Equatable {
    public var caFile: String?
    public var serverName: String?
    public var insecureSkipVerify = false

    public init() {}
}

/// `dns:` of a dns probe.
public struct DNSOptions: Sendable, Equatable {
    /// An IP with an optional port; nil: the system resolver.
    public var server: String?
    public var recordType: DNSQueryType = .a
    public var allowPrivateAnswers = false

    public init() {}
}

/// `icmp:` of an icmp probe.
public struct ICMPOptions: Sendable, Equatable {
    public var count = 3

    public init() {}
}
