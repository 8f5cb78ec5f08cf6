import ReachabilityVerdict

/// Up and covered time in sliding windows, answered in O(log n) from prefix sums over merged
/// segments, so the availability gauges stay current per round (and per scrape) without
/// re-reading files. Segments older than the longest window are dropped as time passes.
package struct AvailabilityLedger: Sendable, CoverageLog {
    /// How far back segments are kept (the longest window).
    package let keep: Double
    private var timeline = VerdictTimeline()
    private var starts: [Double] = []
    private var ends: [Double] = []
    private var ups: [Bool] = []
    /// Covered and up seconds in all segments before index i.
    private var coveredBefore: [Double] = []
    private var upBefore: [Double] = []
    private var head = 0

    package init(keep: Double) { self.keep = keep }

    /// Time in a window: how much the history covers and how much of that was `full`.
    package struct Window: Sendable, Equatable {
        package var covered: Double
        package var up: Double
        /// Up over covered; NaN when nothing is covered.
        package var availability: Double { covered > 0 ? up / covered : .nan }
    }

    package mutating func add(at: Double, verdict: Verdict, cap: Double) {
        let rewinds = timeline.rewinds
        let s = timeline.add(at: at, verdict: verdict, cap: cap)
        if timeline.rewinds != rewinds { forget(after: timeline.rewoundTo) }
        if let s { append(s) }
    }

    package mutating func cut(at time: Double) {
        let rewinds = timeline.rewinds
        let s = timeline.cut(at: time)
        if timeline.rewinds != rewinds { forget(after: timeline.rewoundTo) }
        if let s { append(s) }
    }

    /// The clock stepped back to `t`: segments dated after it are dropped (the prefix sums of
    /// those kept stay valid), so the windows count the time lived from there on.
    private mutating func forget(after t: Double) {
        var n = ends.count
        while n > head, starts[n - 1] >= t { n -= 1 }
        let drop = ends.count - n
        starts.removeLast(drop)
        ends.removeLast(drop)
        ups.removeLast(drop)
        coveredBefore.removeLast(drop)
        upBefore.removeLast(drop)
        if n > head, ends[n - 1] > t { ends[n - 1] = t }
    }

    /// The latest verdict fed in.
    package var latest: (at: Double, verdict: Verdict)? { timeline.latest }

    private mutating func append(_ s: Segment) {
        let up = s.verdict.state == .full
        if let last = ends.indices.last, last >= head, ends[last] == s.start, ups[last] == up {
            ends[last] = s.end
            return
        }
        let n = ends.count
        let covered = n == 0 ? 0 : coveredBefore[n - 1] + (ends[n - 1] - starts[n - 1])
        let upTotal = n == 0 ? 0 : upBefore[n - 1] + (ups[n - 1] ? ends[n - 1] - starts[n - 1] : 0)
        starts.append(s.start)
        ends.append(s.end)
        ups.append(up)
        coveredBefore.append(covered)
        upBefore.append(upTotal)
        prune(before: s.end - keep)
    }

    private mutating func prune(before limit: Double) {
        while head < ends.count - 1, ends[head] < limit { head += 1 }
        if head > 1024, head * 2 > ends.count {
            starts.removeFirst(head)
            ends.removeFirst(head)
            ups.removeFirst(head)
            coveredBefore.removeFirst(head)
            upBefore.removeFirst(head)
            head = 0
        }
    }

    /// Covered and up time in (-inf, x] among the finished segments.
    private func cumulative(_ x: Double) -> (covered: Double, up: Double) {
        guard head < starts.count else { return (0, 0) }
        // The last segment starting at or before x.
        var lo = head
        var hi = starts.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if starts[mid] <= x { lo = mid + 1 } else { hi = mid }
        }
        let i = lo - 1
        guard i >= head else { return (coveredBefore[head], upBefore[head]) }
        let part = min(max(0, x - starts[i]), ends[i] - starts[i])
        return (coveredBefore[i] + part, upBefore[i] + (ups[i] ? part : 0))
    }

    /// Covered and up time in [now - length, now], including the latest round's coverage so far.
    package func window(_ length: Double, now: Double) -> Window {
        let from = now - length
        let a = cumulative(from)
        let b = cumulative(now)
        var w = Window(covered: max(0, b.covered - a.covered), up: max(0, b.up - a.up))
        if let p = timeline.pending(now: now) {
            let part = max(0, min(p.end, now) - max(p.start, from))
            w.covered += part
            if p.verdict.state == .full { w.up += part }
        }
        return w
    }
}
