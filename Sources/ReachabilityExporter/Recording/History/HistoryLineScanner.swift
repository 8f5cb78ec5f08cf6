import ReachabilityVerdict

/// A scope's verdict inside a round summary.
package struct NamedVerdict: Sendable, Equatable {
    package var name: String
    package var verdict: Verdict
    package init(_ name: String, _ verdict: Verdict) {
        self.name = name
        self.verdict = verdict
    }
}

/// What the reports need from a round: times and verdicts, not probe results.
package struct RoundSummary: Sendable, Equatable {
    package var time: Double
    package var duration: Double
    package var interval: Double
    package var since: Double
    package var overall: Verdict
    /// Sorted by name.
    package var families: [NamedVerdict]
    /// Sorted by name.
    package var uplinks: [NamedVerdict]

    package var at: Double { time + duration }

    init(_ r: RoundRecord) {
        time = r.time
        duration = r.duration
        interval = r.interval
        since = r.since
        overall = r.overall
        families = r.families.sorted { $0.key < $1.key }.map { NamedVerdict($0.key, $0.value) }
        uplinks = r.uplinks.sorted { $0.key < $1.key }.map { NamedVerdict($0.key, $0.value) }
    }

    init() {
        time = 0
        duration = 0
        interval = 0
        since = 0
        overall = .unknown
        families = []
        uplinks = []
    }
}

/// Packed key and value words the fast path compares tokens with (`JSONScanner.pack`,
/// written out as literals so the comparisons compile to immediates; a test checks them).
enum Word {
    static var time: UInt64 { 0x656d_6974 }  // "time"
    static var duration: UInt64 { 0x6e6f_6974_6172_7564 }  // "duration"
    static var interval: UInt64 { 0x6c61_7672_6574_6e69 }  // "interval"
    static var round: UInt64 { 0x64_6e75_6f72 }  // "round"
    static var state: UInt64 { 0x65_7461_7473 }  // "state"
    static var reason: UInt64 { 0x6e6f_7361_6572 }  // "reason"
    static var since: UInt64 { 0x65_636e_6973 }  // "since"
    static var families: UInt64 { 0x7365_696c_696d_6166 }  // "families"
    static var uplinks: UInt64 { 0x73_6b6e_696c_7075 }  // "uplinks"
    static var probes: UInt64 { 0x7365_626f_7270 }  // "probes"
    static var name: UInt64 { 0x656d_616e }  // "name"
    static var type: UInt64 { 0x6570_7974 }  // "type"
    static var status: UInt64 { 0x7375_7461_7473 }  // "status"
    static var target: UInt64 { 0x7465_6772_6174 }  // "target"
    static var detail: UInt64 { 0x6c69_6174_6564 }  // "detail"
    static var address: UInt64 { 0x73_7365_7264_6461 }  // "address"
    static var full: UInt64 { 0x6c6c_7566 }  // "full"
    static var limited: UInt64 { 0x64_6574_696d_696c }  // "limited"
    /// Every probe type's name packed (`ProbeType`'s raw values, from the kinds' table); a name
    /// longer than eight bytes packs to 0 and is compared as text.
    static let probeTypes: [UInt64] = ProbeType.allCases.compactMap { JSONScanner.pack(text: $0.rawValue) }
    static var noneWord: UInt64 { 0x656e_6f6e }  // "none"
    static var portal: UInt64 { 0x6c61_7472_6f70 }  // "portal"
    static var unknown: UInt64 { 0x6e_776f_6e6b_6e75 }  // "unknown"
    static var success: UInt64 { 0x73_7365_6363_7573 }  // "success"
    static var failure: UInt64 { 0x65_7275_6c69_6166 }  // "failure"
}

/// A decoded line, reduced to what timelines need.
package enum HistoryEvent: Sendable, Equatable {
    case round(RoundSummary)
    case start(time: Double, interval: Double)
    case stop(time: Double)
    case transition(TransitionRecord)
}

