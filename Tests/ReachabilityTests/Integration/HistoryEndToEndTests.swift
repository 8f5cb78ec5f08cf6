import Foundation
import Glibc
import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// The built binary with `--history.dir` against loopback targets, the `history` subcommand on
/// what it wrote, and a SIGKILL mid-run followed by a restart.
@Suite(.serialized) struct HistoryEndToEndTests {
    static func value(_ metrics: String, _ series: String) -> Double? {
        for line in metrics.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }

    /// Scrapes until `series` reaches `at least`; returns that scrape.
    func waitFor(_ exporter: ExporterProcess, _ series: String, atLeast: Double, timeout: Double = 20) throws -> String
    {
        let deadline = Date().addingTimeInterval(timeout)
        var last = ""
        while Date() < deadline {
            last = try exporter.get("/metrics").body
            if let v = Self.value(last, series), v >= atLeast { return last }
            usleep(50_000)
        }
        throw TestFailure(
            "\(series) did not reach \(atLeast) in \(timeout) s: \(last.split(separator: "\n").filter { $0.hasPrefix("reachability_history") })"
        )
    }

    static func decodedLines(_ dir: ScratchDirectory) -> [HistoryRecord] {
        dir.files.flatMap { dir.lines($0) }.filter { !$0.isEmpty }.compactMap {
            try? HistoryRecord.decode(Array($0.utf8))
        }
    }

    @Test func theExporterWritesHistoryAndTheSubcommandReportsIt() throws {
        let listener = try TCPTestListener()
        defer { listener.stop() }
        let dir = ScratchDirectory()
        let exporter = try ExporterProcess([
            "--web.listen-address=127.0.0.1:0", "--no-path.monitor", "--probe.trust-local-targets",
            "--probe.tcp=127.0.0.1:9", "--probe.tcp=127.0.0.1:\(listener.address.port)", "--probe.interval=200ms",
            "--probe.timeout=100ms", "--history.dir=\(dir.path)",
        ])
        try exporter.waitListening()
        // start, transition, rounds
        let m = try waitFor(exporter, "reachability_history_records_written_total", atLeast: 8)
        for name in [
            "reachability_history_write_errors_total", "reachability_history_dropped_records_total",
            "reachability_history_corrupt_records_total",
        ] {
            #expect(Self.value(m, name) == 0, "\(name)")
        }
        #expect((Self.value(m, "reachability_history_bytes") ?? 0) > 500)
        #expect(Self.value(m, "reachability_history_files") == 1)
        #expect(Self.value(m, "reachability_history_coverage_ratio{window=\"1h\"}").map { $0 > 0 && $0 < 0.01 } == true)
        #expect(Self.value(m, "reachability_availability_ratio{window=\"1h\"}") == 1)
        try Promtool.checkMetrics(m)
        #expect(try exporter.stop().status == 0)

        let records = Self.decodedLines(dir)
        guard case .start(let start)? = records.first, case .stop? = records.last else {
            Issue.record("\(records.prefix(2)) … \(records.suffix(1))")
            return
        }
        #expect(start.interval == 0.2)
        let rounds = records.compactMap { r -> RoundRecord? in if case .round(let x) = r { x } else { nil } }
        #expect(rounds.count >= 5)
        #expect(rounds.allSatisfy { $0.overall == Verdict(.full) && $0.probes.count == 2 })
        #expect(rounds.first?.probes.map(\.status) == [.failure, .success])
        #expect(rounds.first?.probes.first?.reason == .refused)
        #expect(
            records.contains(
                .transition(
                    TransitionRecord(
                        time: rounds[0].since, scope: .overall, from: .unknown, to: Verdict(.full),
                        fault: Fault(.target, "1 of 2 targets fail: 127.0.0.1:9 (refused)")))))

