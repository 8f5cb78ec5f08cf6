import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

@Suite struct CLITests {
    let parser = FlagParser([
        FlagSpec("web.listen-address", .value(default: ":10361"), help: "h"),
        FlagSpec("probe.http", .repeated, help: "h"),
        FlagSpec("verbose", .bool(default: false), help: "h"),
        FlagSpec("interval", .value(default: "5s"), help: "h"),
    ])

    @Test func forms() throws {
        let f = try parser.parse([
            "--web.listen-address=127.0.0.1:1", "--probe.http", "http://a/", "--probe.http=http://b/", "--verbose",
            "--interval", "1m30s",
        ])
        #expect(f.string("web.listen-address") == "127.0.0.1:1")
        #expect(f.strings("probe.http") == ["http://a/", "http://b/"])
        #expect(f.bool("verbose"))
        #expect(try f.duration("interval") == .seconds(90))
        let g = try parser.parse(["--no-verbose"])
        #expect(!g.bool("verbose") && g.string("web.listen-address") == ":10361")
        #expect(try parser.parse(["-h"]).bool("help"))
    }

    @Test(arguments: [
        (["--nope"], "unknown long flag '--nope'"),
        (["--web.listen-address"], "expected argument for flag '--web.listen-address'"),
        (["-x"], "unknown short flag '-x'"),
        (["stray"], "unexpected argument \"stray\""),
        (["--verbose=maybe"], "invalid value \"maybe\" for flag '--verbose': expected true or false"),
    ])
    func errors(args: [String], message: String) {
        #expect(throws: UsageError(message)) { try parser.parse(args) }
    }

    @Test func typedValueErrorsNameTheFlag() throws {
        let f = try parser.parse(["--interval=5parsecs"])
        #expect(
            throws: UsageError(
                "invalid value \"5parsecs\" for flag '--interval': unknown unit \"parsecs\" (use ms, s, m, h, d, w, y)")
        ) { try f.duration("interval") }
    }

    @Test(arguments: [
        ("500ms", 500), ("5s", 5000), ("1m30s", 90000), ("2h", 7_200_000), ("1d", 86_400_000), ("0", 0),
        ("1h0m1s", 3_601_000),
    ])
    func durations(text: String, ms: Int64) throws {
        #expect(try DurationParser.parse(text) == .milliseconds(ms))
    }

    @Test(arguments: ["", "5", "s", "1.5s", "5m1h", "1s1s", "-1s", "99999999999999999999s"])
    func badDurations(text: String) {
        #expect(throws: DurationParser.Invalid.self) { try DurationParser.parse(text) }
    }

    @Test func durationFormatting() {
        #expect(DurationParser.format(.seconds(90)) == "1m30s")
        #expect(DurationParser.format(.milliseconds(500)) == "500ms")
        #expect(DurationParser.format(.zero) == "0s")
    }

    @Test func logLines() {
        let l = Logger.Record(
            time: "T", level: .warn, source: "Disk.swift:7", message: "disk full",
            fields: [("path", .string("/a b")), ("n", .int(3)), ("q", .string("x\"y")), ("ok", .bool(false))]
        ).line(.logfmt)
        #expect(
            l == "time=T level=WARN source=Disk.swift:7 msg=\"disk full\" path=\"/a b\" n=3 q=\"x\\\"y\" ok=false\n")
        let j = Logger.Record(
            time: "T", level: .info, source: "A.swift:1", message: "a\nb",
            fields: [("k", .string("\u{1}")), ("ms", .int(12)), ("r", .double(0.5)), ("x", .double(.infinity))]
        ).line(.json)
        #expect(
            j == "{\"time\":\"T\",\"level\":\"INFO\",\"source\":\"A.swift:1\",\"msg\":\"a\\nb\","
                + "\"k\":\"\\u0001\",\"ms\":12,\"r\":0.5,\"x\":\"+Inf\"}\n")
        #expect(Logger.source("Reachability/Commands/Exporter.swift", 42) == "Exporter.swift:42")
        #expect(Logger.rfc3339(seconds: 0, millis: 5) == "1970-01-01T00:00:00.005Z")
        #expect(Logger.rfc3339(seconds: 1_795_964_159, millis: 999) == "2026-11-29T14:55:59.999Z")
    }
}
