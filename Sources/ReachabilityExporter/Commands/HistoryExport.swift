import ReachabilityVerdict

/// `history export --format=openmetrics`: the verdict series reconstructed from the history,
/// with timestamps, for `promtool tsdb create-blocks-from openmetrics` (backfilling what a
/// central Prometheus could not scrape while a site was offline).
///
/// What is written, per step grid point (multiples of `step`) that a verdict covers — the same
/// coverage rule as the availability gauges (docs/history-format.md): a round's verdict holds
/// until the next round, for at most twice the interval; `start`/`stop` end it; `unknown`
/// covers nothing. Uncovered time has no samples (a gap, as a missed scrape would be).
/// - `reachability_internet_reachable`, `reachability_family_internet_reachable{family}`,
///   `reachability_uplink_internet_reachable{interface}`: 1 when full, else 0;
/// - `reachability_connectivity_state{state}` and the family/uplink variants: 1 for the
///   state, 0 for the other four;
/// - `reachability_connectivity_info{scope,state,reason}`: 1;
/// - `reachability_state_transitions_total{from,to}`: overall transitions counted from the
///   start of the export window.
/// Every series also carries `labels` (job, instance, site: whatever the live series have).
package struct HistoryExport: Sendable {
    package var from: Double
    package var to: Double
    /// Runs of one verdict per scope, oldest first: `overall` first, then families, then uplinks.
    package var scopes: [(scope: Scope, runs: [Segment])]
    /// Overall transitions inside the window, oldest first.
    package var transitions: [TransitionRecord]
    package var stats: HistoryReader.Stats

    /// Reads `directory` for the window `[now - since, now]`.
    package static func build(directory: String, since: Duration, now: Double) throws(HistoryStoreError)
        -> HistoryExport
    {
        let from = now - since.seconds
        var builder = Builder(window: from...now)
        let stats = try HistoryReader.read(directory: directory, from: from - 86_400) { builder.feed($0) }
        var export = builder.finish(now: now)
        export.stats = stats
        return export
    }

    /// Collects merged runs per scope with the coverage rule (`VerdictTimeline`).
    struct Builder {
        let window: ClosedRange<Double>
        var logs: [Scope: (timeline: VerdictTimeline, runs: [Segment])] = [:]
        var order: [Scope] = []
        var transitions: [TransitionRecord] = []

        init(window: ClosedRange<Double>) { self.window = window }

        mutating func feed(_ event: HistoryEvent) {
            switch event {
            case .round(let r):
                let cap = 2 * r.interval
                add(.overall, r.overall, at: r.at, cap: cap)
                for v in r.families { add(Scope(label: v.name), v.verdict, at: r.at, cap: cap) }
                for v in r.uplinks { add(Scope(label: v.name), v.verdict, at: r.at, cap: cap) }
            case .start(let time, _), .stop(let time):
                for name in order { take(name, logs[name]?.timeline.cut(at: time)) }
            case .transition(let t):
                if t.scope == .overall, window.contains(t.time) { transitions.append(t) }
            }
        }

        private mutating func add(_ name: Scope, _ verdict: Verdict, at: Double, cap: Double) {
            if logs[name] == nil {
                logs[name] = (VerdictTimeline(), [])
                order.append(name)
            }
            take(name, logs[name]?.timeline.add(at: at, verdict: verdict, cap: cap))
        }

        private mutating func take(_ name: Scope, _ segment: Segment?) {
            guard var s = segment else { return }
            s.start = max(s.start, window.lowerBound)
            s.end = min(s.end, window.upperBound)
            // Taken out of the dictionary and put back, so the runs are mutated in place, not copied.
            guard s.end > s.start, var entry = logs.removeValue(forKey: name) else { return }
            if let last = entry.runs.last, last.end == s.start, last.verdict == s.verdict {
                entry.runs[entry.runs.count - 1].end = s.end
            } else {
                entry.runs.append(s)
            }
            logs[name] = entry
        }

        mutating func finish(now: Double) -> HistoryExport {
            for name in order { take(name, logs[name]?.timeline.pending(now: now)) }
            let names = order.sorted()
            return HistoryExport(
                from: window.lowerBound, to: window.upperBound,
                scopes: names.map { ($0, logs[$0]?.runs ?? []) }, transitions: transitions,
                stats: HistoryReader.Stats())
        }
    }
}

extension HistoryExport {
    private static let states: [ConnectivityState] = [.unknown, .none, .portal, .limited, .full]

