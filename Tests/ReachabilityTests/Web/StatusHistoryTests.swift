import Foundation
import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// The status page's history summary (`StatusHistory`) from synthetic rounds: timeline segments
/// and gaps, outages, per-day availability, RTT buckets, and the memory bounds.
@Suite struct StatusHistoryTests {
    /// 2026-01-10T01:00:00Z: far from midnight, so a test's rounds stay in one UTC day.
    static let t0: Double = 1_768_006_800

    static func round(_ h: StatusHistory, _ t: Double, _ v: Verdict, interval: Double = 10, probes: [ProbeRecord] = [])
    {
        h.replay(
            .round(RoundSummary(RoundRecord(time: t, duration: 0, interval: interval, round: 0, overall: v, since: t))))
        if !probes.isEmpty { h.log.withLock { $0.addSamples(probes, at: t) } }
    }

    /// A round with family and uplink verdicts too.
    static func scopedRound(
        _ h: StatusHistory, _ t: Double, overall: Verdict, families: [String: Verdict], uplinks: [String: Verdict]
    ) {
        h.replay(
            .round(
                RoundSummary(
                    RoundRecord(
                        time: t, duration: 0, interval: 10, round: 0, overall: overall, since: t,
                        families: families, uplinks: uplinks))))
    }

    /// Full for 600 s, limited (timeout) for 300 s, full for 300 s, stopped for 800 s, full again.
    static func scripted() -> StatusHistory {
        let h = StatusHistory(interval: .seconds(10))
        h.replay(.start(time: t0, interval: 10))
        for i in 0..<120 {
            let t = t0 + Double(i) * 10
            round(h, t, i >= 60 && i < 90 ? Verdict(.limited, reason: .probe(.timeout)) : Verdict(.full))
        }
        h.replay(.stop(time: t0 + 1190.5))
        h.replay(.start(time: t0 + 2000, interval: 10))
        for i in 0..<40 { round(h, t0 + 2000 + Double(i) * 10, Verdict(.full)) }
        return h
    }

    @Test func timelineHasSegmentsGapsAndTheOutage() throws {
        let now = Self.t0 + 2395
        let s = Self.scripted().snapshot(at: now)
        #expect(s.from == now - 86_400 && s.to == now)
        #expect(s.timeline.map { $0.verdict?.state } == [nil, .full, .limited, .full, nil, .full])
        #expect(s.timeline.first?.start == s.from && s.timeline.last?.end == now)
        for (a, b) in zip(s.timeline, s.timeline.dropFirst()) { #expect(a.end == b.start, "no holes, no overlaps") }
        let limited = s.timeline[2]
        #expect(
            limited.start == Self.t0 + 600 && limited.end == Self.t0 + 900
                && limited.verdict?.reason == .probe(.timeout))
        #expect(
            s.timeline[4].start == Self.t0 + 1190.5 && s.timeline[4].end == Self.t0 + 2000,
            "the stop ends coverage; the start resumes it")

