import ReachabilityVerdict

/// A `round` record: one probe round's verdicts (overall, per family, per uplink) and the result
/// of every probe that ran in it.
package struct RoundRecord: Sendable, Equatable {
    /// When the round started, Unix seconds; the verdict holds from `time + duration`.
    package var time: Double
    package var duration: Double
    /// The configured probe interval, seconds: it bounds how long this round's verdict covers.
    package var interval: Double
    package var round: Int
    package var overall: Verdict
    /// When the overall verdict began, Unix seconds.
    package var since: Double
    /// Keyed by `ipv4` / `ipv6`.
    package var families: [String: Verdict]
    /// Keyed by interface name.
    package var uplinks: [String: Verdict]
    package var probes: [ProbeRecord]

    /// When the round's verdict was decided (`time + duration`).
    package var at: Double { time + duration }

    package init(
        time: Double, duration: Double, interval: Double, round: Int, overall: Verdict, since: Double,
        families: [String: Verdict] = [:], uplinks: [String: Verdict] = [:], probes: [ProbeRecord] = []
    ) {
        self.time = time
        self.duration = duration
        self.interval = interval
        self.round = round
        self.overall = overall
        self.since = since
        self.families = families
        self.uplinks = uplinks
        self.probes = probes
    }

    /// The record of a finished round; only probes that ran in this round are listed.
    package init(_ status: ReachabilityStatus, interval: Duration) {
        self.init(
            time: status.roundStarted, duration: status.roundDuration.seconds, interval: interval.seconds,
            round: status.round, overall: status.overall.verdict, since: status.overall.since,
            families: Dictionary(uniqueKeysWithValues: status.families.map { ($0.key.rawValue, $0.value.verdict) }),
            uplinks: status.uplinks.mapValues(\.verdict),
            probes: status.probes.filter { $0.at >= status.roundStarted }.map(ProbeRecord.init))
    }

    init(decoding v: JSONValue, time: Double) throws(HistoryDecodeError) {
        func scopes(_ key: String) throws(HistoryDecodeError) -> [String: Verdict] {
            guard let value = v[key], !value.isNull else { return [:] }
            guard case .object(let fields) = value else { throw .corrupt("bad \(key)") }
            var out: [String: Verdict] = [:]
            for (name, verdict) in fields { out[name] = try HistoryRecord.verdict(verdict) }
            return out
        }
        var probes: [ProbeRecord] = []
        if let value = v["probes"], !value.isNull {
            guard case .array(let items) = value else { throw .corrupt("bad probes") }
            for item in items { probes.append(try ProbeRecord(decoding: item)) }
        }
        let duration = try HistoryRecord.number(v, "duration")
        let interval = try HistoryRecord.number(v, "interval")
        guard duration >= 0, duration <= HistoryRecord.maxSeconds, interval > 0, interval <= HistoryRecord.maxSeconds
        else {
            throw .corrupt("bad duration or interval")
        }
        let round = try HistoryRecord.number(v, "round")
        guard round >= 0, round <= 9e15 else { throw .corrupt("bad round") }
        let since = try HistoryRecord.number(v, "since")
        guard HistoryRecord.validTimes.contains(since) else { throw .corrupt("since out of range") }
        self.init(
            time: time, duration: duration, interval: interval, round: Int(round),
            overall: try HistoryRecord.verdict(v), since: since,
            families: try scopes("families"), uplinks: try scopes("uplinks"), probes: probes)
    }

    func encode(into w: inout JSONWriter) {
        w.field("type", "round")
        w.field("time", time, decimals: 3)
        w.field("duration", duration, decimals: 6)
        w.field("interval", interval, decimals: 3)
        w.field("round", round)
        HistoryRecord.writeVerdict(overall, into: &w)
        w.field("since", since, decimals: 3)
        for (key, scopes) in [("families", families), ("uplinks", uplinks)] where !scopes.isEmpty {
            w.key(key)
            w.beginObject()
            for (name, verdict) in scopes.sorted(by: { $0.key < $1.key }) {
                w.key(name)
                w.beginObject()
                HistoryRecord.writeVerdict(verdict, into: &w)
                w.endObject()
            }
            w.endObject()
        }
        w.key("probes")
        w.beginArray()
        for p in probes { p.encode(into: &w) }
        w.endArray()
    }
}

/// One probe's result inside a round record.
package struct ProbeRecord: Sendable, Equatable {
    package var name: String
    package var type: ProbeType
    /// Omitted from the line when equal to `name`.
    package var target: String
    package var interface: String?
    package var status: ProbeStatus
    package var reason: FailureReason?
    /// Seconds.
    package var duration: Double
    /// Cut to `HistoryRecord.maxDetailBytes`; omitted when empty.
    package var detail: String
    package var address: String?

    package init(
        name: String, type: ProbeType, target: String? = nil, interface: String? = nil, status: ProbeStatus,
        reason: FailureReason? = nil, duration: Double, detail: String = "", address: String? = nil
    ) {
        self.name = name
        self.type = type
        self.target = target ?? name
        self.interface = interface
        self.status = status
        self.reason = reason
        self.duration = duration
        self.detail = ProbeRecord.cut(detail)
        self.address = address
    }

    init(_ o: ProbeOutcome) {
        self.init(
            name: o.name, type: o.type, target: o.target, interface: o.interface, status: o.result.status,
            reason: o.result.reason, duration: o.result.duration.seconds, detail: o.result.detail,
            address: o.result.address)
    }

    /// The longest prefix of whole characters within the byte limit.
    static func cut(_ s: String) -> String {
        guard s.utf8.count > HistoryRecord.maxDetailBytes else { return s }
        var out = ""
        for c in s {
            if out.utf8.count + c.utf8.count > HistoryRecord.maxDetailBytes { break }
            out.append(c)
        }
        return out
    }

    init(decoding v: JSONValue) throws(HistoryDecodeError) {
        guard let name = v["name"]?.string, let type = v["type"]?.string.flatMap(ProbeType.init(rawValue:)),
            let status = v["status"]?.string.flatMap(ProbeStatus.init(rawValue:))
        else { throw .corrupt("bad probe") }
        func optionalString(_ key: String) throws(HistoryDecodeError) -> String? {
            switch v[key] {
            case nil, .null?: return nil
            case .string(let s)?: return s
            default: throw .corrupt("bad probe \(key)")
            }
        }
        var reason: FailureReason?
        if let text = try optionalString("reason") {
            guard let r = FailureReason(rawValue: text) else { throw .corrupt("bad probe reason") }
            reason = r
        }
        let duration = try HistoryRecord.number(v, "duration")
        guard duration >= 0, duration <= HistoryRecord.maxSeconds else { throw .corrupt("bad probe duration") }
        self.init(
            name: name, type: type, target: try optionalString("target"), interface: try optionalString("interface"),
            status: status, reason: reason, duration: duration, detail: try optionalString("detail") ?? "",
            address: try optionalString("address"))
    }

    func encode(into w: inout JSONWriter) {
        w.beginObject()
        w.field("name", name)
        if target != name { w.field("target", target) }
        w.field("type", type.rawValue)
        if let interface { w.field("interface", interface) }
        w.field("status", status.rawValue)
        if let reason { w.field("reason", reason.rawValue) }
        w.field("duration", duration, decimals: 6)
        if !detail.isEmpty { w.field("detail", detail) }
        if let address { w.field("address", address) }
        w.endObject()
    }
}