        let json = try ExporterProcess.run(["history", "--history.dir=\(dir.path)", "--since=1h", "--output=json"])
        #expect(json.status == 0, "\(json.stderr)")
        let report = try #require(JSONValue.parse(Array(json.stdout.utf8.dropLast())), "\(json.stdout)")
        #expect(report["records"]?["rounds"]?.number == Double(rounds.count))
        #expect(report["availability"]?.number == 1)
        #expect(report["outages"] == .array([]))
        let table = try ExporterProcess.run(["history", "--history.dir=\(dir.path)"])
        #expect(table.status == 0)
        #expect(table.stdout.contains("Outages (0):\n  none\n"), "\(table.stdout)")
        let usage = try ExporterProcess.run(["history", "--output=xml", "--history.dir=\(dir.path)"])
        #expect(usage.status == 64)
        #expect(usage.stderr.contains("invalid value \"xml\" for flag '--output'"))
        #expect(try ExporterProcess.run(["history"]).status == 64)
    }

    @Test func aReadOnlyHistoryDirectoryDoesNotStopTheExporter() throws {
        let mount = try ScratchMount(options: "size=64k,ro")
        let exporter = try ExporterProcess([
            "--web.listen-address=127.0.0.1:0", "--no-path.monitor", "--probe.tcp=127.0.0.1:9",
            "--probe.interval=200ms", "--probe.timeout=100ms", "--history.dir=\(mount.path)",
        ])
        try exporter.waitListening()
        let m = try waitFor(exporter, "reachability_history_write_errors_total", atLeast: 3)
        #expect((Self.value(m, "reachability_rounds_total") ?? 0) >= 1)
        #expect(Self.value(m, "reachability_history_records_written_total") == 0)
        #expect(exporter.stderr.components(separatedBy: "history write failed").count == 2, "\(exporter.stderr)")
        #expect(try exporter.stop().status == 0)
    }

    @Test(arguments: [
        (
            "--history.max-file-size=12XB",
            "invalid value \"12XB\" for flag '--history.max-file-size': unknown unit \"XB\""
        ),
        ("--history.max-file-size=1KiB", "invalid value for flag '--history.max-file-size': must be at least 4KiB"),
        ("--history.retention=10m", "invalid value for flag '--history.retention': must be at least 1h"),
        (
            "--history.max-total-size=1MiB",
            "invalid value for flag '--history.max-total-size': must be at least --history.max-file-size (64MiB)"
        ),
        ("--history.dir=", "invalid value \"\" for flag '--history.dir': expected a directory"),
    ])
    func badHistoryFlagsAreUsageErrors(flag: String, message: String) throws {
        let r = try ExporterProcess.run(["--probe.tcp=127.0.0.1:9", "--history.dir=/nonexistent/never-used", flag])
        #expect(r.status == 64)
        #expect(r.stderr.contains(message), "\(r.stderr)")
    }

    @Test func sigkillMidRunThenRestartKeepsEveryCompleteRecordAndTheState() throws {
        let dir = ScratchDirectory()
        let args = [
            "--web.listen-address=127.0.0.1:0", "--no-path.monitor", "--probe.tcp=127.0.0.1:9",
            "--probe.interval=100ms",
            "--probe.timeout=50ms", "--probe.fast-recheck=0", "--history.dir=\(dir.path)",
        ]
        let first = try ExporterProcess(args)
        try first.waitListening()
        let m = try waitFor(first, "reachability_history_records_written_total", atLeast: 10)
        let since = try #require(Self.value(m, "reachability_state_since_timestamp_seconds{scope=\"overall\"}"))
        #expect(m.contains("reachability_connectivity_info{scope=\"overall\",state=\"limited\",reason=\"refused\"} 1"))
        _ = try first.stop(signal: SIGKILL)

        // Whatever the kill left, plus half a record as a crash in the middle of a write would.
        let name = try #require(dir.files.last)
        var complete = dir.contents(name)
        if let nl = complete.lastIndex(of: 0x0A) { complete = Array(complete[...nl]) }
        let before = Self.decodedLines(dir).count
        #expect(before >= 10)
        dir.append(name, #"{"v":1,"type":"round","time":17"#)

        let second = try ExporterProcess(args)
        try second.waitListening()
        try second.waitForLog("restored state from history")
        #expect(second.stderr.contains("cut a torn final line"))
        let after = try waitFor(second, "reachability_rounds_total", atLeast: 2)
        #expect(Self.value(after, "reachability_history_corrupt_records_total") == 1)
        // Still limited, since the same moment (rounded to the millisecond in the file).
        let restored = try #require(Self.value(after, "reachability_state_since_timestamp_seconds{scope=\"overall\"}"))
        #expect(abs(restored - since) < 0.001, "\(restored) vs \(since)")
        #expect(Self.value(after, "reachability_state_transitions_total{from=\"unknown\",to=\"limited\"}") ?? 0 == 0)
        #expect(try second.stop().status == 0)

        // Every complete record is still there, in place; the torn bytes are gone.
        #expect(dir.contents(name).starts(with: complete))
        let records = Self.decodedLines(dir)
        #expect(records.count > before)
        var rounds = 0
        let stats = try HistoryReader.read(directory: dir.path) { if case .round = $0 { rounds += 1 } }
        #expect(stats.corrupt == 0)
        #expect(records.filter { if case .start = $0 { true } else { false } }.count == 2)
    }
}
