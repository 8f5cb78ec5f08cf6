import ReachabilityVerdict

/// The status page's pictures as inline SVG, drawn from a `StatusHistorySnapshot`: the 24-hour
/// state timeline, RTT per probe and availability per day. Every shape carries a `<title>`
/// tooltip and every chart an `aria-label`, and state is written as text beside its colour.
/// All text from the history (probe names, reasons) is escaped. Pure functions of the snapshot.
enum StatusCharts {
    static let width = 1000.0
    static let gapColour = "#afb8c1"

    static func x(_ t: Double, from: Double, to: Double, left: Double = 0, right: Double = width) -> Double {
        left + (t - from) / max(1, to - from) * (right - left)
    }

    /// A number for SVG attributes: one decimal, no exponent.
    static func n(_ v: Double) -> String { String((v * 10).rounded() / 10) }

    /// `99.7%`, rounded down so an imperfect ratio never shows as 100%.
    static func percent(_ ratio: Double) -> String {
        guard ratio.isFinite else { return "n/a" }
        if ratio >= 1 { return "100%" }
        return String((max(0, ratio) * 1000).rounded(.down) / 10) + "%"
    }

    static func clock(_ t: Double) -> String { String(UTCTime.rfc3339(t).dropFirst(11).prefix(5)) }

    static func label(_ v: Verdict?) -> (colour: String, symbol: String, text: String) {
        guard let v, v.state != .unknown else { return (gapColour, "·", "No data") }
        let s = HTML.style(v.state)
        return (s.colour, s.symbol, s.label + (v.reason.map { " (\($0.label))" } ?? ""))
    }

    /// Tick marks and `HH:MM` labels every three hours (UTC) along `y`.
    static func hourTicks(from: Double, to: Double, y: Double, top: Double, left: Double = 0, right: Double = width)
        -> String
    {
        var out = ""
        var t = (from / 10_800).rounded(.up) * 10_800
        while t <= to {
            let position = x(t, from: from, to: to, left: left, right: right)
            let text = clock(t)
            t += 10_800
            guard position > left + 18, position < right - 18 else { continue }  // no label cut at an edge
            let px = n(position)
            out += "<line x1=\"\(px)\" y1=\"\(n(top))\" x2=\"\(px)\" y2=\"\(n(y - 12))\" class=\"tick\"/>"
            out += "<text x=\"\(px)\" y=\"\(n(y))\" text-anchor=\"middle\" class=\"axis\">\(text)</text>"
        }
        return out
    }

    /// The overall state over the snapshot's span: one rectangle per span (spans under a pixel
    /// folded), gaps hatched, symbols on wide non-full spans.
    static func timeline(_ s: StatusHistorySnapshot) -> String {
        let spans = s.timeline(minLength: (s.to - s.from) / width)
        var shares: [String: (Double, String, String)] = [:]
        var rects = ""
        for span in spans {
            let l = label(span.verdict)
            let key = span.verdict.map { HTML.style($0.state).label } ?? "No data"
            shares[key, default: (0, l.colour, l.symbol)].0 += span.length
            let x0 = x(span.start, from: s.from, to: s.to)
            let x1 = x(span.end, from: s.from, to: s.to)
            let state = span.verdict?.state.rawValue ?? "gap"
            let fill = span.verdict == nil ? "url(#gap-hatch)" : l.colour
            let folded = span.merged > 1 ? " · \(span.merged) changes, worst shown" : ""
            rects +=
                "<rect class=\"seg\" data-state=\"\(state)\" x=\"\(n(x0))\" y=\"4\" width=\"\(n(max(1, x1 - x0)))\" height=\"36\" fill=\"\(fill)\">"
            rects +=
                "<title>\(HTML.escape("\(l.symbol) \(l.text) · \(clock(span.start))–\(clock(span.end)) UTC · \(HTML.age(span.length))\(folded)"))</title></rect>"
            if x1 - x0 >= 24, span.verdict?.state != .full {
                rects +=
                    "<text x=\"\(n((x0 + x1) / 2))\" y=\"28\" text-anchor=\"middle\" class=\"segsym\" aria-hidden=\"true\">\(l.symbol)</text>"
            }
        }
        let total = max(1, s.to - s.from)
        let order = ["Full", "Limited", "Captive portal", "No network", "No data"]
        let legend = shares.sorted { (order.firstIndex(of: $0.key) ?? 9) < (order.firstIndex(of: $1.key) ?? 9) }.map {
            key, v in
            "<span class=\"key\"><span class=\"swatch\" style=\"background:\(key == "No data" ? gapColour : v.1)\"></span>\(v.2) \(HTML.escape(key)) \(percent(v.0 / total))</span>"
        }
        let summary =
            legend.isEmpty
            ? "" : "; " + shares.map { "\($0.key) \(percent($0.value.0 / total))" }.sorted().joined(separator: ", ")
        return """
            <svg class="chart" id="timeline" viewBox="0 0 1000 64" role="img" aria-label="Overall state over the last 24 hours\(HTML.escape(summary))">\
            <defs><pattern id="gap-hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">\
            <rect width="6" height="6" fill="#eaeef2"/><line x1="0" y1="0" x2="0" y2="6" stroke="\(gapColour)" stroke-width="3"/></pattern></defs>\
            \(rects)\(hourTicks(from: s.from, to: s.to, y: 60, top: 40))</svg>
            <p class="legend">\(legend.joined(separator: " "))</p>

            """
    }

