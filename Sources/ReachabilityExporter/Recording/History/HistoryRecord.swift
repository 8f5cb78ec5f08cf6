import ReachabilityVerdict

/// One line of a history file (JSON Lines, format version 1; see docs/history-format.md).
///
/// Encoding writes keys in a fixed, documented order, one record per line, newline-terminated.
/// `decode(_:)` is the strict full decoder: any invalid JSON, wrong type, unknown state or
/// missing required field is an error; unknown keys are ignored (later minor additions), a
/// newer major version is reported as such.
package enum HistoryRecord: Sendable, Equatable {
    case round(RoundRecord)
    case transition(TransitionRecord)
    case start(StartRecord)
    case stop(StopRecord)

    /// The `v` field of every record this build writes; lines with a higher `v` are skipped.
    package static let formatVersion = 1
    /// Lines longer than this are corrupt by definition (a record is typically under 2 KB).
    package static let maxLineBytes = 1 << 20
    /// Probe details are cut to this many bytes (on a character boundary) so lines stay short
    /// whatever a remote server sends.
    package static let maxDetailBytes = 256
    /// Times outside this range (1970 to the year 5138) are corrupt: they would only make
    /// reports walk absurd spans.
    package static let validTimes: ClosedRange<Double> = 0...1e11
    /// Durations and intervals above this (about 11.6 days) are corrupt.
    package static let maxSeconds = 1e6

    /// When the record was made, Unix seconds.
    package var time: Double {
        switch self {
        case .round(let r): r.time
        case .transition(let t): t.time
        case .start(let s): s.time
        case .stop(let s): s.time
        }
    }

    /// The line, with its trailing newline.
    package func encoded() -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.field("v", Self.formatVersion)
        switch self {
        case .round(let r): r.encode(into: &w)
        case .transition(let t): t.encode(into: &w)
        case .start(let s): s.encode(into: &w)
        case .stop(let s):
            w.field("type", "stop")
            w.field("time", s.time, decimals: 3)
        }
        w.endObject()
        w.bytes.append(0x0A)
        return w.bytes
    }

    /// Decodes one line (without its newline) strictly.
    package static func decode(_ line: some Collection<UInt8>) throws(HistoryDecodeError) -> HistoryRecord {
        guard line.count <= maxLineBytes else { throw .corrupt("line too long") }
        guard let value = JSONValue.parse(line) else { throw .corrupt("not valid JSON") }
        guard case .object = value else { throw .corrupt("not an object") }
        guard let v = value["v"]?.number, v == v.rounded(), v >= 1 else { throw .corrupt("missing or bad v") }
        // Int(exactly:): a version or pid beyond Int (found by fuzzing) is data, not a trap.
        guard v <= Double(formatVersion) else { throw .unsupportedVersion(Int(exactly: v) ?? Int.max) }
        guard let type = value["type"]?.string else { throw .corrupt("missing type") }
        let time = try number(value, "time")
        guard validTimes.contains(time) else { throw .corrupt("time out of range") }
        switch type {
        case "round": return .round(try RoundRecord(decoding: value, time: time))
        case "transition": return .transition(try TransitionRecord(decoding: value, time: time))
        case "start":
            let interval = try number(value, "interval")
            guard interval > 0, interval <= maxSeconds else { throw .corrupt("bad interval") }
            return .start(
                StartRecord(
                    time: time, interval: interval,
                    version: value["version"]?.string ?? "", pid: Int(exactly: value["pid"]?.number ?? 0) ?? 0))
        case "stop": return .stop(StopRecord(time: time))
        default: throw .unknownType(type)
        }
    }

    /// A finite number (JSON has no NaN, but `1e999` reads as infinity).
    static func number(_ object: JSONValue, _ key: String) throws(HistoryDecodeError) -> Double {
        guard let n = object[key]?.number, n.isFinite else { throw .corrupt("missing or bad \(key)") }
        return n
    }

    static func verdict(_ object: JSONValue?, stateKey: String = "state", reasonKey: String = "reason")
        throws(HistoryDecodeError) -> Verdict
    {
        guard let object, let text = object[stateKey]?.string, let state = ConnectivityState(rawValue: text) else {
            throw .corrupt("missing or bad \(stateKey)")
        }
        switch object[reasonKey] {
        case nil, .null?: return Verdict(state)
        case .string(let r)?: return Verdict(state, reason: VerdictReason(label: r))
        default: throw .corrupt("bad \(reasonKey)")
        }
    }

    static func writeVerdict(
        _ v: Verdict, into w: inout JSONWriter, stateKey: String = "state", reasonKey: String = "reason"
    ) {
        w.field(stateKey, v.state.rawValue)
        if let r = v.reason { w.field(reasonKey, r.label) }
    }
}

