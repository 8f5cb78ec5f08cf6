import ReachabilityVerdict
import Synchronization

/// A monotonically increasing value. Recording is lock-free.
package final class Counter: Sendable {
    package let labelValues: [String]
    private let prefix: PrefixBytes
    private let bits = Atomic<UInt64>(0.0.bitPattern)

    init(prefix: [UInt8], labelValues: [String]) {
        self.prefix = PrefixBytes(prefix + [0x20])
        self.labelValues = labelValues
    }

    /// Adds `amount`, which must not be negative (a negative increment is a programmer error).
    package func inc(_ amount: Double = 1) {
        precondition(amount >= 0, "counter increments must not be negative (got \(amount))")
        atomicAdd(bits, amount)
    }

    package var value: Double { Double(bitPattern: bits.load(ordering: .relaxed)) }

    package func render(into out: inout ExpositionBuffer) {
        out.write(prefix.bytes)
        out.writeValue(value)
        out.write(byte: 0x0a)
    }

    /// `Metric.counter` (field 3): `Counter { value = 1 }`.
    package func renderProtobuf(into out: inout ExpositionBuffer) {
        let m = out.beginMessage(3)
        out.writeDoubleField(1, value)
        out.endMessage(m)
    }
}

/// A value that goes up and down. Recording is lock-free.
package final class Gauge: Sendable {
    package let labelValues: [String]
    private let prefix: PrefixBytes
    private let bits = Atomic<UInt64>(0.0.bitPattern)

    init(prefix: [UInt8], labelValues: [String]) {
        self.prefix = PrefixBytes(prefix + [0x20])
        self.labelValues = labelValues
    }

    package func set(_ value: Double) { bits.store(value.bitPattern, ordering: .relaxed) }
    package func set(_ value: Bool) { set(value ? 1 : 0) }
    package func inc(_ amount: Double = 1) { atomicAdd(bits, amount) }
    package func dec(_ amount: Double = 1) { atomicAdd(bits, -amount) }
    package var value: Double { Double(bitPattern: bits.load(ordering: .relaxed)) }

    package func render(into out: inout ExpositionBuffer) {
        out.write(prefix.bytes)
        out.writeValue(value)
        out.write(byte: 0x0a)
    }

    /// `Metric.gauge` (field 2): `Gauge { value = 1 }`.
    package func renderProtobuf(into out: inout ExpositionBuffer) {
        let m = out.beginMessage(2)
        out.writeDoubleField(1, value)
        out.endMessage(m)
    }
}

/// What every series of one histogram family renders alike: the sample names and the `le`
/// label of each bucket. Shared, so a series keeps only its own label text (at 10,000 probes
/// the duration histograms' pre-rendered lines took 20 MB; #33).
final class HistogramLayout: Sendable {
    /// The classic bounds; empty in `native` mode, where only `+Inf` is rendered as text.
    let upperBounds: [Double]
    let native: Bool
    let bucketName: PrefixBytes
    let sumName: PrefixBytes
    let countName: PrefixBytes
    /// Per bound then `+Inf`: `le="0.005"} ` after the series' labels (`,le=…` when it has some).
    let le: [PrefixBytes]
    let leFirst: [PrefixBytes]

    init(name: String, upperBounds: [Double], mode: HistogramMode) {
        let bounds = mode.classic ? upperBounds : []
        self.upperBounds = bounds
        native = mode.native
        bucketName = PrefixBytes(Array((name + "_bucket").utf8))
        sumName = PrefixBytes(Array((name + "_sum").utf8))
        countName = PrefixBytes(Array((name + "_count").utf8))
        func text(_ b: Double, _ lead: String) -> PrefixBytes {
            var out = Array("\(lead)le=\"".utf8)
            MetricName.escapeLabelValue(SampleValue.text(b), into: &out)
            out += Array("\"} ".utf8)
            return PrefixBytes(out)
        }
        le = (bounds + [.infinity]).map { text($0, ",") }
        leFirst = (bounds + [.infinity]).map { text($0, "{") }
    }
}