    /// One family's or uplink's state over the snapshot's span: a thin band under the overall
    /// timeline, with the same colours, gaps and tooltips, and its shares written beside it.
    static func band(scope: String, spans: [TimelineSpan], from: Double, to: Double) -> String {
        var rects = ""
        var shares: [String: Double] = [:]
        for span in StatusHistorySnapshot.fold(spans, minLength: (to - from) / width) {
            let l = label(span.verdict)
            shares[span.verdict.map { HTML.style($0.state).label } ?? "No data", default: 0] += span.length
            let x0 = x(span.start, from: from, to: to)
            let x1 = x(span.end, from: from, to: to)
            let fill = span.verdict == nil ? "url(#gap-hatch)" : l.colour
            rects +=
                "<rect class=\"seg\" data-state=\"\(span.verdict?.state.rawValue ?? "gap")\" x=\"\(n(x0))\" y=\"0\" width=\"\(n(max(1, x1 - x0)))\" height=\"14\" fill=\"\(fill)\">"
            rects +=
                "<title>\(HTML.escape("\(scope) · \(l.symbol) \(l.text) · \(clock(span.start))–\(clock(span.end)) UTC · \(HTML.age(span.length))"))</title></rect>"
        }
        let total = max(1, to - from)
        let summary = shares.sorted { $0.value > $1.value }.map { "\($0.key) \(percent($0.value / total))" }.joined(
            separator: ", ")
        return """
            <div class="scopeband"><div><span class="bandlabel">\(HTML.escape(scope))</span> <small class="bandshare">\(HTML.escape(summary))</small></div>\
            <svg class="chart scope-band" data-scope="\(HTML.escape(scope))" viewBox="0 0 1000 14" preserveAspectRatio="none" role="img" \
            aria-label="\(HTML.escape("\(scope) state over the last 24 hours: \(summary)"))">\(rects)</svg></div>

            """
    }

    /// A "nice" axis maximum at or above `v` milliseconds: 1, 2 or 5 times a power of ten.
    static func niceCeiling(_ v: Double) -> Double {
        guard v > 0, v.isFinite else { return 1 }
        var p = 1.0
        while p * 10 < v { p *= 10 }
        while p > v { p /= 10 }
        for m in [1.0, 2, 5, 10] where m * p >= v { return m * p }
        return 10 * p
    }

