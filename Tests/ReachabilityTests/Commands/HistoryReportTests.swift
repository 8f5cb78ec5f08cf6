import Foundation
import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// The `history` report on a generated month with a known answer: outages, gaps, per-day and
/// window availability, and the three output formats.
@Suite struct HistoryReportTests {
    static let month: HistoryScenario = {
        var s = HistoryScenario()
        s.days = 30
        s.interval = 60
        s.probes = 1
        return s
    }()

    @Test func aGeneratedMonthGivesTheKnownOutagesAvailabilityAndGaps() throws {
        let dir = ScratchDirectory()
        let s = Self.month
        let rounds = try s.write(to: dir.path, maxFileSize: 4 << 20)
        #expect(dir.files.count >= 30)  // daily files, and size rotation within days
        let report = try OutageReport.build(directory: dir.path, since: .seconds(30 * 86_400), now: s.end)
        #expect(report.stats.rounds == rounds)
        #expect(report.stats.corrupt == 0)

        let overall = report.outages.filter { $0.scope == .overall }
        let expected = s.expectedOutages
        #expect(overall.count == expected.count)
        for (o, e) in zip(overall, expected) {
            #expect(abs(o.start - e.start) < 1e-6 && abs(o.end - e.end) < 1e-6, "\(o) vs \(e)")
            #expect(o.state == .limited && o.reason == .probe(.timeout) && o.ended == .recovered)
        }
        #expect(report.outages.filter { $0.scope == .family(.ipv4) }.count == expected.count)
        // ipv6 never had a route: one `none` period per stretch between gaps.
        let v6 = report.outages.filter { $0.scope == .family(.ipv6) }
        #expect(v6.count == s.days + 1)
        #expect(
            v6.dropLast().allSatisfy {
                $0.ended == .gap && $0.state == ConnectivityState.none && $0.reason == .path(.noDefaultRoute)
            })
        #expect(v6.last?.ended == .ongoing)

        #expect(report.days.count == s.days)
        for (i, d) in report.days.enumerated() {
            let gap = s.gapPerDay + (i == 0 ? s.roundDuration : 0)
            #expect(abs(d.down - s.downPerDay) < 1e-6, "day \(i): \(d)")
            #expect(abs(d.gap - gap) < 1e-6, "day \(i): \(d)")
            #expect(abs(d.up - (86_400 - s.downPerDay - gap)) < 1e-6, "day \(i): \(d)")
        }
        let covered = Double(s.days) * (86_400 - s.gapPerDay) - s.roundDuration
        #expect(abs(report.total.covered - covered) < 1e-6)
        #expect(abs(report.total.availability - (covered - Double(s.days) * s.downPerDay) / covered) < 1e-12)
        let week = try #require(report.windows.first { $0.label == "7d" }?.window)
        #expect(abs(week.covered - 7 * (86_400 - s.gapPerDay)) < 1e-6)
    }

    @Test func outputFormats() throws {
        let dir = ScratchDirectory()
        var s = HistoryScenario.small
        s.days = 1
        try s.write(to: dir.path)
        let report = try OutageReport.build(directory: dir.path, since: .seconds(86_400), now: s.end)

        let table = report.render(.table)
        #expect(table.contains("History from 2026-01-01T00:00:00Z to 2026-01-02T00:00:00Z (1d)"), "\(table)")
        #expect(
            table.contains(
                "START                 END                   DURATION  SCOPE    STATE    REASON            ENDED      BREAKS AT"
            ))
        #expect(
            table.contains(
                "2026-01-01T01:00:00Z  2026-01-01T01:05:00Z  5m        overall  limited  timeout           recovered"))
        #expect(table.contains("2026-01-01  98.600%       99.237%   23h29m  20m   11m\n"), "\(table)")

        let csv = report.render(.csv).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(csv.first == "start,end,duration_seconds,scope,state,reason,ended,location,fault")
        #expect(csv.contains("2026-01-01T01:00:00Z,2026-01-01T01:05:00Z,300,overall,limited,timeout,recovered,,"))
        #expect(csv.contains("day,availability,coverage,up_seconds,down_seconds,gap_seconds"))

        let json = try #require(JSONValue.parse(Array(report.render(.json).utf8.dropLast())))
        guard case .array(let outages)? = json["outages"], case .array(let days)? = json["days"] else {
            Issue.record("\(json)")
            return
        }
        #expect(outages.count == report.outages.count)
        #expect(outages.first?["start"]?.string == "2026-01-01T00:00:00Z")  // ipv6 none from the start
        #expect(days.count == 1)
        #expect(days.first?["down_seconds"]?.number == 1200)
        #expect(json["records"]?["rounds"]?.number == Double(report.stats.rounds))
    }

    @Test func aClockStepBackIsNotCountedTwiceInTheReport() throws {
        let dir = ScratchDirectory()
        let t0 = 1_767_225_600.0
        var store = HistoryStore(config: HistoryConfig(directory: dir.path))
        _ = try store.open(now: t0)
        // Rounds every 10 s to t0+100, then the clock steps back 60 s and goes on.
        var times = stride(from: 0.0, through: 100, by: 10).map { t0 + $0 }
        times += stride(from: 50.0, through: 200, by: 10).map { t0 + $0 }
        for t in times {
            try store.append(
                roundRecord(t, t < t0 + 100 ? .full : .limited, reason: .probe(.timeout), interval: 10).encoded(),
                now: t)
        }
        store.close()
        let report = try OutageReport.build(directory: dir.path, since: .seconds(3600), now: t0 + 205)
        #expect(abs(report.total.covered - 205) < 1e-9)  // t0 to t0+205, once
        #expect(abs(report.total.up - 100) < 1e-9)
        #expect(report.outages.filter { $0.scope == .overall }.map { [$0.start, $0.end] } == [[t0 + 100, t0 + 205]])
    }
}
