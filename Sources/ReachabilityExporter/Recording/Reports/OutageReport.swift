import ReachabilityVerdict

/// A period in which one scope's verdict was not `full`, as the history recorded it.
package struct Outage: Sendable, Equatable {
    /// How the period ended.
    package enum End: String, Sendable {
        /// The verdict returned to `full`.
        case recovered
        /// Another non-full verdict (state or reason) followed at once; it has its own row.
        case changed
        /// The record stops (the exporter was not running, or the window's data ends).
        case gap
        /// Still the verdict at the end of the window.
        case ongoing
    }

    package var scope: Scope
    package var start: Double
    package var end: Double
    package var state: ConnectivityState
    package var reason: VerdictReason?
    package var ended: End
    /// Where the path broke, from the transition record that began the period (nil in history
    /// written before fault localization).
    package var fault: Fault? = nil

    package var duration: Double { end - start }
}

/// One UTC day of the overall verdict (clipped to the report window).
package struct DayAvailability: Sendable, Equatable {
    /// Days since 1970-01-01.
    package var day: Int
    /// Seconds of this day inside the window.
    package var length: Double
    package var up: Double
    package var down: Double

    package var covered: Double { up + down }
    package var gap: Double { max(0, length - covered) }
    /// NaN when nothing of the day is covered.
    package var availability: Double { covered > 0 ? up / covered : .nan }
    package var coverage: Double { length > 0 ? covered / length : 0 }

    /// Calls `body` with each UTC day a segment touches and the seconds it spends in it.
    static func split(_ s: Segment, _ body: (_ day: Int, _ seconds: Double) -> Void) {
        var t = s.start
        while t < s.end {
            let day = UTCTime.day(of: t)
            let dayEnd = Double(day + 1) * 86_400
            body(day, min(s.end, dayEnd) - t)
            t = min(s.end, dayEnd)
        }
    }
}

/// The `history` subcommand's answer: outages per scope, availability per day and over the
/// window, and the standard sliding windows (the same numbers the gauges would show now).
/// Built in one pass over the files with the same coverage rule as the live gauges.
package struct OutageReport: Sendable {
    package var from: Double
    package var to: Double
    package var outages: [Outage]
    package var days: [DayAvailability]
    /// The whole report window.
    package var total: AvailabilityLedger.Window
    /// 1h, 1d, 7d, 30d ending at `to`.
    package var windows: [(label: String, window: AvailabilityLedger.Window)]
    package var stats: HistoryReader.Stats

    /// Reads `directory` and reports the window `[now - since, now]`.
    package static func build(directory: String, since: Duration, now: Double) throws(HistoryStoreError) -> OutageReport
    {
        var builder = OutageReportBuilder(from: now - since.seconds, to: now)
        let stats = try HistoryReader.read(directory: directory, from: now - since.seconds - 86_400) {
            builder.feed($0)
        }
        return builder.finish(stats: stats)
    }
}

/// One scope's timeline, merged into runs of one verdict and cut into outages.
struct ScopeLog {
    let name: Scope
    var timeline = VerdictTimeline()
    private var run: Segment?
    /// Closed outages, oldest first (a live log may drop old ones).
    var outages: [Outage] = []
    /// The latest transition record of this scope: its fault names the location of the run
    /// that has its `to` verdict.
    private var transition: TransitionRecord?

    mutating func note(_ t: TransitionRecord) { transition = t }

    init(name: Scope) { self.name = name }

    /// Adds a finished segment (clipped to the window); returns the clipped segment.
    @discardableResult
    mutating func take(_ s: Segment?, window: ClosedRange<Double>) -> Segment? {
        guard var s else { return nil }
        s.start = max(s.start, window.lowerBound)
        s.end = min(s.end, window.upperBound)
        guard s.end > s.start else { return nil }
        if var r = run, r.end == s.start, r.verdict == s.verdict {
            r.end = s.end
            run = r
        } else {
            if let r = run {
                close(r, ended: r.end == s.start ? (s.verdict.state == .full ? .recovered : .changed) : .gap)
            }
            run = s
        }
        return s
    }

    mutating func finish(now: Double, window: ClosedRange<Double>) -> Segment? {
        let last = take(timeline.pending(now: now), window: window)
        if let r = run { close(r, ended: r.end >= window.upperBound ? .ongoing : .gap) }
        run = nil
        return last
    }

