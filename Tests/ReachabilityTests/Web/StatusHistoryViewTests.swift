import Foundation
import Glibc
import ReachabilityTestSupport
import Synchronization
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// The status page's history pictures: SVG structure, escaping of hostile names and reasons,
/// the cache, the page without history, and the built exporter serving a generated month.
@Suite(.serialized) struct StatusHistoryViewTests {
    static let hostile = "<script>alert(1)</script>\"'&"

    /// The scripted history of StatusHistoryTests plus hostile probe names and reasons.
    static func hostileHistory() -> StatusHistory {
        let h = StatusHistoryTests.scripted()
        let t = StatusHistoryTests.t0 + 2400
        StatusHistoryTests.round(
            h, t, Verdict(.limited, reason: .unrecognized(hostile)),
            probes: [StatusHistoryTests.probe(hostile, 12), StatusHistoryTests.probe("ok", 3)])
        return h
    }

    @Test func theTimelineDrawsOneRectanglePerSpanWithTitlesAndText() {
        let s = StatusHistoryTests.scripted().snapshot(at: StatusHistoryTests.t0 + 2395)
        let svg = StatusCharts.timeline(s)
        #expect(svg.occurrences(of: "<rect class=\"seg\"") == 6)
        #expect(svg.occurrences(of: "data-state=\"gap\"") == 2)
        #expect(svg.occurrences(of: "data-state=\"full\"") == 3)
        #expect(svg.occurrences(of: "data-state=\"limited\"") == 1)
        #expect(svg.contains("<title>⚠ Limited (timeout) · 01:10–01:15 UTC · 5m</title>"))
        #expect(svg.contains("role=\"img\" aria-label=\"Overall state over the last 24 hours; "))
        #expect(svg.contains("⚠ Limited 0.3%"), "the legend states each share in text")
        #expect(svg.contains("No data 98.1%"))
        #expect(svg.contains(">03:00</text>"), "hour labels")
    }

