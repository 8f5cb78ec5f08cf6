import ReachabilityVerdict
import Synchronization

/// The type of a metric family, as written on its `# TYPE` line.
package enum MetricType: String, Sendable {
    case counter, gauge, histogram
}

/// The in-process metrics registry: the only factory of metric families, and the renderer of
/// the exposition formats (two text formats and protobuf). Families render sorted by name, series sorted by label values, so the
/// output is stable (golden-testable). Recording never awaits; scraping takes each family's lock
/// only long enough to copy its series list.
///
/// Registering a name twice returns the same family when type, help, labels (and buckets) agree;
/// any disagreement is a programmer error and traps.
package final class MetricsRegistry: Sendable {
    private struct State {
        var families: [String: any AnyMetricFamily] = [:]
        var sortedNames: [String]? = []
    }
    private let state = Mutex(State())
    private let hooks = Mutex<[@Sendable () -> Void]>([])

    /// Which histogram forms every histogram of this registry keeps (`--metrics.histograms`).
    package let histogramMode: HistogramMode

    package init(histograms: HistogramMode = .both) { histogramMode = histograms }

    package func counter(_ name: String, help: String, labels: [String] = []) -> MetricFamily<Counter> {
        precondition(name.hasSuffix("_total"), "counter \(name) must end in _total")
        return register(name: name, help: help, type: .counter, labels: labels, buckets: nil) { prefix, values in
            Counter(prefix: prefix, labelValues: values)
        }
    }

    package func gauge(_ name: String, help: String, labels: [String] = []) -> MetricFamily<Gauge> {
        register(name: name, help: help, type: .gauge, labels: labels, buckets: nil) { prefix, values in
            Gauge(prefix: prefix, labelValues: values)
        }
    }

    package func histogram(_ name: String, help: String, labels: [String] = [], buckets: [Double]) -> MetricFamily<
        Histogram
    > {
        precondition(
            !buckets.isEmpty && zip(buckets, buckets.dropFirst()).allSatisfy { $0 < $1 }
                && buckets.allSatisfy(\.isFinite),
            "histogram \(name): buckets must be finite and strictly increasing")
        precondition(!labels.contains("le"), "histogram \(name): `le` is reserved")
        let layout = HistogramLayout(name: name, upperBounds: buckets, mode: histogramMode)
        return register(name: name, help: help, type: .histogram, labels: labels, buckets: buckets) { _, values in
            Histogram(layout: layout, labelNames: labels, labelValues: values)
        }
    }

    /// The family `descriptor` describes (see `MetricCatalog`); `extraLabels` follow its labels.
    package func counter(_ d: MetricDescriptor) -> MetricFamily<Counter> {
        precondition(d.kind == .counter, "\(d.name) is a \(d.kind.rawValue)")
        return counter(d.name, help: d.help, labels: d.labels)
    }

    package func gauge(_ d: MetricDescriptor, extraLabels: [String] = []) -> MetricFamily<Gauge> {
        precondition(d.kind == .gauge, "\(d.name) is a \(d.kind.rawValue)")
        return gauge(d.name, help: d.help, labels: d.labels + extraLabels)
    }

    package func histogram(_ d: MetricDescriptor) -> MetricFamily<Histogram> {
        precondition(d.kind == .histogram, "\(d.name) is a \(d.kind.rawValue)")
        return histogram(d.name, help: d.help, labels: d.labels, buckets: d.buckets ?? [])
    }

    /// Runs `hook` at the start of every render, to refresh values read at scrape time
    /// (process metrics, history-derived gauges).
    package func onCollect(_ hook: @escaping @Sendable () -> Void) {
        hooks.withLock { $0.append(hook) }
    }

    private func register<S: MetricSeries>(
        name: String, help: String, type: MetricType, labels: [String], buckets: [Double]?,
        make: @escaping @Sendable ([UInt8], [String]) -> S
    ) -> MetricFamily<S> {
        precondition(MetricName.isValidMetricName(name), "invalid metric name \(name.debugDescription)")
        for l in labels {
            precondition(MetricName.isValidLabelName(l), "metric \(name): invalid label name \(l.debugDescription)")
        }
        precondition(Set(labels).count == labels.count, "metric \(name): duplicate label names")
        return state.withLock { s in
            if let existing = s.families[name] {
                guard let family = existing as? MetricFamily<S>, family.type == type, family.help == help,
                    family.labelNames == labels, family.buckets == buckets
                else {
                    preconditionFailure(
                        "metric \(name) registered twice with a different type, help, labels or buckets")
                }
                return family
            }
            let family = MetricFamily<S>(
                name: name, help: help, type: type, labelNames: labels, buckets: buckets, make: make)
            s.families[name] = family
            s.sortedNames = nil
            return family
        }
    }

    /// Removes the series of the family registered as `name` whose label values match the
    /// predicate; nothing when no family has that name.
    package func removeSeries(of name: String, where predicate: ([String]) -> Bool) {
        state.withLock { $0.families[name] }?.removeAll(where: predicate)
    }

    /// Removes a whole family (for tests and reconfiguration).
    package func unregister(_ name: String) {
        state.withLock { s in
            if s.families.removeValue(forKey: name) != nil { s.sortedNames = nil }
        }
    }

    /// Renders every family in the chosen format. Concurrent callers share renders (see
    /// `RenderCoalescer`): whatever the number of scrapers, at most one render per format runs
    /// at a time, and each caller gets one that started after it asked; a caller waiting for
    /// another's render holds no thread.
    package func render(_ format: ExpositionFormat) async -> [UInt8] { await renderShared(format).bytes }

    /// `render`, with the render's serial: callers given the same serial got the same bytes.
    package func renderShared(_ format: ExpositionFormat) async -> (serial: UInt64, bytes: [UInt8]) {
        let coalescer =
            switch format {
            case .prometheus: coalescers.prometheus
            case .openMetrics: coalescers.openMetrics
            case .protobuf: coalescers.protobuf
            }
        return await coalescer.value { renderNow(format) }
    }

    /// Callers waiting for a render now (tests).
    var waitingCount: Int { coalescers.prometheus.waitingCount }

    /// The number of renders that actually ran (after coalescing), per text format.
    var renderCount: (prometheus: Int, openMetrics: Int) {
        (coalescers.prometheus.renderCount, coalescers.openMetrics.renderCount)
    }

    private let coalescers = (
        prometheus: RenderCoalescer(), openMetrics: RenderCoalescer(), protobuf: RenderCoalescer()
    )

    /// Renders every family now, on the caller's thread, sharing nothing (benchmarks, tools).
    package func renderNow(_ format: ExpositionFormat) -> [UInt8] {
        for hook in hooks.withLock({ $0 }) { hook() }
        let families: [any AnyMetricFamily] = state.withLock { s in
            if s.sortedNames == nil { s.sortedNames = s.families.keys.sorted() }
            return s.sortedNames!.compactMap { s.families[$0] }
        }
        var out = ExpositionBuffer(capacity: lastSize.load(ordering: .relaxed) + 4096)
        if format == .protobuf {
            for family in families { family.renderProtobuf(into: &out) }
        } else {
            for family in families { family.render(into: &out, format: format) }
        }
        if format == .openMetrics { out.write(Array("# EOF\n".utf8)) }
        lastSize.store(out.count, ordering: .relaxed)
        return out.finish()
    }

    /// `renderNow` as text (tests, tools).
    package func renderString(_ format: ExpositionFormat = .prometheus) -> String {
        String(decoding: renderNow(format), as: UTF8.self)
    }

    private let lastSize = Atomic<Int>(0)
}