    private mutating func close(_ r: Segment, ended: Outage.End) {
        guard r.verdict.state != .full else { return }
        var outage = Outage(
            scope: name, start: r.start, end: r.end, state: r.verdict.state, reason: r.verdict.reason, ended: ended)
        if let t = transition, t.to == r.verdict, t.time <= r.end { outage.fault = t.fault }
        outages.append(outage)
    }
}

/// Consumes events in file order and accumulates the report.
struct OutageReportBuilder {
    let window: ClosedRange<Double>
    private var overall = ScopeLog(name: .overall)
    private var scopes: [ScopeLog] = []
    private var scopeIndex: [Scope: Int] = [:]
    /// The scope slot of each position in the previous round's families and uplinks: rounds
    /// list the same scopes in the same order, so a string compare replaces a hash lookup.
    private var lastSlots: [Int] = []
    private var ledger = AvailabilityLedger(keep: HistoryMetrics.windows.map(\.seconds).max() ?? 0)
    private let firstDay: Int
    private var up: [Double]
    private var down: [Double]

    init(from: Double, to: Double) {
        window = min(from, to)...to
        firstDay = UTCTime.day(of: window.lowerBound)
        let count = UTCTime.day(of: window.upperBound) - firstDay + 1
        up = Array(repeating: 0, count: count)
        down = Array(repeating: 0, count: count)
    }

    mutating func feed(_ event: HistoryEvent) {
        switch event {
        case .round(let r):
            let cap = 2 * r.interval
            account(overall.take(overall.timeline.add(at: r.at, verdict: r.overall, cap: cap), window: window))
            ledger.add(at: r.at, verdict: r.overall, cap: cap)
            var position = 0
            for v in r.families {
                addScope(v, position: position, at: r.at, cap: cap)
                position += 1
            }
            for v in r.uplinks {
                addScope(v, position: position, at: r.at, cap: cap)
                position += 1
            }
        case .start(let time, _), .stop(let time):
            account(overall.take(overall.timeline.cut(at: time), window: window))
            ledger.cut(at: time)
            for i in scopes.indices { scopes[i].take(scopes[i].timeline.cut(at: time), window: window) }
        case .transition(let t):
            if t.scope == .overall { overall.note(t) } else { scopes[index(t.scope)].note(t) }
        }
    }

    private mutating func addScope(_ v: NamedVerdict, position: Int, at: Double, cap: Double) {
        let i: Int
        if position < lastSlots.count, scopes[lastSlots[position]].name.label == v.name {
            i = lastSlots[position]
        } else {
            i = index(Scope(label: v.name))
            if position < lastSlots.count { lastSlots[position] = i } else { lastSlots.append(i) }
        }
        scopes[i].take(scopes[i].timeline.add(at: at, verdict: v.verdict, cap: cap), window: window)
    }

    private mutating func index(_ name: Scope) -> Int {
        if let i = scopeIndex[name] { return i }
        scopes.append(ScopeLog(name: name))
        scopeIndex[name] = scopes.count - 1
        return scopes.count - 1
    }

    /// Adds an overall segment to the per-day totals, split at midnight UTC.
    private mutating func account(_ s: Segment?) {
        guard let s else { return }
        let isUp = s.verdict.state == .full
        DayAvailability.split(s) { day, part in
            let i = day - firstDay
            if i >= 0 && i < up.count {
                if isUp { up[i] += part } else { down[i] += part }
            }
        }
    }

    mutating func finish(stats: HistoryReader.Stats) -> OutageReport {
        let now = window.upperBound
        account(overall.finish(now: now, window: window))
        var outages = overall.outages
        for i in scopes.indices {
            _ = scopes[i].finish(now: now, window: window)
            outages += scopes[i].outages
        }
        outages.sort { a, b in a.start != b.start ? a.start < b.start : a.scope < b.scope }
        var days: [DayAvailability] = []
        var total = AvailabilityLedger.Window(covered: 0, up: 0)
        for i in up.indices {
            let day = firstDay + i
            let start = max(window.lowerBound, Double(day) * 86_400)
            let end = min(window.upperBound, Double(day + 1) * 86_400)
            guard end > start else { continue }  // the window ends exactly at midnight
            days.append(DayAvailability(day: day, length: end - start, up: up[i], down: down[i]))
            total.up += up[i]
            total.covered += up[i] + down[i]
        }
        let windows = HistoryMetrics.windows.map { ($0.label, ledger.window($0.seconds, now: now)) }
        return OutageReport(
            from: window.lowerBound, to: now, outages: outages, days: days, total: total, windows: windows, stats: stats
        )
    }
}