    /// A band per family and uplink under the overall timeline, state in text and escaped names.
    @Test func familiesAndUplinksDrawBands() {
        let h = StatusHistory(interval: .seconds(10))
        let t0 = StatusHistoryTests.t0
        h.replay(.start(time: t0, interval: 10))
        for i in 0..<60 {
            StatusHistoryTests.scopedRound(
                h, t0 + Double(i) * 10, overall: Verdict(.full), families: ["ipv4": Verdict(.full)],
                uplinks: [Self.hostile: i >= 30 ? Verdict(.none, reason: .path(.noCarrier)) : Verdict(.full)])
        }
        let html = StatusHistoryView.render(h.snapshot(at: t0 + 595))
        #expect(html.occurrences(of: "<div class=\"scopeband\">") == 2)
        #expect(html.contains("<span class=\"bandlabel\">IPv4</span>"))
        #expect(
            html.contains(
                "<span class=\"bandlabel\">uplink &lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;</span>"))
        #expect(!html.contains("<script>"))
        #expect(html.contains("· ✖ No network (no_carrier) · 01:05–01:09 UTC · 4m 55s</title>"), "\(html)")
        // The uplink's outage is listed under its scope, ongoing; IPv4 had none.
        #expect(html.occurrences(of: "<tr class=\"scope-outage\"") == 1)
        #expect(
            html.contains(
                "<tr class=\"scope-outage\" data-state=\"none\"><td>uplink &lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;</td>"
            ))
        #expect(html.contains("<td>no_carrier</td><td>ongoing</td></tr>"))
        #expect(html.occurrences(of: "<svg ") == html.occurrences(of: "role=\"img\""))
    }

    @Test func dayBarsCarryTheirPercentages() {
        let s = StatusHistoryTests.scripted().snapshot(at: StatusHistoryTests.t0 + 2395)
        let svg = StatusCharts.days(s.days)
        #expect(svg.occurrences(of: "<g class=\"day\"") == 30)
        #expect(svg.occurrences(of: ">n/a</text>") == 29)
        #expect(
            svg.contains(
                "<g class=\"day\" data-day=\"2026-01-10\"><title>2026-01-10: 81.0% available, 5m not full, 26.4% of the day covered</title>"
            ))
        #expect(svg.contains(">81.0</text>"))
        #expect(svg.contains(">today</text>"))
        #expect(svg.contains("role=\"img\" aria-label=\"Availability per UTC day, 2025-12-12 to 2026-01-10\""))
        #expect(
            StatusCharts.percent(0.99999) == "99.9%" && StatusCharts.percent(1) == "100%"
                && StatusCharts.percent(.nan) == "n/a")
    }

    @Test func hostileNamesAndReasonsAreEscapedEverywhere() {
        let h = Self.hostileHistory()
        let html = StatusHistoryView.render(h.snapshot(at: StatusHistoryTests.t0 + 2405))
        #expect(!html.contains("<script>"))
        #expect(!html.contains("\"'&"))
        #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;"))
        #expect(html.contains("<h3>&lt;script&gt;"), "the RTT chart's probe name")
        #expect(html.contains("<tr class=\"outage\" data-state=\"limited\">"))
        #expect(
            html.contains("<td>&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;</td><td>ongoing</td>"),
            "the outage reason")
        #expect(html.contains("aria-label=\"RTT of &lt;script&gt;"))
        #expect(html.occurrences(of: "<svg ") == html.occurrences(of: "role=\"img\""))
        #expect(html.occurrences(of: "<svg class=\"chart rtt\"") == 2)
        #expect(html.occurrences(of: "<circle class=\"dot\"") == 2, "a lone bucket still shows")
        #expect(!html.contains("http://") && !html.contains("https://") && !html.contains(" src="))
    }

    @Test func theRenderingIsCachedUntilTheHistoryChanges() {
        let h = StatusHistoryTests.scripted()
        let clock = Mutex(StatusHistoryTests.t0 + 2395)
        let view = StatusHistoryView(history: h, maxAge: 30) { clock.withLock { $0 } }
        let first = view.render()
        #expect(view.render() == first)
        clock.withLock { $0 += 10 }
        _ = view.render()
        #expect(view.renders.load(ordering: .relaxed) == 1, "same generation, within maxAge: served from the cache")
        StatusHistoryTests.round(h, StatusHistoryTests.t0 + 2400, Verdict(.full))
        _ = view.render()
        #expect(view.renders.load(ordering: .relaxed) == 2, "a round invalidates it")
        clock.withLock { $0 += 31 }
        _ = view.render()
        #expect(view.renders.load(ordering: .relaxed) == 3, "and so does age: the window slides")
    }

    @Test func withoutHistoryThePageSaysSo() {
        var page = StatusPage(status: { nil }, now: { 1000 })
        page.addSection(StatusHistoryView(history: nil).render)
        let html = page.render()
        #expect(html.contains("id=\"history-off\""))
        #expect(html.contains("<code>--history.dir=DIR</code>"))
        #expect(!html.contains("<svg"))
    }

    @Test func theBuiltExporterServesAMonthOfHistory() throws {
        let dir = ScratchDirectory()
        var scenario = HistoryScenario()
        scenario.interval = 600
        scenario.outageLength = 1200
        scenario.gapLength = 1800
        scenario.rttWave = true
        scenario.start = (Date().timeIntervalSince1970 / 600).rounded(.down) * 600 - 30 * 86_400
        try scenario.write(to: dir.path)
        let listener = try TCPTestListener()
        defer { listener.stop() }
        let exporter = try ExporterProcess([
            "--web.listen-address=127.0.0.1:0", "--no-path.monitor", "--probe.tcp=127.0.0.1:\(listener.address.port)",
            "--probe.interval=500ms", "--probe.timeout=250ms", "--history.dir=\(dir.path)",
        ])
        try exporter.waitListening()
        let deadline = Date().addingTimeInterval(20)
        var page = ""
        // Until the live probe has a round and the background read of the last day is done.
        while Date() < deadline {
            page = try exporter.get("/").body
            if page.contains("<tr class=\"probe\""), !page.contains("Reading the last day"),
                page.contains("<h3>127.0.0.1:\(listener.address.port) <small>")
            {
                break
            }
            usleep(100_000)
        }
        let start = try #require(page.range(of: "id=\"timeline\""))
        let end = try #require(page.range(of: "</svg>", range: start.upperBound..<page.endIndex))
        let timeline = String(page[start.lowerBound..<end.lowerBound])
        #expect(
            timeline.occurrences(of: "<rect class=\"seg\" data-state=\"limited\"") == 4,
            "four outages in the last 24 hours")
        #expect(timeline.occurrences(of: "<rect class=\"seg\" data-state=\"gap\"") >= 1)
        #expect(page.contains("<span class=\"bandlabel\">IPv4</span>"), "the family's own band")
        #expect(page.occurrences(of: "<g class=\"day\"") == 30)
        #expect(page.occurrences(of: "<tr class=\"outage\"") == StatusHistory.outageCount)
        #expect(page.contains("<td>timeout</td><td>recovered</td>"))
        #expect(
            page.contains("<h3>https://probe-0.example.net/generate_204 <small>https · median "), "RTT from the files")
        #expect(page.contains("<h3>127.0.0.1:\(listener.address.port) <small>tcp · median "), "RTT of the live probe")
        #expect(try exporter.stop().status == 0)
    }
}