/// One series type of a family: counters, gauges or histograms.
package protocol MetricSeries: AnyObject, Sendable {
    var labelValues: [String] { get }
    /// Appends this series' sample lines (internal to the renderer).
    func render(into out: inout ExpositionBuffer)
    /// Appends this series' value field of a protobuf `Metric` (gauge, counter or histogram).
    func renderProtobuf(into out: inout ExpositionBuffer)
}
extension Counter: MetricSeries {}
extension Gauge: MetricSeries {}
extension Histogram: MetricSeries {}

protocol AnyMetricFamily: Sendable {
    func render(into out: inout ExpositionBuffer, format: ExpositionFormat)
    func renderProtobuf(into out: inout ExpositionBuffer)
    func removeAll(where predicate: ([String]) -> Bool)
}

/// All series of one metric name. `labels(...)` creates a series on first use and returns the
/// same object afterwards; callers on hot paths keep the returned series.
package final class MetricFamily<S: MetricSeries>: AnyMetricFamily, Sendable {
    package let name: String
    package let help: String
    package let type: MetricType
    package let labelNames: [String]
    let buckets: [Double]?
    private let make: @Sendable ([UInt8], [String]) -> S
    private let headers: (prometheus: [UInt8], openMetrics: [UInt8])

    private struct Table {
        var series: [[String]: S] = [:]
        var sorted: [S]? = []
    }
    private let table = Mutex(Table())

    init(
        name: String, help: String, type: MetricType, labelNames: [String], buckets: [Double]?,
        make: @escaping @Sendable ([UInt8], [String]) -> S
    ) {
        self.name = name
        self.help = help
        self.type = type
        self.labelNames = labelNames
        self.buckets = buckets
        self.make = make
        let omName = type == .counter ? String(name.dropLast("_total".count)) : name
        headers = (
            Array(
                "# HELP \(name) \(MetricName.escapeHelp(help, openMetrics: false))\n# TYPE \(name) \(type.rawValue)\n"
                    .utf8),
            Array(
                "# HELP \(omName) \(MetricName.escapeHelp(help, openMetrics: true))\n# TYPE \(omName) \(type.rawValue)\n"
                    .utf8)
        )
    }

    /// The series for these label values (one per label name, in order).
    package func labels(_ values: String...) -> S { labels(values) }

    package func labels(_ values: [String]) -> S {
        precondition(
            values.count == labelNames.count,
            "metric \(name) takes \(labelNames.count) label values, got \(values.count)")
        return table.withLock { t in
            if let s = t.series[values] { return s }
            let s = make(MetricName.seriesPrefix(name, labelNames: labelNames, labelValues: values), values)
            t.series[values] = s
            t.sorted = nil
            return s
        }
    }

    /// Removes one series; it disappears from the next scrape.
    package func remove(_ values: String...) {
        table.withLock { t in
            if t.series.removeValue(forKey: values) != nil { t.sorted = nil }
        }
    }

    /// Removes every series whose label values match the predicate.
    package func removeAll(where predicate: ([String]) -> Bool) {
        table.withLock { t in
            let doomed = t.series.keys.filter(predicate)
            for k in doomed { t.series.removeValue(forKey: k) }
            if !doomed.isEmpty { t.sorted = nil }
        }
    }

    /// The `MetricType` enum of `metrics.proto`.
    private var protobufType: UInt64 {
        switch type {
        case .counter: 0
        case .gauge: 1
        case .histogram: 4
        }
    }

    private var sortedSeries: [S] {
        table.withLock { t in
            if t.sorted == nil {
                t.sorted =
                    t.series.count < 2
                    ? Array(t.series.values)
                    : t.series.sorted { a, b in a.key.lexicographicallyPrecedes(b.key) }.map(\.value)
            }
            return t.sorted!
        }
    }

    /// One delimited `MetricFamily { name = 1; help = 2; type = 3; repeated Metric metric = 4 }`;
    /// each `Metric` has its `LabelPair { name = 1; value = 2 }`s (field 1), then the value field.
    /// A family without series is left out: it has no sample to carry.
    func renderProtobuf(into out: inout ExpositionBuffer) {
        let series = sortedSeries
        guard !series.isEmpty else { return }
        let family = out.beginMessage(nil)
        out.writeStringField(1, name)
        out.writeStringField(2, help)
        out.writeVarintField(3, protobufType)
        for s in series {
            let metric = out.beginMessage(4)
            for (labelName, value) in zip(labelNames, s.labelValues) {
                let pair = out.beginMessage(1)
                out.writeStringField(1, labelName)
                out.writeStringField(2, value)
                out.endMessage(pair)
            }
            s.renderProtobuf(into: &out)
            out.endMessage(metric)
        }
        out.endMessage(family)
    }

    func render(into out: inout ExpositionBuffer, format: ExpositionFormat) {
        let series = sortedSeries
        // A family with no series still announces itself, as client_golang does not; keeping the
        // HELP/TYPE lines lets dashboards discover the metric before its first sample.
        out.write(format == .openMetrics ? headers.openMetrics : headers.prometheus)
        series.withUnsafeBufferPointer { all in
            for i in all.indices { all[i].render(into: &out) }
        }
    }
}