/// Why a line was not decoded.
package enum HistoryDecodeError: Error, Equatable {
    /// Not valid JSON, or not a valid record: counted as corrupt and skipped.
    case corrupt(String)
    /// Written by a newer format version: skipped, not counted as corrupt.
    case unsupportedVersion(Int)
    /// A record type this build does not know (a later minor addition): skipped.
    case unknownType(String)
}

/// A `start` record: the exporter began writing (after a restart, the time before it is a gap).
package struct StartRecord: Sendable, Equatable {
    package var time: Double
    /// The configured probe interval, seconds.
    package var interval: Double
    package var version: String
    package var pid: Int

    package init(time: Double, interval: Double, version: String = BuildInfo.version, pid: Int = 0) {
        self.time = time
        self.interval = interval
        self.version = version
        self.pid = pid
    }

    func encode(into w: inout JSONWriter) {
        w.field("type", "start")
        w.field("time", time, decimals: 3)
        w.field("interval", interval, decimals: 3)
        w.field("version", version)
        w.field("pid", pid)
    }
}

/// A `stop` record: a graceful shutdown; coverage ends here.
package struct StopRecord: Sendable, Equatable {
    package var time: Double
    package init(time: Double) { self.time = time }
}

/// A `transition` record: one scope's verdict changed.
package struct TransitionRecord: Sendable, Equatable {
    package var time: Double
    /// `overall`, `ipv4`, `ipv6` or an uplink interface name.
    package var scope: Scope
    package var from: Verdict
    package var to: Verdict
    /// Where the path broke when the scope changed to `to` (`location`, `fault`): absent in
    /// records written before fault localization, and for an unknown `to`.
    package var fault: Fault?

    package init(time: Double, scope: Scope, from: Verdict, to: Verdict, fault: Fault? = nil) {
        self.time = time
        self.scope = scope
        self.from = from
        self.to = to
        self.fault = fault
    }

    init(decoding v: JSONValue, time: Double) throws(HistoryDecodeError) {
        guard let scope = v["scope"]?.string else { throw .corrupt("missing scope") }
        var fault: Fault?
        switch v["location"] {
        case nil, .null?: break
        case .string(let text)?:
            // A location this build does not know (a later addition) is left out, not corrupt.
            if let location = FaultLocation(rawValue: text) {
                fault = Fault(location, ProbeRecord.cut(v["fault"]?.string ?? ""))
            }
        default: throw .corrupt("bad location")
        }
        self.init(
            time: time, scope: Scope(label: scope),
            from: try HistoryRecord.verdict(v, stateKey: "from", reasonKey: "from_reason"),
            to: try HistoryRecord.verdict(v, stateKey: "to", reasonKey: "reason"), fault: fault)
    }

    func encode(into w: inout JSONWriter) {
        w.field("type", "transition")
        w.field("time", time, decimals: 3)
        w.field("scope", scope.label)
        HistoryRecord.writeVerdict(from, into: &w, stateKey: "from", reasonKey: "from_reason")
        HistoryRecord.writeVerdict(to, into: &w, stateKey: "to", reasonKey: "reason")
        if let fault {
            w.field("location", fault.location.rawValue)
            if !fault.detail.isEmpty { w.field("fault", ProbeRecord.cut(fault.detail)) }
        }
    }
}