/// A distribution of observations: in fixed ("classic") buckets, in exponential ("native")
/// buckets (see `NativeBuckets`), or both, as `HistogramMode` says. One lock per series keeps
/// `_count` equal to the `+Inf` bucket in every scrape.
package final class Histogram: Sendable {
    package let labelValues: [String]
    private let layout: HistogramLayout
    /// `{name="value",…` without the closing brace; empty without labels.
    private let labels: PrefixBytes
    private let state: Mutex<State>

    private struct State {
        var counts: [UInt64]  // per bucket, not cumulative; the last one is +Inf
        var sum: Double = 0
        var native = NativeBuckets()
    }

    convenience init(
        name: String, labelNames: [String], labelValues: [String], upperBounds: [Double], mode: HistogramMode
    ) {
        self.init(
            layout: HistogramLayout(name: name, upperBounds: upperBounds, mode: mode), labelNames: labelNames,
            labelValues: labelValues)
    }

    init(layout: HistogramLayout, labelNames: [String], labelValues: [String]) {
        self.labelValues = labelValues
        self.layout = layout
        var text =
            labelNames.isEmpty ? [] : MetricName.seriesPrefix("", labelNames: labelNames, labelValues: labelValues)
        if !text.isEmpty { text.removeLast() }  // the closing brace comes with `le` or after
        labels = PrefixBytes(text)
        state = Mutex(State(counts: Array(repeating: 0, count: layout.upperBounds.count + 1)))
    }

    package func observe(_ value: Double) {
        // Buckets are `le` (less than or equal); NaN lands in +Inf only.
        let upperBounds = layout.upperBounds
        var index = upperBounds.count
        var lo = 0
        var hi = upperBounds.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if value <= upperBounds[mid] { hi = mid } else { lo = mid + 1 }
        }
        if !value.isNaN { index = lo }
        let native = layout.native
        state.withLock { s in
            s.counts[index] += 1
            s.sum += value
            if native { s.native.observe(value) }
        }
    }

    package func observe(_ duration: Duration) { observe(duration.seconds) }

    package func render(into out: inout ExpositionBuffer) {
        let l = layout
        let labels = self.labels.bytes
        let le = labels.isEmpty ? l.leFirst : l.le
        // Formatting under the lock keeps `+Inf` == `_count` and costs observers ~1 µs at most.
        state.withLock { s in
            var running: UInt64 = 0
            for i in 0..<s.counts.count {
                running += s.counts[i]
                out.write(l.bucketName.bytes)
                out.write(labels)
                out.write(le[i].bytes)
                out.writeInteger(Int64(running))
                out.write(byte: 0x0a)
            }
            out.write(l.sumName.bytes)
            Self.close(labels, into: &out)
            out.writeValue(s.sum)
            out.write(byte: 0x0a)
            out.write(l.countName.bytes)
            Self.close(labels, into: &out)
            out.writeInteger(Int64(running))
            out.write(byte: 0x0a)
        }
    }

    /// The series' labels closed, then the space before the value.
    private static func close(_ labels: UnsafeRawBufferPointer, into out: inout ExpositionBuffer) {
        if !labels.isEmpty {
            out.write(labels)
            out.write(byte: UInt8(ascii: "}"))
        }
        out.write(byte: 0x20)
    }

    /// `Metric.histogram` (field 7): count, sum, the classic buckets (cumulative, without `+Inf`,
    /// as client_golang writes them), then the native part: schema, zero bucket, spans and
    /// deltas. An empty native histogram carries a no-op span so parsers know it is native.
    package func renderProtobuf(into out: inout ExpositionBuffer) {
        let native = layout.native
        let bounds = layout.upperBounds
        state.withLock { s in
            let m = out.beginMessage(7)
            out.writeVarintField(1, s.counts.reduce(0, +))
            out.writeDoubleField(2, s.sum)
            var running: UInt64 = 0
            for (i, bound) in bounds.enumerated() {
                running += s.counts[i]
                let b = out.beginMessage(3)
                out.writeVarintField(1, running)
                out.writeDoubleField(2, bound)
                out.endMessage(b)
            }
            if native {
                let n = s.native
                out.writeSignedField(5, Int64(n.schema))
                out.writeDoubleField(6, NativeBuckets.zeroThreshold)
                out.writeVarintField(7, n.zeroCount)
                if !n.negative.isEmpty { Self.writeSide(n.negative, spanField: 9, deltaField: 10, into: &out) }
                if !n.positive.isEmpty {
                    Self.writeSide(n.positive, spanField: 12, deltaField: 13, into: &out)
                } else if n.negative.isEmpty {
                    let span = out.beginMessage(12)
                    out.writeSignedField(1, 0)
                    out.writeVarintField(2, 0)
                    out.endMessage(span)
                }
            }
            out.endMessage(m)
        }
    }

    /// Spans of consecutive populated buckets (`BucketSpan { offset = 1; length = 2 }`, the first
    /// offset absolute, later ones the gap after the previous span), then each count as the
    /// difference from the previous bucket's.
    private static func writeSide(
        _ side: NativeBuckets.Side, spanField: UInt64, deltaField: UInt64, into out: inout ExpositionBuffer
    ) {
        var i = 0
        var previousEnd: Int32? = nil
        while i < side.indices.count {
            var j = i + 1
            while j < side.indices.count && side.indices[j] == side.indices[j - 1] + 1 { j += 1 }
            let span = out.beginMessage(spanField)
            out.writeSignedField(1, Int64(side.indices[i] - (previousEnd ?? 0)))
            out.writeVarintField(2, UInt64(j - i))
            out.endMessage(span)
            previousEnd = side.indices[j - 1] + 1
            i = j
        }
        var previous: Int64 = 0
        for c in side.counts {
            out.writeSignedField(deltaField, Int64(c) - previous)
            previous = Int64(c)
        }
    }
}

private func atomicAdd(_ bits: borrowing Atomic<UInt64>, _ amount: Double) {
    var current = bits.load(ordering: .relaxed)
    while true {
        let next = (Double(bitPattern: current) + amount).bitPattern
        let (exchanged, original) = bits.weakCompareExchange(expected: current, desired: next, ordering: .relaxed)
        if exchanged { return }
        current = original
    }
}

/// Bucket layouts.
package enum Buckets {
    /// `count` bounds starting at `start`, each `factor` times the previous.
    package static func exponential(start: Double, factor: Double, count: Int) -> [Double] {
        precondition(start > 0 && factor > 1 && count > 0, "invalid exponential buckets")
        var out: [Double] = []
        var v = start
        for _ in 0..<count {
            out.append(v)
            v *= factor
        }
        return out
    }
}
