/// One record of the library's log, handed to ``Reachability/Configuration/log`` for the app to
/// route wherever it logs (its own logger, a file, the system journal). The library writes
/// nothing itself: without a hook there is no log.
///
/// What is logged: at start, what keeps the configuration from checking as asked (a probe that
/// cannot run, ICMP without permission, no path monitor, a probe set that can never prove the
/// internet); while monitoring, every change of state or reason (`info`); each `check()`'s
/// answer (`debug`).
public struct ReachabilityLogRecord: Sendable {
    /// Severity, ordered as promslog's (`debug` < `info` < `warn` < `error`).
    public enum Level: String, Sendable, CaseIterable, Comparable {
        /// Each `check()`'s answer.
        case debug
        /// A change of state or reason while monitoring.
        case info
        /// What keeps the configuration from checking as asked.
        case warn
        /// What keeps a kind of probe from running at all (ICMP without permission).
        case error

        /// Whether `a` is less severe than `b`.
        public static func < (a: Level, b: Level) -> Bool {
            allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
        }
    }

    /// The record's severity.
    public var level: Level
    /// What happened, one sentence without variable parts (`reachability changed`).
    public var message: String
    /// The variable parts, in order (`state`, `reason`, `err`…), as text.
    public var fields: [(key: String, value: String)]
    /// Where in the library it was logged (`Reachability.swift:120`).
    public var source: String

    /// The record as the exporter writes it, in promslog's logfmt, without the time (the app's
    /// logger stamps it): `level=WARN source=… msg="…" key=value`.
    public var logfmt: String {
        ([("level", level.rawValue.uppercased()), ("source", source), ("msg", message)] + fields)
            .map { "\($0.0)=\(Logger.logfmtValue($0.1))" }.joined(separator: " ")
    }

    package init(_ record: Logger.Record) {
        level = Level(rawValue: record.level.rawValue) ?? .error
        message = record.message
        source = record.source
        fields = record.fields.map { key, value in
            switch value {
            case .string(let s): (key, s)
            case .int(let n): (key, String(n))
            case .double(let x): (key, Logger.logfmtValue(.double(x)))
            case .bool(let b): (key, String(b))
            }
        }
    }
}

extension Logger {
    /// A logger that hands each record at or above `level` to `hook` (no time, no format).
    package init(level: ReachabilityLogRecord.Level, hook: @escaping @Sendable (ReachabilityLogRecord) -> Void) {
        self.init(level: LogLevel(rawValue: level.rawValue) ?? .info) { hook(ReachabilityLogRecord($0)) }
    }
}

extension Reachability {
    /// What the start of `configuration` should tell its log: the problems of its probes and
    /// uplinks, a path monitor that cannot run, ICMP without permission, a probe set that can
    /// never prove the internet.
    static func logStart(_ configuration: Configuration, path: PathWatch, specs: [ProbeSpec], logger: Logger) {
        // A URL's user information is a secret: never in a log (the exporter's rule).
        for problem in configuration.problems {
            logger.warn("cannot check as configured", ("err", Redaction.userinfo(in: problem)))
        }
        if let problem = path.problem { logger.warn("path monitor unavailable; probes alone decide", ("err", problem)) }
        if specs.contains(where: { $0.type == .icmp || $0.type == .mtu }) {
            do {
                _ = try ICMPEngine.shared.socketKind(family: .ipv4)
            } catch {
                logger.error("ICMP probes cannot run", ("err", error.description))
            }
        }
        let policy = configuration.probeMode.policy
        if let warning = ProbeSpec.evidenceWarning(specs, policy: policy) { logger.warn(warning) }
    }

    /// Logs each change of state or reason of `updates` until it ends or the task is cancelled.
    static func logChanges(_ updates: AsyncStream<ReachabilityStatus>, _ logger: Logger) async {
        var last: (ConnectivityState, VerdictReason?)?
        for await status in updates {
            guard last.map({ $0.0 != status.state || $0.1 != status.reason }) ?? true else { continue }
            last = (status.state, status.reason)
            logger.info(
                "reachability changed", ("state", status.state.rawValue), ("reason", status.reason?.label ?? ""),
                ("connection", status.connectionType.rawValue))
        }
    }
}
