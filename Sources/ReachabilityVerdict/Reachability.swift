import Synchronization

/// Tells whether this host really reaches the internet, in the seed library's shape
/// (RealReachability2): a path monitor gates everything (no usable path: `none` at once, no
/// traffic), real round trips decide, and the answer is one of five states with a reason.
///
/// ```swift
/// let reachability = Reachability(configuration: .init(probeMode: .parallel, timeout: .seconds(5)))
/// let status = await reachability.check()          // one round now, no hysteresis
/// print(status.state, status.reason?.label ?? "", status.isReachable)
/// for await status in reachability.statusStream {  // continuous rounds, any number of subscribers
///     print(status.state, status.reason?.label ?? "", status.connectionType, status.isReachable)
/// }
/// ```
///
/// `check()` runs one round at once. `statusStream` starts monitoring when the first subscriber
/// starts iterating (rounds every `interval`, faster while not `full`, at once after a path
/// change, with hysteresis) and stops it when the last one goes. Not for: probing from inside
/// another network namespace than the caller's.
public final class Reachability: Sendable {
    /// What to probe and how the results combine.
    public struct Configuration: Sendable {
        /// The probes each round runs.
        public var probes: [Probe]
        /// How their results combine into the verdict.
        public var probeMode: ProbeMode
        /// The deadline of each probe.
        public var timeout: Duration
        /// Time between rounds while monitoring.
        public var interval: Duration
        /// Interfaces every probe also runs bound to, each with its own verdict (`status.uplinks`).
        public var uplinks: [String]
        /// Watch links, addresses and routes over netlink; off: the probes alone decide.
        public var pathMonitoring: Bool
        /// Let answers from loopback, on-link addresses and the gateway prove `full` (labs and
        /// tests whose "internet" is on this host; see docs/evidence.md). Off.
        public var trustsLocalTargets = false
        /// Where the library's log goes (``ReachabilityLogRecord``); nil, the default: nowhere.
        public var log: (@Sendable (ReachabilityLogRecord) -> Void)?
        /// The lowest level handed to `log`. `info`.
        public var logLevel: ReachabilityLogRecord.Level = .info

        /// The seed's configuration: an HTTP check of `httpProbeURL` and an ICMP echo to
        /// `icmpHost`, in parallel. A URL of yours answers as the seed's contract says: any
        /// status in 200–399 counts; a redirect to another host, a 511, a public name answered
        /// from a private address and a trusted certificate for another name are portal
        /// signals. A well-known check URL (`Probe.defaultHTTPURL` and the other systems'
        /// `generate_204`, Apple's, Microsoft's, Firefox's, NetworkManager's) must give its
        /// check's answer: a login page in its place is a portal. Over plain HTTP a 200–399 answer cannot prove the internet by itself (a
        /// portal's own page answers so too); `https://` or a check URL can (docs/library.md).
        public init(
            probeMode: ProbeMode = .parallel, timeout: Duration = Configuration.defaultTimeout,
            httpProbeURL: String = Probe.defaultHTTPURL,
            icmpHost: String = Probe.defaultICMPHost, interval: Duration = Configuration.defaultInterval,
            pathMonitoring: Bool = true
        ) {
            self.init(
                probes: [.http(httpProbeURL, expectation: .forCallersURL(httpProbeURL)), .icmp(icmpHost)],
                probeMode: probeMode, timeout: timeout,
                interval: interval,
                pathMonitoring: pathMonitoring)
        }

        /// Any probes (HTTP with expectations, ICMP, DNS, TCP) and uplinks.
        public init(
            probes: [Probe], probeMode: ProbeMode = .parallel, timeout: Duration = Configuration.defaultTimeout,
            interval: Duration = Configuration.defaultInterval,
            uplinks: [String] = [], pathMonitoring: Bool = true
        ) {
            self.probes = probes
            self.probeMode = probeMode
            self.timeout = timeout
            self.interval = interval
            self.uplinks = uplinks
            self.pathMonitoring = pathMonitoring
        }

        /// The exporter's time between rounds, 5 s (one home: the scheduler's settings).
        public static let defaultInterval = MonitorSettings().interval
        /// The exporter's deadline of each probe, 3 s (one home: the scheduler's settings).
        public static let defaultTimeout = MonitorSettings().timeout

