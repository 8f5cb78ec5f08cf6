import ReachabilityVerdict
import Synchronization

/// The status page's history section: the pictures of `StatusCharts` and the outage log, drawn
/// from a `StatusHistory` snapshot. The rendered HTML is cached and drawn again only when a round
/// (or the start-up RTT load) changed the history, or after `maxAge` seconds so the 24-hour
/// window keeps sliding when no round arrives. Without history it says how to turn it on.
/// Thread-safe: concurrent requests share one cached rendering.
package final class StatusHistoryView: Sendable {
    private let history: StatusHistory?
    private let now: @Sendable () -> Double
    private let maxAge: Double
    private let cache = Mutex<(generation: Int, at: Double, html: String)?>(nil)
    /// How many times the section was drawn (not served from the cache); for tests.
    let renders = Atomic<Int>(0)

    /// `history`: nil when the exporter runs without `--history.dir`.
    package init(history: StatusHistory?, maxAge: Double = 30, now: @escaping @Sendable () -> Double = { unixNow() }) {
        self.history = history
        self.maxAge = maxAge
        self.now = now
    }

    package func render() -> String {
        guard let history else { return Self.off }
        let t = now()
        let generation = history.generation
        if let c = cache.withLock({ $0 }), c.generation == generation, t - c.at >= 0, t - c.at < maxAge {
            return c.html
        }
        let html = Self.render(history.snapshot(at: t))
        renders.add(1, ordering: .relaxed)
        cache.withLock { $0 = (generation, t, html) }
        return html
    }

    static let off = """
        <section id="history"><h2>History</h2>
        <p class="note" id="history-off">History is off, so there is no timeline, RTT chart, daily availability or outage log. \
        Start the exporter with <code>--history.dir=DIR</code> (or a <code>history:</code> section in the configuration file) to record them.</p>
        </section>

        """

    static func render(_ s: StatusHistorySnapshot) -> String {
        var out = "<section id=\"history\"><h2>Last 24 hours (UTC)</h2>\n" + StatusCharts.timeline(s)
        for scope in s.scopes {
            out += StatusCharts.band(scope: scope.label, spans: scope.timeline, from: s.from, to: s.to)
        }
        out += "</section>\n"
        out += "<section id=\"rtt\"><h2>Response time per probe, last 24 hours</h2>\n"
        if !s.samplesLoaded { out += "<p class=\"note\">Reading the last day of probe results from the history…</p>\n" }
        if s.rtt.isEmpty && s.samplesLoaded { out += "<p class=\"note\">No probe results in the last 24 hours.</p>\n" }
        for series in s.rtt { out += rttBlock(series, from: s.from, to: s.to) }
        out += "</section>\n"
        out += "<section id=\"availability\"><h2>Availability per day, last \(s.days.count) days (UTC)</h2>\n"
        out += StatusCharts.days(s.days)
        out +=
            "<p class=\"legend\">Percent of each day's recorded time with the verdict <em>full</em>; time without a record is not counted (see the tooltips for coverage). Bars are green at 99.9 % or more, amber at 99 % or more, red below.</p>\n</section>\n"
        out += outageTable(s.outages, now: s.to)
        out += scopeOutageTable(s.scopes, now: s.to)
        return out
    }

    /// The outages of each family and uplink in the last 24 hours, from their timelines: every
    /// stretch that was neither full nor without data, newest first, at most 20.
    static func scopeOutageTable(_ scopes: [(label: String, timeline: [TimelineSpan])], now: Double) -> String {
        guard !scopes.isEmpty else { return "" }
        var found: [(scope: String, span: TimelineSpan, ended: String)] = []
        for scope in scopes {
            for (i, span) in scope.timeline.enumerated() {
                guard let v = span.verdict, v.state != .full else { continue }
                let next = i + 1 < scope.timeline.count ? scope.timeline[i + 1] : nil
                let ended =
                    next == nil && span.end >= now
                    ? "ongoing"
                    : next?.verdict == nil
                        ? "no data after"
                        : next?.verdict?.state == .full ? "recovered" : "changed"
                found.append((scope.label, span, ended))
            }
        }
        guard !found.isEmpty else {
            return
                "<section id=\"scope-outages\"><h2>Family and uplink outages, last 24 hours</h2>\n<p class=\"note\">None.</p></section>\n"
        }
        var rows = ""
        for o in found.sorted(by: { $0.span.start > $1.span.start }).prefix(StatusHistory.outageCount) {
            let v = o.span.verdict ?? Verdict(.unknown)
            let st = HTML.style(v.state)
            rows += """
                <tr class="scope-outage" data-state="\(v.state.rawValue)"><td>\(HTML.escape(o.scope))</td>\
                <td>\(String(UTCTime.rfc3339(o.span.start).map { $0 == "T" ? " " : $0 }))</td>\
                <td class="num">\(HTML.age(o.span.length))</td><td><span style="color:\(st.colour)">\(st.symbol)</span> \(st.label)</td>\
                <td>\(HTML.escape(v.reason?.label ?? ""))</td><td>\(o.ended)</td></tr>

                """
        }
        return """
            <section id="scope-outages"><h2>Family and uplink outages, last 24 hours (newest first)</h2>
            <table><thead><tr><th>Scope</th><th>Started (UTC)</th><th>Duration</th><th>State</th><th>Reason</th><th>Ended</th></tr></thead>
            <tbody>
            \(rows)</tbody></table></section>

            """
    }

    static func rttBlock(_ series: RTTSeries, from: Double, to: Double) -> String {
        let averages = series.buckets.compactMap(\.average).sorted()
        let median =
            averages.isEmpty
            ? "no successful result" : "median \(HTML.milliseconds(seconds: averages[averages.count / 2]))"
        let peak =
            series.buckets.filter { $0.count > 0 }.map(\.max).max().map { " · max \(HTML.milliseconds(seconds: $0))" }
            ?? ""
        let results = series.buckets.reduce((0, 0)) { ($0.0 + $1.count, $0.1 + $1.failures) }
        let loss = results.0 + results.1 > 0 ? Double(results.1) / Double(results.0 + results.1) : 0
        return """
            <div class="rttblock"><h3>\(HTML.escape(series.name)) <small>\(series.type.rawValue) · \(median)\(peak) · \
            failed \(StatusCharts.percent(loss)) of \(results.0 + results.1)</small></h3>
            \(StatusCharts.rtt(series, from: from, to: to))</div>

            """
    }

    static func outageTable(_ outages: [Outage], now: Double) -> String {
        guard !outages.isEmpty else {
            return
                "<section id=\"outages\"><h2>Recent outages</h2>\n<p class=\"note\">No outage recorded in the last 30 days.</p></section>\n"
        }
        var rows = ""
        for o in outages {
            let st = HTML.style(o.state)
            let ended =
                o.ended == .ongoing
                ? "ongoing"
                : o.ended == .recovered ? "recovered" : o.ended == .gap ? "record stops (not running)" : "changed"
            rows += """
                <tr class="outage" data-state="\(o.state.rawValue)"><td>\(String(UTCTime.rfc3339(o.start).map { $0 == "T" ? " " : $0 }))</td>\
                <td class="num">\(HTML.age(o.duration))</td><td><span style="color:\(st.colour)">\(st.symbol)</span> \(st.label)</td>\
                <td>\(HTML.escape(o.reason?.label ?? ""))</td><td>\(ended)</td></tr>

                """
        }
        return """
            <section id="outages"><h2>Recent outages (overall, newest first)</h2>
            <table><thead><tr><th>Started (UTC)</th><th>Duration</th><th>State</th><th>Reason</th><th>Ended</th></tr></thead>
            <tbody>
            \(rows)</tbody></table></section>

            """
    }
}