    /// The OpenMetrics text, ending in `# EOF`, written in chunks to `write` (a month at a
    /// 15 s step is tens of megabytes: it is never held whole).
    // Long on purpose: one loop per metric family, each family contiguous as OpenMetrics requires.
    package func renderOpenMetrics(step: Double, labels: [(String, String)], write: (String) -> Void) {
        var out = ""
        func flush(force: Bool = false) {
            if force || out.utf8.count > 1 << 16 {
                write(out)
                out = ""
            }
        }
        let extra = labels.map { ($0.0, $0.1) }
        func series(_ name: String, _ pairs: [(String, String)]) -> String {
            let all = extra + pairs
            guard !all.isEmpty else { return name }
            var bytes: [UInt8] = []
            for (i, (k, v)) in all.enumerated() {
                if i > 0 { bytes.append(UInt8(ascii: ",")) }
                bytes += Array(k.utf8) + Array("=\"".utf8)
                MetricName.escapeLabelValue(v, into: &bytes)
                bytes.append(UInt8(ascii: "\""))
            }
            return name + "{" + String(decoding: bytes, as: UTF8.self) + "}"
        }
        func points(_ runs: [Segment], _ body: (Double, Verdict) -> Void) {
            for run in runs {
                var t = (run.start / step).rounded(.up) * step
                while t < run.end {
                    body(t, run.verdict)
                    t += step
                }
            }
        }
        func time(_ t: Double) -> String { Self.timestamp(t) }
        // The label writer: scopes become label values here.
        var families: [(name: String, runs: [Segment])] = []
        var uplinks: [(name: String, runs: [Segment])] = []
        var overall: [Segment] = []
        for (scope, runs) in scopes {
            switch scope {
            case .overall: overall = runs
            case .family(let f): families.append((f.rawValue, runs))
            case .uplink(let name): uplinks.append((name, runs))
            }
        }
        typealias Family = (metric: String, label: String?, scopes: [(name: String, runs: [Segment])])
        let reachable: [Family] = [
            ("reachability_internet_reachable", nil, [(Scope.overall.label, overall)]),
            ("reachability_family_internet_reachable", "family", families),
            ("reachability_uplink_internet_reachable", "interface", uplinks),
        ]
        for (metric, label, scopes) in reachable where !scopes.allSatisfy({ $0.runs.isEmpty }) {
            out += "# TYPE \(metric) gauge\n"
            for scope in scopes {
                let name = series(metric, label.map { [($0, scope.name)] } ?? [])
                points(scope.runs) { t, v in
                    out += "\(name) \(v.state == .full ? 1 : 0) \(time(t))\n"
                    flush()
                }
            }
        }
        let stateFamilies: [Family] = [
            ("reachability_connectivity_state", nil, [(Scope.overall.label, overall)]),
            ("reachability_family_connectivity_state", "family", families),
            ("reachability_uplink_connectivity_state", "interface", uplinks),
        ]
        for (metric, label, scopes) in stateFamilies where !scopes.allSatisfy({ $0.runs.isEmpty }) {
            out += "# TYPE \(metric) gauge\n"
            for scope in scopes {
                for state in Self.states {
                    let name = series(metric, (label.map { [($0, scope.name)] } ?? []) + [("state", state.rawValue)])
                    points(scope.runs) { t, v in
                        out += "\(name) \(v.state == state ? 1 : 0) \(time(t))\n"
                        flush()
                    }
                }
            }
        }
        if scopes.contains(where: { !$0.runs.isEmpty }) {
            out += "# TYPE reachability_connectivity_info gauge\n"
            for scope in scopes {
                // One series per (state, reason): the runs of each, in time order.
                var keys: [Verdict] = []
                for run in scope.runs where !keys.contains(run.verdict) { keys.append(run.verdict) }
                for key in keys {
                    let name = series(
                        "reachability_connectivity_info",
                        [
                            ("scope", scope.scope.label), ("state", key.state.rawValue),
                            ("reason", key.reason?.label ?? ""),
                        ])
                    points(scope.runs.filter { $0.verdict == key }) { t, _ in
                        out += "\(name) 1 \(time(t))\n"
                        flush()
                    }
                }
            }
        }
        var pairs: [(String, String)] = []
        for t in transitions where !pairs.contains(where: { $0 == (t.from.state.rawValue, t.to.state.rawValue) }) {
            pairs.append((t.from.state.rawValue, t.to.state.rawValue))
        }
        if !pairs.isEmpty {
            out += "# TYPE reachability_state_transitions counter\n"
            for (from, to) in pairs {
                let name = series("reachability_state_transitions_total", [("from", from), ("to", to)])
                let times = transitions.filter { $0.from.state.rawValue == from && $0.to.state.rawValue == to }.map(
                    \.time)
                var count = 0
                points(overall) { t, _ in
                    while count < times.count, times[count] <= t { count += 1 }
                    out += "\(name) \(count) \(time(t))\n"
                    flush()
                }
            }
        }
        out += "# EOF\n"
        flush(force: true)
    }

    /// Unix seconds with millisecond precision, without trailing zeros: `1767225600`, `1767225600.5`.
    static func timestamp(_ t: Double) -> String {
        let ms = Int64((t * 1000).rounded())
        let (secs, frac) = (ms / 1000, ms % 1000)
        guard frac != 0 else { return String(secs) }
        var f = String(frac).leftPadded(3)
        while f.hasSuffix("0") { f.removeLast() }
        return "\(secs).\(f)"
    }
}
