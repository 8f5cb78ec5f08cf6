import ReachabilityVerdict

/// A stretch of the status page's timeline: a verdict, or a gap where the history has none
/// (the exporter was not running, or not probing).
package struct TimelineSpan: Sendable, Equatable {
    package var start: Double
    package var end: Double
    /// Nil for a gap.
    package var verdict: Verdict?
    /// How many spans were folded into this one to keep it at least a pixel wide (1 = none).
    package var merged = 1

    package init(_ start: Double, _ end: Double, _ verdict: Verdict?, merged: Int = 1) {
        self.start = start
        self.end = end
        self.verdict = verdict
        self.merged = merged
    }

    package var length: Double { end - start }

    /// Which of two folded spans shows: the worse state (a gap ranks between full and limited).
    static func severity(_ v: Verdict?) -> Int {
        switch v?.state {
        case .full?: 0
        case nil, .unknown?: 1
        case .limited?: 2
        case .portal?: 3
        case .none?: 4
        }
    }
}

/// RTT of one probe in one time bucket: successful results give min/avg/max, the others count
/// as failures (the bucket's loss).
package struct RTTBucket: Sendable, Equatable {
    package var start: Double
    package var count = 0
    package var failures = 0
    package var min = Double.infinity
    package var max = 0.0
    package var sum = 0.0

    package init(start: Double) { self.start = start }

    /// Seconds; nil when no result in the bucket succeeded.
    package var average: Double? { count > 0 ? sum / Double(count) : nil }
    package var lossRatio: Double { count + failures > 0 ? Double(failures) / Double(count + failures) : 0 }

    mutating func add(_ p: ProbeRecord) {
        guard p.status == .success else {
            failures += 1
            return
        }
        count += 1
        min = Swift.min(min, p.duration)
        max = Swift.max(max, p.duration)
        sum += p.duration
    }
}

/// One probe's RTT over the last 24 hours, oldest bucket first.
package struct RTTSeries: Sendable, Equatable {
    /// The probe's target label (`name` or `name@interface`).
    package var name: String
    package var type: ProbeType
    package var buckets: [RTTBucket]
}

/// The status page's history, as of one instant: immutable, rendered without locks.
package struct StatusHistorySnapshot: Sendable {
    package var from: Double
    package var to: Double
    /// The overall verdict over `[from, to]`, gaps included, in order, without holes.
    package var timeline: [TimelineSpan]
    /// Each IP family's and uplink's verdict over `[from, to]` like `timeline` (labels `IPv4`,
    /// `IPv6`, `uplink NAME`, sorted), for scopes with a verdict somewhere in the window.
    package var scopes: [(label: String, timeline: [TimelineSpan])]
    /// Sorted by name.
    package var rtt: [RTTSeries]
    /// The last `StatusHistory.dayCount` UTC days, oldest first; the last one is today so far.
    package var days: [DayAvailability]
    /// The most recent overall outages, newest first (an ongoing one included).
    package var outages: [Outage]
    /// False while the probe results of the last day are still being read from the files.
    package var samplesLoaded: Bool
    /// Changes whenever the history changes (a round, a restart, the RTT load).
    package var generation: Int

    /// The timeline with runs of spans shorter than `minLength` folded together until they reach
    /// it (the worst state shows), so a flapping day draws a bounded number of rectangles (at
    /// most about two per `minLength`). A short span beside a long one stays on its own.
    package func timeline(minLength: Double) -> [TimelineSpan] { Self.fold(timeline, minLength: minLength) }

    /// `spans` folded as `timeline(minLength:)` describes.
    package static func fold(_ spans: [TimelineSpan], minLength: Double) -> [TimelineSpan] {
        var out: [TimelineSpan] = []
        for s in spans {
            if var last = out.last, last.length < minLength, s.length < minLength {
                if TimelineSpan.severity(s.verdict) > TimelineSpan.severity(last.verdict) { last.verdict = s.verdict }
                last.end = s.end
                last.merged += s.merged
                out[out.count - 1] = last
            } else {
                out.append(s)
            }
        }
        return out
    }
}