        let outage = try #require(s.outages.first)
        #expect(s.outages.count == 1)
        #expect(
            outage.start == Self.t0 + 600 && outage.duration == 300 && outage.state == .limited
                && outage.reason == .probe(.timeout) && outage.ended == .recovered)

        #expect(s.days.count == StatusHistory.dayCount)
        let today = try #require(s.days.last)
        #expect(today.day == UTCTime.day(of: now))
        #expect(today.down == 300)
        #expect(abs(today.up - (1190.5 - 300 + 395)) < 1e-6, "up to the stop, then the pending round up to now")
        #expect(s.days.dropLast().allSatisfy { $0.covered == 0 && $0.length == 86_400 })
        #expect(abs(today.length - (now - Double(today.day) * 86_400)) < 1e-6)
    }

    @Test func anOngoingOutageIsListedFirst() throws {
        let h = Self.scripted()
        for i in 0..<6 {
            Self.round(h, Self.t0 + 2400 + Double(i) * 10, Verdict(.none, reason: .path(.noDefaultRoute)))
        }
        let s = h.snapshot(at: Self.t0 + 2455)
        let first = try #require(s.outages.first)
        #expect(
            first.state == .none && first.ended == .ongoing && first.start == Self.t0 + 2400
                && first.end == Self.t0 + 2455)
        #expect(s.outages.count == 2)
        // Long after the last round, the record stops: a gap, not an ongoing outage.
        #expect(h.snapshot(at: Self.t0 + 9000).outages.first?.ended == .gap)
    }

    static func probe(_ name: String, _ ms: Double, ok: Bool = true) -> ProbeRecord {
        ProbeRecord(
            name: name, type: .tcp, interface: nil, status: ok ? .success : .failure, reason: ok ? nil : .timeout,
            duration: ms / 1000)
    }

    @Test func rttIsBucketedBoundedAndPruned() throws {
        let h = StatusHistory(interval: .seconds(30))
        let start = Self.t0 - 86_400
        // Two days of rounds every 30 s; every tenth result of "b" fails.
        for i in 0..<(2 * 2880) {
            let t = start + Double(i) * 30
            Self.round(
                h, t, Verdict(.full), interval: 30,
                probes: [Self.probe("a", 10 + Double(i % 7)), Self.probe("b", 50, ok: i % 10 != 0)])
        }
        let now = start + 2 * 86_400
        let s = h.snapshot(at: now)
        #expect(s.rtt.map(\.name) == ["a", "b"])
        for series in s.rtt {
            #expect(series.buckets.count <= 289 && series.buckets.count >= 287, "\(series.buckets.count)")
            #expect(series.buckets.allSatisfy { $0.start + 300 > now - 86_400 && $0.start < now })
            #expect(zip(series.buckets, series.buckets.dropFirst()).allSatisfy { $0.start < $1.start })
        }
        let a = try #require(s.rtt.first?.buckets.last)
        #expect(a.count == 10 && a.failures == 0 && a.min == 0.010 && a.max == 0.016)
        #expect(try #require(a.average) > 0.010 && a.average! < 0.016)
        let b = try #require(s.rtt.last?.buckets.last)
        #expect(b.count + b.failures == 10 && b.failures == 1 && b.lossRatio == 0.1)
        #expect(h.retained.buckets <= 2 * 289, "older buckets are dropped, not kept")
    }

    @Test func memoryStaysBoundedOverTwoMonths() {
        let h = StatusHistory(interval: .seconds(60))
        let start = Self.t0 - 60 * 86_400
        // An outage of 5 minutes every 6 hours: 240 outages in 60 days.
        for i in 0..<(60 * 1440) {
            let t = start + Double(i) * 60
            Self.round(h, t, i % 360 < 5 ? Verdict(.limited, reason: .probe(.dns)) : Verdict(.full), interval: 60)
        }
        let s = h.snapshot(at: start + 60 * 86_400)
        #expect(s.outages.count == StatusHistory.outageCount)
        #expect(zip(s.outages, s.outages.dropFirst()).allSatisfy { $0.start > $1.start }, "newest first")
        let kept = h.retained
        #expect(kept.days <= StatusHistory.dayCount + 1)
        #expect(kept.outages <= 2 * StatusHistoryLog.maxOutages)
        #expect(kept.segments <= 4 * 4 + 1 + 64 + 2, "about a day of segments: \(kept.segments)")
        #expect(s.days.dropLast().allSatisfy { abs($0.down - 1200) < 1e-6 }, "four 5-minute outages every day")
        #expect(s.days.last?.down == 0 && s.days.last?.length == 3600, "today: 00:00 to 01:00, no outage yet")
    }

    @Test func aFlappingDayFoldsIntoABoundedNumberOfSpans() {
        let h = StatusHistory(interval: .seconds(10))
        let start = Self.t0 - 86_400
        for i in 0..<8640 {
            Self.round(
                h, start + Double(i) * 10, i % 2 == 0 ? Verdict(.full) : Verdict(.limited, reason: .probe(.timeout)))
        }
        let s = h.snapshot(at: Self.t0)
        #expect(s.timeline.count >= 8000)
        let folded = s.timeline(minLength: 86.4)
        #expect(folded.count <= 1001, "\(folded.count)")
        #expect(folded.reduce(0) { $0 + $1.merged } == s.timeline.count)
        #expect(folded.dropFirst().allSatisfy { $0.verdict?.state == .limited }, "the worse state shows")
        let svg = StatusCharts.timeline(s)
        #expect(svg.occurrences(of: "<rect class=\"seg\"") == folded.count)
    }

    @Test func probeResultsAreLoadedFromTheFiles() throws {
        let dir = ScratchDirectory()
        var scenario = HistoryScenario()
        scenario.days = 2
        scenario.interval = 120
        scenario.rttWave = true
        try scenario.write(to: dir.path)
        let h = StatusHistory(interval: .seconds(120))
        #expect(!h.snapshot(at: scenario.end).samplesLoaded)
        let stats = h.loadSamples(directory: dir.path, until: scenario.end)
        #expect(stats.corrupt == 0 && stats.rounds > 0)
        let s = h.snapshot(at: scenario.end)
        #expect(s.samplesLoaded)
        #expect(s.rtt.count == 2)
        for series in s.rtt {
            #expect(series.buckets.count <= 289 && series.buckets.count > 250)
            let ok = series.buckets.filter { $0.count > 0 }
            #expect(ok.allSatisfy { $0.min >= 0.016 && $0.max <= 0.044 && $0.min <= $0.max })
            #expect(series.buckets.contains { $0.failures > 0 }, "outage rounds count as failures")
        }
        #expect(h.loadSamples(directory: dir.path + "/missing", until: scenario.end).files == 0)
    }

    /// Each family and uplink gets its own 24 h timeline; `unknown` is no data, and a scope that
    /// never had a verdict in the window is left out.
    @Test func familiesAndUplinksHaveTheirOwnTimelines() throws {
        let h = StatusHistory(interval: .seconds(10))
        h.replay(.start(time: Self.t0, interval: 10))
        let full = Verdict(.full)
        let down = Verdict(.limited, reason: .probe(.timeout))
        for i in 0..<60 {
            let wanDown = i >= 20 && i < 40
            Self.scopedRound(
                h, Self.t0 + Double(i) * 10, overall: full,
                families: ["ipv4": full, "ipv6": Verdict(.unknown)],
                uplinks: ["wan1": wanDown ? down : full, "wan2": full])
        }
        let s = h.snapshot(at: Self.t0 + 595)
        #expect(s.scopes.map(\.label) == ["IPv4", "uplink wan1", "uplink wan2"], "IPv6 was never known: no band")
        let wan1 = try #require(s.scopes.first { $0.label == "uplink wan1" }).timeline
        #expect(wan1.map { $0.verdict?.state } == [nil, .full, .limited, .full])
        #expect(wan1[2].start == Self.t0 + 200 && wan1[2].end == Self.t0 + 400)
        for (a, b) in zip(wan1, wan1.dropFirst()) { #expect(a.end == b.start, "no holes, no overlaps") }
        #expect(wan1.last?.end == Self.t0 + 595)
        let table = StatusHistoryView.scopeOutageTable(s.scopes, now: s.to)
        #expect(table.occurrences(of: "<tr class=\"scope-outage\"") == 1)
        #expect(
            table.contains("<td>uplink wan1</td><td>2026-01-10 01:03:20Z</td><td class=\"num\">3m 20s</td>"), "\(table)"
        )
        #expect(table.contains("<td>timeout</td><td>recovered</td>"))
        // A stop ends every scope's coverage too.
        h.replay(.stop(time: Self.t0 + 600))
        let later = h.snapshot(at: Self.t0 + 900)
        let ipv4 = try #require(later.scopes.first { $0.label == "IPv4" }).timeline
        #expect(ipv4.last?.verdict == nil && ipv4.last?.start == Self.t0 + 600)
    }

    /// An `unknown` round ends a known scope's coverage at once (a gap, as the overall timeline
    /// draws it), instead of stretching its last verdict.
    @Test func anUnknownScopeVerdictIsAGap() throws {
        let h = StatusHistory(interval: .seconds(10))
        h.replay(.start(time: Self.t0, interval: 10))
        for i in 0..<20 {
            Self.scopedRound(
                h, Self.t0 + Double(i) * 10, overall: Verdict(.full),
                families: ["ipv6": i < 10 ? Verdict(.full) : Verdict(.unknown)], uplinks: [:])
        }
        let v6 = try #require(h.snapshot(at: Self.t0 + 195).scopes.first { $0.label == "IPv6" }).timeline
        #expect(v6.map { $0.verdict?.state } == [nil, .full, nil])
        #expect(
            v6[1].end == Self.t0 + 100, "full until the first unknown round, not 2 intervals past the last full one")
    }

    /// A round carries the interval it ran under: after a reload from 10 s to 60 s, rounds 60 s
    /// apart still cover the time between them.
    @Test func roundsUseTheirOwnInterval() {
        let h = StatusHistory(interval: .seconds(10))
        h.markStart(at: Self.t0)
        for i in 0..<5 {
            var s = status(at: Self.t0 + Double(i) * 60, Verdict(.full), since: Self.t0)
            s.interval = .seconds(60)
            h.roundCompleted(s)
        }
        let timeline = h.snapshot(at: Self.t0 + 250).timeline
        #expect(timeline.map { $0.verdict?.state } == [nil, .full], "\(timeline)")
    }
}