        /// The exporter's built-in probe set (`Probe.defaultSet`): public endpoints.
        public static var `default`: Configuration { Configuration(probes: Probe.defaultSet) }

        /// What cannot run as configured (each such probe fails every round with the reason; an
        /// uplink with an invalid name is left out); empty when everything can.
        public var problems: [String] {
            probes.compactMap { p in p.problem.map { "\(p.name): \($0)" } }
                + uplinks.compactMap { u in
                    (InterfaceName.problem(u) ?? Scope.reservedUplinkProblem(u)).map {
                        "uplink \(u.debugDescription): an interface name \($0)"
                    }
                }
        }
    }

    /// The configuration this instance was created with.
    public let configuration: Configuration
    /// One instance with `Configuration.default`, created on first use.
    public static let shared = Reachability(configuration: .default)

    private let core: ReachabilityCore
    private let logger: Logger?
    private let streaming = Mutex<(subscribers: Int, run: Task<Void, Never>?)>((0, nil))

    /// An instance that probes as `configuration` says; nothing runs until `check()` or a
    /// subscriber of `statusStream`.
    public init(configuration: Configuration) {
        self.configuration = configuration
        var settings = MonitorSettings()
        settings.interval = configuration.interval
        settings.timeout = configuration.timeout
        settings.uplinks = configuration.uplinks.filter {
            InterfaceName.problem($0) == nil && Scope.reservedUplinkProblem($0) == nil
        }
        settings.verdict = VerdictSettings(
            policy: configuration.probeMode.policy, trustLocalTargets: configuration.trustsLocalTargets)
        // Without netlink (a sandbox), the probes alone decide.
        let path = PathWatch(enabled: configuration.pathMonitoring)
        let specs = configuration.probes.map(\.spec)
        core = ReachabilityCore(path: path, probes: specs, settings: settings)
        logger = configuration.log.map { Logger(level: configuration.logLevel, hook: $0) }
        if let logger { Self.logStart(configuration, path: path, specs: specs, logger: logger) }
    }

    deinit {
        streaming.withLock { $0.run?.cancel() }
    }

    /// Runs one round now (every probe at once) and returns its verdict, without hysteresis.
    public func check() async -> ReachabilityStatus {
        let status = await core.check()
        logger?.debug(
            "checked", ("state", status.state.rawValue), ("reason", status.reason?.label ?? ""),
            ("connection", status.connectionType.rawValue))
        return status
    }

    /// The latest status of the monitoring rounds, or nil before the first.
    public var current: ReachabilityStatus? { core.monitor.current }

    /// A status per round for as long as the caller iterates it (a slow subscriber sees the
    /// latest). The first subscriber starts monitoring; it stops when the last one goes.
    public var statusStream: AsyncStream<ReachabilityStatus> {
        let (stream, continuation) = AsyncStream<ReachabilityStatus>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let updates = core.monitor.updates()
        let forward = Task {
            for await status in updates { continuation.yield(status) }
            continuation.finish()
        }
        streaming.withLock { s in
            s.subscribers += 1
            if s.run == nil {
                s.run = Task { [core, logger] in
                    guard let logger else { return await core.monitor.run() }
                    async let changes: Void = Self.logChanges(core.monitor.updates(), logger)
                    await core.monitor.run()
                    _ = await changes
                }
            }
        }
        continuation.onTermination = { [weak self] _ in
            forward.cancel()
            self?.streaming.withLock { s in
                s.subscribers -= 1
                if s.subscribers == 0 {
                    s.run?.cancel()
                    s.run = nil
                }
            }
        }
        return stream
    }

    /// Whether monitoring rounds are running (some subscriber iterates `statusStream`).
    package var isMonitoring: Bool { streaming.withLock { $0.run != nil } }
}

/// How probe results combine into the verdict (the seed's modes, plus a quorum).
public enum ProbeMode: Sendable, Equatable {
    /// Any success from beyond the local network means `full` (the seed's default).
    case parallel
    /// Only HTTP(S) probes count.
    case httpOnly
    /// Only ICMP probes count.
    case icmpOnly
    /// At least this many probes must succeed.
    case quorum(Int)

    package var policy: VerdictPolicy {
        switch self {
        case .parallel: .parallel
        case .httpOnly: .http
        case .icmpOnly: .icmp
        case .quorum(let n): .quorum(minimum: max(1, n), fraction: nil)
        }
    }
}