/// The fast path for reading history: decodes `round` lines without building a JSON tree or
/// the probe records, still validating every byte as strictly as `HistoryRecord.decode` does
/// (the two agree on which lines are valid: a test checks it on mutated lines). Lines that are
/// not in the canonical layout (another type, an escaped or unknown key) go to the full decoder.
/// Keeps a small cache of the strings it has seen (scope names, reasons), so a month of rounds
/// does not allocate the same names millions of times; use one scanner per reading thread.
package struct HistoryLineScanner {
    private static let roundPrefix: StaticString = #"{"v":1,"type":"round","#
    /// Interned strings: their bytes back to back, where each ends, and the strings.
    private var internBytes: [UInt8] = []
    private var internEnds: [Int] = []
    private var internStrings: [String] = []

    package init() {}

    /// Decodes one line (without its newline).
    package mutating func scan(_ line: UnsafeBufferPointer<UInt8>) throws(HistoryDecodeError) -> HistoryEvent {
        guard line.count <= HistoryRecord.maxLineBytes else { throw .corrupt("line too long") }
        let prefix = Self.roundPrefix
        if line.count > prefix.utf8CodeUnitCount, let base = line.baseAddress,
            bytesEqual(base, prefix.utf8Start, prefix.utf8CodeUnitCount)
        {
            if let summary = fastRound(line) { return .round(summary) }
        }
        return try Self.full(line)
    }

    /// One line with a fresh scanner (tests, single lines).
    package static func scan(_ line: [UInt8]) throws(HistoryDecodeError) -> HistoryEvent {
        var scanner = HistoryLineScanner()
        return try line.withUnsafeBufferPointer { p throws(HistoryDecodeError) in try scanner.scan(p) }
    }

    static func full(_ line: UnsafeBufferPointer<UInt8>) throws(HistoryDecodeError) -> HistoryEvent {
        switch try HistoryRecord.decode(line) {
        case .round(let r): return .round(RoundSummary(r))
        case .start(let s): return .start(time: s.time, interval: s.interval)
        case .stop(let s): return .stop(time: s.time)
        case .transition(let t): return .transition(t)
        }
    }

    /// The token as a string, from the cache when it was seen before.
    private mutating func intern(_ s: JSONScanner, _ t: JSONStringToken) -> String {
        guard !t.escaped, t.range.count <= 64, let base = s.bytes.baseAddress else { return s.string(t) }
        let n = t.range.count
        let found: Int? = internBytes.withUnsafeBufferPointer { all -> Int? in
            var start = 0
            for (i, end) in internEnds.enumerated() {
                if end - start == n, bytesEqual(all.baseAddress! + start, base + t.range.lowerBound, n) { return i }
                start = end
            }
            return nil
        }
        if let found { return internStrings[found] }
        let string = s.string(t)
        if internStrings.count < 64 {
            internBytes.append(contentsOf: UnsafeBufferPointer(rebasing: s.bytes[t.range]))
            internEnds.append(internBytes.count)
            internStrings.append(string)
        }
        return string
    }

    /// Nil when the line must go to the full decoder (which then decides valid or corrupt).
    // Long on purpose: the start-up hot path over millions of lines; one pass, no calls per key.
    private mutating func fastRound(_ line: UnsafeBufferPointer<UInt8>) -> RoundSummary? {
        var s = JSONScanner(line)
        var out = RoundSummary()
        do {
            // Re-read the canonical prefix through the scanner so its state is right.
            try s.beginObject()
            var first = true
            guard let k1 = try s.nextKey(&first), s.equals(k1, "v"), try s.readNumber() == 1,
                let k2 = try s.nextKey(&first), s.equals(k2, "type"), s.equals(try s.readString(), "round")
            else { return nil }
            var seen: UInt16 = 0
            while let key = try s.nextKey(&first) {
                let bit: UInt16
                switch s.word(key) {
                case Word.time:
                    bit = 1
                    out.time = try s.readNumber()
                case Word.duration:
                    bit = 2
                    out.duration = try s.readNumber()
                case Word.interval:
                    bit = 4
                    out.interval = try s.readNumber()
                case Word.round:
                    bit = 8
                    let r = try s.readNumber()
                    guard r >= 0, r <= 9e15 else { return nil }
                case Word.state:
                    bit = 16
                    guard let st = try Self.state(&s) else { return nil }
                    out.overall.state = st
                case Word.reason:
                    bit = 32
                    out.overall.reason = try optionalReason(&s)
                case Word.since:
                    bit = 64
                    out.since = try s.readNumber()
                case Word.families:
                    bit = 128
                    guard let f = try scopes(&s) else { return nil }
                    out.families = f
                case Word.uplinks:
                    bit = 256
                    guard let u = try scopes(&s) else { return nil }
                    out.uplinks = u
                case Word.probes:
                    bit = 512
                    guard try Self.probes(&s) else { return nil }
                default: return nil  // unknown, longer or escaped: the full decoder decides
                }
                guard seen & bit == 0 else { return nil }
                seen |= bit
            }
            try s.expectEnd()
            guard seen & 0b101_1111 == 0b101_1111, HistoryRecord.validTimes.contains(out.time),
                HistoryRecord.validTimes.contains(out.since),
                out.duration >= 0, out.duration <= HistoryRecord.maxSeconds, out.interval > 0,
                out.interval <= HistoryRecord.maxSeconds
            else { return nil }
        } catch {
            return nil
        }
        return out
    }

    private static func state(_ s: inout JSONScanner) throws(JSONScanError) -> ConnectivityState? {
        switch s.word(try s.readString()) {
        case Word.full: return .full
        case Word.limited: return .limited
        case Word.noneWord: return ConnectivityState.none
        case Word.portal: return .portal
        case Word.unknown: return .unknown
        default: return nil
        }
    }

    private mutating func optionalReason(_ s: inout JSONScanner) throws(JSONScanError) -> VerdictReason? {
        if try s.readNull() { return nil }
        return VerdictReason(label: intern(s, try s.readString()))
    }

    /// `{"name":{"state":…,"reason":…},…}`; nil to fall back (duplicates, unusual keys).
    private mutating func scopes(_ s: inout JSONScanner) throws(JSONScanError) -> [NamedVerdict]? {
        if try s.readNull() { return [] }
        try s.beginObject()
        var out: [NamedVerdict] = []
        out.reserveCapacity(4)
        var first = true
        while let nameToken = try s.nextKey(&first) {
            guard !nameToken.escaped else { return nil }
            let name = intern(s, nameToken)
            guard !out.contains(where: { $0.name == name }) else { return nil }
            try s.beginObject()
            var inner = true
            var verdict = Verdict.unknown
            var seen = 0
            while let key = try s.nextKey(&inner) {
                let w = s.word(key)
                if w == Word.state, seen & 1 == 0 {
                    guard let st = try Self.state(&s) else { return nil }
                    verdict.state = st
                    seen |= 1
                } else if w == Word.reason, seen & 2 == 0 {
                    verdict.reason = try optionalReason(&s)
                    seen |= 2
                } else {
                    return nil
                }
            }
            guard seen & 1 == 1 else { return nil }
            out.append(NamedVerdict(name, verdict))
        }
        if out.count > 1 { out.sort { $0.name < $1.name } }
        return out
    }

    private static func isProbeType(_ s: JSONScanner, _ t: JSONStringToken) -> Bool {
        let w = s.word(t)
        return w != 0 ? Word.probeTypes.contains(w) : ProbeType(rawValue: s.string(t)) != nil
    }

    private static func isProbeStatus(_ s: JSONScanner, _ t: JSONStringToken) -> Bool {
        let w = s.word(t)
        return w == Word.success || w == Word.failure || w == Word.portal
    }

    /// Validates the probe array the way the full decoder would, without keeping anything.
    private static func probes(_ s: inout JSONScanner) throws(JSONScanError) -> Bool {
        if try s.readNull() { return true }
        try s.beginArray()
        var first = true
        while try s.nextElement(&first) {
            try s.beginObject()
            var inner = true
            var seen: UInt16 = 0
            while let key = try s.nextKey(&inner) {
                let bit: UInt16
                switch s.word(key) {
                case Word.name:
                    bit = 1
                    _ = try s.readString()
                case Word.type:
                    bit = 2
                    guard isProbeType(s, try s.readString()) else { return false }
                case Word.status:
                    bit = 4
                    guard isProbeStatus(s, try s.readString()) else { return false }
                case Word.duration:
                    bit = 8
                    guard (0...HistoryRecord.maxSeconds).contains(try s.readNumber()) else { return false }
                case Word.reason:
                    bit = 16
                    if try !s.readNull() {
                        guard FailureReason(rawValue: s.string(try s.readString())) != nil else { return false }
                    }
                case Word.target:
                    bit = 32
                    if try !s.readNull() { _ = try s.readString() }
                case Word.detail:
                    bit = 128
                    if try !s.readNull() { _ = try s.readString() }
                case Word.address:
                    bit = 256
                    if try !s.readNull() { _ = try s.readString() }
                default:
                    guard s.equals(key, "interface"), !key.escaped else { return false }
                    bit = 64
                    if try !s.readNull() { _ = try s.readString() }
                }
                guard seen & bit == 0 else { return false }
                seen |= bit
            }
            guard seen & 0b1111 == 0b1111 else { return false }
        }
        return true
    }
}