    /// One probe's RTT: the min–max band, the average line (broken where no result succeeded),
    /// and red marks for buckets with failures.
    static func rtt(_ series: RTTSeries, from: Double, to: Double) -> String {
        let left = 56.0
        let right = 992.0
        let top = 8.0
        let bottom = 96.0
        let maxMs = niceCeiling((series.buckets.map(\.max).max() ?? 0) * 1000)
        func y(_ seconds: Double) -> Double { bottom - min(1, seconds * 1000 / maxMs) * (bottom - top) }
        let half = StatusHistoryLog.bucketSeconds / 2
        var runs: [[RTTBucket]] = []
        for b in series.buckets where b.count > 0 {
            if let last = runs.last?.last, b.start - last.start <= StatusHistoryLog.bucketSeconds {
                runs[runs.count - 1].append(b)
            } else {
                runs.append([b])
            }
        }
        var body = ""
        for run in runs {
            let xs = run.map { x($0.start + half, from: from, to: to, left: left, right: right) }
            let upper = zip(xs, run).map { "\(n($0)),\(n(y($1.max)))" }
            let lower = zip(xs, run).reversed().map { "\(n($0)),\(n(y($1.min)))" }
            body += "<polygon class=\"band\" points=\"\((upper + lower).joined(separator: " "))\"/>"
            body +=
                "<polyline class=\"avg\" points=\"\(zip(xs, run).map { "\(n($0)),\(n(y($1.average ?? 0)))" }.joined(separator: " "))\"/>"
            if run.count == 1, let b = run.first {  // a lone bucket: a line of one point draws nothing
                body += "<circle class=\"dot\" cx=\"\(n(xs[0]))\" cy=\"\(n(y(b.average ?? 0)))\" r=\"3\"/>"
            }
        }
        let step = StatusHistoryLog.bucketSeconds / max(1, to - from) * (right - left)
        for b in series.buckets where b.failures > 0 {
            let x0 = x(b.start, from: from, to: to, left: left, right: right)
            let avg = b.average.map { ", avg \(HTML.milliseconds(seconds: $0))" } ?? ""
            body +=
                "<rect class=\"loss\" x=\"\(n(x0))\" y=\"\(n(bottom + 2))\" width=\"\(n(max(1, step)))\" height=\"6\">"
            body +=
                "<title>\(clock(b.start)) UTC: \(b.failures) of \(b.failures + b.count) failed (\(percent(b.lossRatio)))\(avg)</title></rect>"
        }
        var grid = ""
        for f in [0.0, 0.5, 1.0] {
            let yy = n(bottom - f * (bottom - top))
            grid += "<line x1=\"\(n(left))\" y1=\"\(yy)\" x2=\"\(n(right))\" y2=\"\(yy)\" class=\"grid\"/>"
            grid +=
                "<text x=\"\(n(left - 6))\" y=\"\(yy)\" dy=\"4\" text-anchor=\"end\" class=\"axis\">\(msLabel(f * maxMs))</text>"
        }
        let aria = HTML.escape("RTT of \(series.name) over the last 24 hours, up to \(msLabel(maxMs))")
        return """
            <svg class="chart rtt" viewBox="0 0 1000 126" role="img" aria-label="\(aria)">\
            \(grid)\(body)\(hourTicks(from: from, to: to, y: 122, top: bottom + 8, left: left, right: right))</svg>

            """
    }

    static func msLabel(_ ms: Double) -> String {
        ms == 0 ? "0" : ms < 10 ? n(ms) + " ms" : String(Int(ms.rounded())) + " ms"
    }

    /// Availability per UTC day: a bar per day, its percentage written above it.
    static func days(_ days: [DayAvailability]) -> String {
        let slot = width / Double(max(1, days.count))
        let top = 22.0
        let bottom = 112.0
        var bars = ""
        for (i, d) in days.enumerated() {
            let x0 = Double(i) * slot + 3
            let w = slot - 6
            let cx = n(Double(i) * slot + slot / 2)
            let a = d.availability
            let colour = !a.isFinite ? gapColour : a >= 0.999 ? "#1a7f37" : a >= 0.99 ? "#9a6700" : "#cf222e"
            let h = a.isFinite ? max(2, a * (bottom - top)) : 2
            let date = UTCTime.date(day: d.day)
            let title =
                a.isFinite
                ? "\(date): \(percent(a)) available, \(HTML.age(d.down)) not full, \(percent(d.coverage)) of the day covered"
                : "\(date): no data"
            let dayLabel = i == days.count - 1 ? "today" : String(date.suffix(2))
            bars += "<g class=\"day\" data-day=\"\(date)\"><title>\(title)</title>"
            bars +=
                "<rect x=\"\(n(x0))\" y=\"\(n(top))\" width=\"\(n(w))\" height=\"\(n(bottom - top))\" class=\"slot\"/>"
            bars +=
                "<rect x=\"\(n(x0))\" y=\"\(n(bottom - h))\" width=\"\(n(w))\" height=\"\(n(h))\" fill=\"\(colour)\"/>"
            bars +=
                "<text x=\"\(cx)\" y=\"\(n(top - 6))\" text-anchor=\"middle\" class=\"pct\">\(a.isFinite ? String(percent(a).dropLast()) : "n/a")</text>"
            bars +=
                "<text x=\"\(cx)\" y=\"\(n(bottom + 14))\" text-anchor=\"middle\" class=\"axis\">\(dayLabel)</text></g>"
        }
        let range =
            days.first.map { "\(UTCTime.date(day: $0.day)) to \(UTCTime.date(day: days[days.count - 1].day))" } ?? ""
        return """
            <svg class="chart" id="days" viewBox="0 0 1000 132" role="img" aria-label="Availability per UTC day, \(range)">\(bars)</svg>

            """
    }
}
