import ReachabilityVerdict

/// A stretch of time during which one verdict held, as far as the history knows.
package struct Segment: Sendable, Equatable {
    package var start: Double
    package var end: Double
    package var verdict: Verdict

    package init(_ start: Double, _ end: Double, _ verdict: Verdict) {
        self.start = start
        self.end = end
        self.verdict = verdict
    }

    package var length: Double { end - start }
}

/// The coverage rule, shared by the live availability gauges and the `history` report so both
/// always agree (docs/history-format.md, "Coverage"):
///
/// - A round's verdict is decided at `at = time + duration` and holds from then until the next
///   round's `at`, but for at most `cap` seconds (twice the configured interval): a longer
///   silence means the exporter was not running (or not probing), which is a gap, not an outage.
/// - A `start` or `stop` record ends the previous round's coverage at its own time.
/// - Time is never covered twice. If the wall clock steps backwards, rounds are still read in
///   the order they were written, and only coverage beyond the latest covered instant counts,
///   unless the step is larger than `stepTolerance`: then the records dated after the landing
///   point came from a clock that was wrong (or has been set back), and coverage starts again
///   there (`rewinds` counts these; a consumer that keeps segments drops those past `rewoundTo`).
/// - `unknown` covers nothing: it is a gap too.
///
/// Segments come out in increasing, non-overlapping order. Pure; feed it in file order.
package struct VerdictTimeline: Sendable {
    /// Time is covered up to here, never again before it.
    package private(set) var horizon = -Double.infinity
    private var last: (at: Double, verdict: Verdict, cap: Double)?
    /// How many backward clock steps larger than `stepTolerance` were seen, and where the latest landed.
    package private(set) var rewinds = 0
    package private(set) var rewoundTo = -Double.infinity
    /// A backward step up to this is NTP's ordinary correction: the overlap is simply not covered twice.
    package static let stepTolerance = 60.0

    package init() {}

    /// A verdict decided at `at` that may hold for `cap` seconds; returns the previous
    /// round's finished segment, if it covered anything.
    package mutating func add(at: Double, verdict: Verdict, cap: Double) -> Segment? {
        let done = rewindIfStepped(to: at) ? nil : close(until: at)
        last = (at, verdict, max(0, cap))
        return done
    }

    /// Ends coverage at `time` (the exporter started or stopped).
    package mutating func cut(at time: Double) -> Segment? {
        let done = rewindIfStepped(to: time) ? nil : close(until: time)
        last = nil
        return done
    }

    /// A time far before what is already covered: forget coverage from there on.
    private mutating func rewindIfStepped(to t: Double) -> Bool {
        guard t < max(horizon, last?.at ?? -.infinity) - Self.stepTolerance else { return false }
        horizon = t
        last = nil
        rewinds += 1
        rewoundTo = t
        return true
    }

    /// The latest round's coverage so far, as of `now` (still growing, not final).
    package func pending(now: Double) -> Segment? {
        guard let last else { return nil }
        return Self.segment(last, horizon: horizon, until: now)
    }

    /// The latest verdict and when it was decided.
    package var latest: (at: Double, verdict: Verdict)? { last.map { ($0.at, $0.verdict) } }

    private mutating func close(until t: Double) -> Segment? {
        guard let last else { return nil }
        let s = Self.segment(last, horizon: horizon, until: t)
        if let s {
            horizon = s.end
        } else if last.verdict.state == .unknown {
            horizon = max(horizon, min(t, last.at + last.cap))
        }
        return s
    }

    private static func segment(_ last: (at: Double, verdict: Verdict, cap: Double), horizon: Double, until t: Double)
        -> Segment?
    {
        let start = max(last.at, horizon)
        let end = min(t, last.at + last.cap)
        guard end > start, last.verdict.state != .unknown else { return nil }
        return Segment(start, end, last.verdict)
    }
}

/// Anything built from the overall verdict's coverage: rounds extend it (each covering at most
/// `cap` seconds), start and stop records cut it. `replay` feeds it one event read back from the
/// history.
protocol CoverageLog {
    mutating func add(at: Double, verdict: Verdict, cap: Double)
    mutating func cut(at time: Double)
}

extension CoverageLog {
    /// Feeds one history event, in file order.
    mutating func replay(_ event: HistoryEvent) {
        switch event {
        case .round(let r): add(at: r.at, verdict: r.overall, cap: 2 * r.interval)
        case .start(let time, _), .stop(let time): cut(at: time)
        case .transition: break
        }
    }
}
