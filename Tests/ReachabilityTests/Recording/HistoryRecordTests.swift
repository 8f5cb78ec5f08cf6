import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// The record format: golden lines, round trips, the strict decoders on hostile input, and the
/// fast path agreeing with the full decoder on every mutated line.
@Suite struct HistoryRecordTests {
    static let round = RoundRecord(
        time: 1_767_225_600.125, duration: 0.0523456, interval: 5, round: 42,
        overall: Verdict(.limited, reason: .probe(.timeout)),
        since: 1_767_225_590.5,
        families: [
            "ipv6": Verdict(.none, reason: .path(.noDefaultRoute)), "ipv4": Verdict(.limited, reason: .probe(.timeout)),
        ],
        uplinks: ["wlan0": Verdict(.full)],
        probes: [
            ProbeRecord(
                name: "127.0.0.1:9", type: .tcp, status: .failure, reason: .refused, duration: 0.000312,
                detail: "connect: Connection refused", address: "127.0.0.1"),
            ProbeRecord(
                name: "http://x/\"q\"", type: .http, target: "http://x/", interface: "wlan0", status: .success,
                duration: 0.01),
        ])

    @Test func goldenRoundLine() {
        let line = String(decoding: HistoryRecord.round(Self.round).encoded(), as: UTF8.self)
        #expect(
            line
                == #"{"v":1,"type":"round","time":1767225600.125,"duration":0.052346,"interval":5,"round":42,"state":"limited","reason":"timeout","since":1767225590.5,"families":{"ipv4":{"state":"limited","reason":"timeout"},"ipv6":{"state":"none","reason":"no_default_route"}},"uplinks":{"wlan0":{"state":"full"}},"probes":[{"name":"127.0.0.1:9","type":"tcp","status":"failure","reason":"refused","duration":0.000312,"detail":"connect: Connection refused","address":"127.0.0.1"},{"name":"http://x/\"q\"","target":"http://x/","type":"http","interface":"wlan0","status":"success","duration":0.01}]}"#
                + "\n")
    }

    @Test func goldenOtherLines() {
        func line(_ r: HistoryRecord) -> String { String(decoding: r.encoded(), as: UTF8.self) }
        #expect(
            line(
                .transition(
                    TransitionRecord(
                        time: 10.5, scope: .overall, from: Verdict(.full), to: Verdict(.limited, reason: .probe(.dns))))
            )
                == #"{"v":1,"type":"transition","time":10.5,"scope":"overall","from":"full","to":"limited","reason":"dns"}"#
                + "\n")
        #expect(
            line(.start(StartRecord(time: 7, interval: 0.5, version: "1.2.3", pid: 99)))
                == #"{"v":1,"type":"start","time":7,"interval":0.5,"version":"1.2.3","pid":99}"# + "\n")
        #expect(line(.stop(StopRecord(time: 8.25))) == #"{"v":1,"type":"stop","time":8.25}"# + "\n")
    }

    @Test func roundTripsThroughBothDecoders() throws {
        var expected = Self.round
        expected.duration = 0.052346  // six decimals are written
        let bytes = Array(HistoryRecord.round(Self.round).encoded().dropLast())
        #expect(try HistoryRecord.decode(bytes) == .round(expected))
        #expect(try HistoryLineScanner.scan(bytes) == .round(RoundSummary(expected)))
        let t = TransitionRecord(
            time: 3, scope: .uplink("eth0"), from: Verdict(.limited, reason: .unrecognized("x\u{1}\n")),
            to: Verdict(.full))
        #expect(try HistoryRecord.decode(Array(HistoryRecord.transition(t).encoded().dropLast())) == .transition(t))
    }

    @Test func detailIsCutOnACharacterBoundary() {
        let long = String(repeating: "é", count: 200)  // 400 bytes
        let p = ProbeRecord(name: "n", type: .dns, status: .failure, reason: .dns, duration: 1, detail: long)
        #expect(p.detail.utf8.count == 256)
        #expect(p.detail == String(repeating: "é", count: 128))
    }

    static let valid =
        #"{"v":1,"type":"round","time":100,"duration":0.5,"interval":5,"round":1,"state":"full","since":90,"probes":[]}"#

    @Test(arguments: [
        ("", "empty"),
        ("{", "unterminated"),
        (
            #"{"v":1,"type":"round","time":100,"duration":0.5,"interval":5,"round":1,"state":"full","since":90,"probes":[],}"#,
            "trailing comma"
        ),
        (#"{"v":1,"type":"round","time":NaN,"duration":0.5,"interval":5,"round":1,"state":"full","since":90}"#, "NaN"),
        (
            #"{"v":1,"type":"round","time":1e999,"duration":0.5,"interval":5,"round":1,"state":"full","since":90}"#,
            "infinite"
        ),
        (
            #"{"v":1,"type":"round","time":0100,"duration":0.5,"interval":5,"round":1,"state":"full","since":90}"#,
            "leading zero"
        ),
        (
            #"{"v":1,"type":"round","time":-5,"duration":0.5,"interval":5,"round":1,"state":"full","since":90}"#,
            "negative time"
        ),
        (
            #"{"v":1,"type":"round","time":1e12,"duration":0.5,"interval":5,"round":1,"state":"full","since":90}"#,
            "time out of range"
        ),
        (
            #"{"v":1,"type":"round","time":100,"duration":-1,"interval":5,"round":1,"state":"full","since":90}"#,
            "negative duration"
        ),
        (
            #"{"v":1,"type":"round","time":100,"duration":0.5,"interval":0,"round":1,"state":"full","since":90}"#,
            "zero interval"
        ),
        (
            #"{"v":1,"type":"round","time":100,"duration":0.5,"interval":5,"round":1,"state":"great","since":90}"#,
            "unknown state"
        ),
        (#"{"v":1,"type":"round","time":100,"duration":0.5,"interval":5,"round":1,"since":90}"#, "missing state"),
        (
            #"{"v":1,"type":"round","time":"100","duration":0.5,"interval":5,"round":1,"state":"full","since":90}"#,
            "time as text"
        ),
        (
            #"{"v":1,"type":"round","time":100,"time":101,"duration":0.5,"interval":5,"round":1,"state":"full","since":90}"#,
            "duplicate key"
        ),
        (
            #"{"v":1,"type":"round","time":100,"duration":0.5,"interval":5,"round":1,"state":"full","reason":7,"since":90}"#,
            "reason as number"
        ),
        (
            #"{"v":1,"type":"round","time":100,"duration":0.5,"interval":5,"round":1,"state":"full","since":90,"probes":[{"name":"a","type":"ftp","status":"success","duration":1}]}"#,
            "unknown probe type"
        ),
        (
            #"{"v":1,"type":"round","time":100,"duration":0.5,"interval":5,"round":1,"state":"full","since":90,"probes":[{"name":"a","type":"tcp","status":"success","duration":1,"reason":"bored"}]}"#,
            "unknown probe reason"
        ),
        (
            #"{"v":1,"type":"round","time":100,"duration":0.5,"interval":5,"round":1,"state":"full","since":90,"probes":[{"name":"a","type":"tcp","status":"success"}]}"#,
            "probe without duration"
        ),
        (
            #"{"v":1,"type":"round","time":100,"duration":0.5,"interval":5,"round":1,"state":"full","since":90,"families":{"ipv4":{"reason":"x"}}}"#,
            "family without state"
        ),
        (
            #"{"v":1,"type":"round","time":100,"duration":0.5,"interval":5,"round":1,"state":"full","since":90,"families":{"ipv4":{"state":"full"},"ipv4":{"state":"none"}}}"#,
            "duplicate family"
        ),
        (
            #"{"v":1,"type":"round","time":100,"duration":0.5,"interval":5,"round":1,"state":"full","since":90,"x":"\ud800"}"#,
            "lone surrogate"
        ),
        (
            #"{"v":1,"type":"round","time":100,"duration":0.5,"interval":5,"round":1,"state":"full","since":90,"x":"\q"}"#,
            "bad escape"
        ),
        (
            #"{"v":1,"type":"round","time":100,"duration":0.5,"interval":5,"round":1,"state":"full","since":90} {}"#,
            "two documents"
        ),
        (
            #"{"v":0,"type":"round","time":100,"duration":0.5,"interval":5,"round":1,"state":"full","since":90}"#,
            "version 0"
        ),
        // Found by a hostile review: one such line crash-looped the daemon at the first GET /.
        (
            #"{"v":1,"type":"round","time":100,"duration":0.5,"interval":5,"round":1,"state":"full","since":90,"probes":[{"name":"a","type":"tcp","status":"success","duration":1e18}]}"#,
            "probe duration beyond any deadline"
        ),
        (
            #"{"v":1,"type":"round","time":100,"duration":0.5,"interval":5,"round":1,"state":"full","since":90,"probes":[{"name":"a","type":"tcp","status":"success","duration":1e999}]}"#,
            "infinite probe duration"
        ),
        (#"[1,2,3]"#, "not an object"),
        (String(repeating: "[", count: 100) + String(repeating: "]", count: 100), "deep nesting"),
        (#"{"v":1,"type":"round","time":100,"duration":0.5,"interval":5,"round":1,"state":"full","since":90"#, "torn"),
    ])
    func corruptLinesAreRejectedByBothDecoders(line: String, why: String) {
        let bytes = Array(line.utf8)
        #expect(throws: HistoryDecodeError.self, "\(why): full") { try HistoryRecord.decode(bytes) }
        #expect(throws: HistoryDecodeError.self, "\(why): fast") { try HistoryLineScanner.scan(bytes) }
        if case .unsupportedVersion? = Self.error(bytes) { Issue.record("\(why) is corrupt, not a newer version") }
    }

    static func error(_ bytes: [UInt8]) -> HistoryDecodeError? {
        do {
            _ = try HistoryRecord.decode(bytes)
            return nil
        } catch { return error }
    }

    @Test func rawControlCharactersAndBadUTF8AreCorrupt() {
        for bad: [UInt8] in [[0x01], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82]] {
            let line =
                Array(
                    #"{"v":1,"type":"round","time":100,"duration":0.5,"interval":5,"round":1,"state":"full","since":90,"reason":""#
                        .utf8) + bad + Array(#""}"#.utf8)
            #expect(Self.error(line) == .corrupt("not valid JSON"), "\(bad)")
            #expect(throws: HistoryDecodeError.self) { try HistoryLineScanner.scan(line) }
        }
        let ok = Array(
            #"{"v":1,"type":"round","time":100,"duration":0.5,"interval":5,"round":1,"state":"full","since":90,"reason":"é€😀"}"#
                .utf8)
        #expect(Self.error(ok) == nil)
    }

    @Test func newerVersionsAndTypesAreSkippedNotCorrupt() throws {
        #expect(Self.error(Array(#"{"v":2,"type":"round","time":1}"#.utf8)) == .unsupportedVersion(2))
        #expect(Self.error(Array(#"{"v":1,"type":"probe_detail","time":1}"#.utf8)) == .unknownType("probe_detail"))
        // Unknown keys (a later minor addition) are ignored by both decoders, in any order.
        let extra = Array(
            #"{"v":1,"type":"round","extra":{"a":[1,{"b":null}]},"since":90,"state":"full","round":1,"interval":5,"duration":0.5,"time":100}"#
                .utf8)
        guard case .round(let r) = try HistoryLineScanner.scan(extra) else {
            Issue.record("not a round")
            return
        }
        #expect(r.time == 100 && r.since == 90 && r.overall == Verdict(.full))
    }

    /// Random mutations of valid lines: the fast path and the full decoder must agree on every
    /// line (valid or not) and on what a valid one says. Bounded and seeded.
    @Test func fastPathAgreesWithFullDecoderOnMutatedLines() async {
        let seeds = [Self.valid, String(decoding: HistoryRecord.round(Self.round).encoded().dropLast(), as: UTF8.self)]
            .map { Array($0.utf8) }
        let disagreements = await runOffCooperativePool { () -> [String] in
            var rng = SplitMix64(seed: 7)
            var out: [String] = []
            let alphabet = Array(#"{}[]:,"\ 0123456789.eE-+tfnulrsaxé"#.utf8)
            for i in 0..<20_000 {
                var line = seeds[i % seeds.count]
                for _ in 0..<(1 + Int(rng.next() % 3)) {
                    let at = Int(rng.next() % UInt64(line.count))
                    switch rng.next() % 3 {
                    case 0: line[at] = alphabet[Int(rng.next() % UInt64(alphabet.count))]
                    case 1: line.remove(at: at)
                    default: line.insert(alphabet[Int(rng.next() % UInt64(alphabet.count))], at: at)
                    }
                }
                let full: HistoryEvent? = line.withUnsafeBufferPointer { p in try? HistoryLineScanner.full(p) }
                let fast = try? HistoryLineScanner.scan(line)
                if full != fast { out.append(String(decoding: line, as: UTF8.self)) }
            }
            return out
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(3))")
    }

    @Test func packedWordsMatchTheirText() {
        let table: [(UInt64, StaticString)] = [
            (Word.time, "time"), (Word.duration, "duration"), (Word.interval, "interval"), (Word.round, "round"),
            (Word.state, "state"), (Word.reason, "reason"), (Word.since, "since"), (Word.families, "families"),
            (Word.uplinks, "uplinks"), (Word.probes, "probes"), (Word.name, "name"), (Word.type, "type"),
            (Word.status, "status"), (Word.target, "target"), (Word.detail, "detail"), (Word.address, "address"),
            (Word.full, "full"), (Word.limited, "limited"), (Word.noneWord, "none"), (Word.portal, "portal"),
            (Word.unknown, "unknown"), (Word.success, "success"), (Word.failure, "failure"),
        ]
        for (word, text) in table { #expect(word == JSONScanner.pack(text), "\(text)") }
        #expect(Set(ProbeType.allCases.map(\.rawValue)) == ["icmp", "http", "https", "dns", "tcp", "mtu", "doh"])
        #expect(Word.probeTypes == ProbeType.allCases.map { JSONScanner.pack(text: $0.rawValue) }, "every type's word")
        #expect(
            JSONScanner.pack(text: "icmp") == JSONScanner.pack("icmp") && JSONScanner.pack(text: "123456789") == nil)
        #expect(Set(ConnectivityState.allCases.map(\.rawValue)) == ["unknown", "none", "portal", "limited", "full"])
    }

    @Test func byteSizes() throws {
        #expect(try ByteSizeParser.parse("64MiB") == 64 << 20)
        #expect(try ByteSizeParser.parse("1GB") == 1_000_000_000)
        #expect(try ByteSizeParser.parse("4096") == 4096)
        #expect(throws: ByteSizeParser.Invalid.self) { try ByteSizeParser.parse("12 MB") }
        #expect(throws: ByteSizeParser.Invalid.self) { try ByteSizeParser.parse("99999999999TiB") }
        #expect(ByteSizeParser.format(64 << 20) == "64MiB")
    }

    @Test func utcTimes() {
        #expect(UTCTime.rfc3339(1_767_225_600) == "2026-01-01T00:00:00Z")
        #expect(UTCTime.rfc3339(951_825_599.9) == "2000-02-29T11:59:59Z")
        #expect(UTCTime.compact(1_767_225_600.123) == "20260101T000000.123Z")
        #expect(UTCTime.parseCompact("20260101T000000.123Z") == 1_767_225_600.123)
        #expect(UTCTime.parseCompact("20250229T000000.000Z") == nil)  // not a leap year
        for t in stride(from: 0.0, to: 4e9, by: 12_345_678.901) {
            let parsed = UTCTime.parseCompact(Substring(UTCTime.compact(t)))
            #expect(parsed.map { abs($0 - t) < 0.0011 } == true, "\(t)")
        }
    }
}

/// Fuzzing found these: numbers beyond Int in `v` and `pid` must be errors or data, not traps.
@Suite struct HistoryRecordHugeNumberTests {
    @Test func hugeVersionIsUnsupportedNotATrap() {
        #expect(throws: HistoryDecodeError.self) {
            _ = try HistoryRecord.decode(Array(#"{"v":1e300,"type":"stop","time":1700000000}"#.utf8))
        }
    }

    @Test func hugePidIsData() throws {
        let r = try HistoryRecord.decode(
            Array(#"{"v":1,"type":"start","time":1700000000,"interval":5,"version":"x","pid":1e300}"#.utf8))
        guard case .start(let s) = r else {
            Issue.record("not a start record: \(r)")
            return
        }
        #expect(s.pid == 0)
    }
}