/// The state behind `StatusHistory`: the overall timeline of the last 24 hours, availability per
/// UTC day, the outage log and RTT buckets per probe, each pruned as time passes. Pure; feed it
/// in time order (RTT samples may come in any order).
struct StatusHistoryLog: CoverageLog {
    static let span: Double = 86_400
    static let bucketSeconds: Double = 300
    static let maxOutages = 100
    static let maxProbes = 32

    private var overall = ScopeLog(name: .overall)
    private static let everything = -Double.infinity...Double.infinity
    /// Covered segments, merged, at least the last `span` seconds of them.
    private var segments: [Segment] = []
    private var upDown: [Int: (up: Double, down: Double)] = [:]
    private var series: [String: (type: ProbeType, buckets: [Int: RTTBucket])] = [:]
    private var newestBucket = Int.min / 2  // half: `newestBucket - keep` must not overflow
    private(set) var generation = 0
    var samplesLoaded = false { didSet { generation += 1 } }
    static let maxScopes = 16
    /// Per family and uplink (keyed by label): the covered segments of the last `span`.
    private var scopes: [String: (timeline: VerdictTimeline, segments: [Segment])] = [:]

    /// A round's family and uplink verdicts. `unknown` ends a scope's coverage (no data, as in the
    /// overall timeline) but does not create a scope: one never known draws no band.
    mutating func addScopes(families: [(String, Verdict)], uplinks: [(String, Verdict)], at: Double, cap: Double) {
        let labelled =
            families.map { (IPFamily(rawValue: $0.0).map(Self.label) ?? $0.0, $0.1) }
            + uplinks.map { ("uplink \($0.0)", $0.1) }
        for (label, verdict) in labelled where scopes[label] != nil || verdict.state != .unknown {
            if scopes[label] == nil, scopes.count >= Self.maxScopes {
                // Free the slots of scopes gone for a day (an uplink removed by a reload).
                scopes = scopes.filter {
                    ($0.value.segments.last?.end ?? -.infinity) >= at - Self.span
                        || $0.value.timeline.latest.map { $0.at >= at - Self.span } == true
                }
                guard scopes.count < Self.maxScopes else { continue }
            }
            let segment = scopes[label, default: (VerdictTimeline(), [])].timeline.add(
                at: at, verdict: verdict, cap: cap)
            takeScope(label, segment)
        }
    }

    static func label(_ family: IPFamily) -> String { family == .ipv4 ? "IPv4" : "IPv6" }

    private mutating func takeScope(_ label: String, _ segment: Segment?) {
        guard let s = segment, s.end > s.start else { return }
        generation += 1
        Self.append(s, to: &scopes[label]!.segments)
        let drop = scopes[label]!.segments.prefix { $0.end < s.end - Self.span }.count
        if drop > 64 { scopes[label]!.segments.removeFirst(drop) }
    }

    /// Appends `s`, merged into the last segment when it continues it with the same verdict.
    private static func append(_ s: Segment, to segments: inout [Segment]) {
        if let last = segments.last, last.end == s.start, last.verdict == s.verdict {
            segments[segments.count - 1].end = s.end
        } else {
            segments.append(s)
        }
    }

    mutating func add(at: Double, verdict: Verdict, cap: Double) {
        take(overall.timeline.add(at: at, verdict: verdict, cap: cap))
    }

    mutating func cut(at time: Double) {
        take(overall.timeline.cut(at: time))
        for label in scopes.keys {
            takeScope(label, scopes[label]!.timeline.cut(at: time))
            // A scope with nothing left in the window (an uplink removed a day ago) goes.
            if let last = scopes[label]!.segments.last, last.end < time - Self.span { scopes[label] = nil }
        }
    }

    private mutating func take(_ segment: Segment?) {
        generation += 1
        guard let s = overall.take(segment, window: Self.everything) else { return }
        Self.append(s, to: &segments)
        let drop = segments.prefix { $0.end < s.end - Self.span }.count
        if drop > 64 { segments.removeFirst(drop) }
        DayAvailability.split(s) { day, seconds in
            if upDown[day] == nil { upDown = upDown.filter { $0.key > day - StatusHistory.dayCount } }
            if s.verdict.state == .full {
                upDown[day, default: (0, 0)].up += seconds
            } else {
                upDown[day, default: (0, 0)].down += seconds
            }
        }
        if overall.outages.count > 2 * Self.maxOutages {
            overall.outages.removeFirst(overall.outages.count - Self.maxOutages)
        }
    }

    /// Adds a round's probe results to the bucket of `time` (the round's start).
    mutating func addSamples(_ probes: [ProbeRecord], at time: Double) {
        let index = Int((time / Self.bucketSeconds).rounded(.down))
        let keep = Int(Self.span / Self.bucketSeconds)
        guard index > newestBucket - keep else { return }
        generation += 1
        if index > newestBucket {
            newestBucket = index
            for (name, s) in series {
                let kept = s.buckets.filter { $0.key > index - keep }
                series[name] = kept.isEmpty ? nil : (s.type, kept)
            }
        }
        for p in probes {
            let name = MetricsRecorder.targetLabel(p.name, p.interface)
            guard series[name] != nil || series.count < Self.maxProbes else { continue }
            series[name, default: (p.type, [:])].buckets[
                index, default: RTTBucket(start: Double(index) * Self.bucketSeconds)
            ].add(p)
        }
    }

    /// What is held, for tests of the memory bound.
    var retained: (segments: Int, days: Int, buckets: Int, outages: Int) {
        (segments.count, upDown.count, series.values.reduce(0) { $0 + $1.buckets.count }, overall.outages.count)
    }

    func snapshot(now: Double) -> StatusHistorySnapshot {
        let from = now - Self.span
        var log = overall
        let pending = log.finish(now: now, window: -Double.infinity...now)
        let timeline = Self.spans(segments, pending: pending, from: from, now: now)
        let scopeTimelines = scopes.keys.sorted().compactMap { label -> (label: String, timeline: [TimelineSpan])? in
            let scope = scopes[label]!
            let spans = Self.spans(scope.segments, pending: scope.timeline.pending(now: now), from: from, now: now)
            return spans.contains { $0.verdict != nil } ? (label, spans) : nil
        }

        let today = UTCTime.day(of: now)
        var totals = upDown
        if let p = pending {
            DayAvailability.split(p) { day, seconds in
                if p.verdict.state == .full {
                    totals[day, default: (0, 0)].up += seconds
                } else {
                    totals[day, default: (0, 0)].down += seconds
                }
            }
        }
        let days = (today - StatusHistory.dayCount + 1...today).map { day in
            let length = min(now, Double(day + 1) * 86_400) - Double(day) * 86_400
            return DayAvailability(day: day, length: length, up: totals[day]?.up ?? 0, down: totals[day]?.down ?? 0)
        }
        let rtt = series.map { name, s in
            RTTSeries(
                name: name, type: s.type,
                buckets: s.buckets.values.filter { $0.start + Self.bucketSeconds > from }.sorted { $0.start < $1.start }
            )
        }.filter { !$0.buckets.isEmpty }.sorted { $0.name < $1.name }
        return StatusHistorySnapshot(
            from: from, to: now, timeline: timeline, scopes: scopeTimelines, rtt: rtt, days: days,
            outages: Array(log.outages.suffix(StatusHistory.outageCount).reversed()),
            samplesLoaded: samplesLoaded, generation: generation)
    }

    /// `[from, now]` as spans: the covered segments (plus the pending one) clipped to it, with
    /// gaps between them; no holes, no overlaps.
    private static func spans(_ segments: [Segment], pending: Segment?, from: Double, now: Double) -> [TimelineSpan] {
        var covered = segments
        if let p = pending, p.end > p.start { append(p, to: &covered) }
        var out: [TimelineSpan] = []
        var t = from
        for s in covered where s.end > from && s.start < now {
            let start = max(s.start, from, t)
            let end = min(s.end, now)
            guard end > start else { continue }
            if start > t { out.append(TimelineSpan(t, start, nil)) }
            out.append(TimelineSpan(start, end, s.verdict))
            t = end
        }
        if t < now { out.append(TimelineSpan(t, now, nil)) }
        return out
    }
}
