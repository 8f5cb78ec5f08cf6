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
}

/// A distribution of observations in fixed buckets. One lock per series keeps `_count` equal to
/// the `+Inf` bucket in every scrape.
package final class Histogram: Sendable {
    package let labelValues: [String]
    private let upperBounds: [Double]
    /// Pre-rendered `name_bucket{…,le="x"} ` per bound then `+Inf`, then `_sum{…} ` and
    /// `_count{…} `, back to back; `ends[i]` is where line prefix i stops.
    private let prefixes: PrefixBytes
    private let ends: [Int]
    private let state: Mutex<State>

    private struct State {
        var counts: [UInt64]  // per bucket, not cumulative; the last one is +Inf
        var sum: Double = 0
    }

    init(name: String, labelNames: [String], labelValues: [String], upperBounds: [Double]) {
        self.labelValues = labelValues
        self.upperBounds = upperBounds
        var all: [UInt8] = []
        var ends: [Int] = []
        for b in upperBounds + [.infinity] {
            all +=
                MetricName.seriesPrefix(
                    name + "_bucket", labelNames: labelNames, labelValues: labelValues,
                    extra: ("le", SampleValue.text(b))) + [0x20]
            ends.append(all.count)
        }
        all += MetricName.seriesPrefix(name + "_sum", labelNames: labelNames, labelValues: labelValues) + [0x20]
        ends.append(all.count)
        all += MetricName.seriesPrefix(name + "_count", labelNames: labelNames, labelValues: labelValues) + [0x20]
        ends.append(all.count)
        prefixes = PrefixBytes(all)
        self.ends = ends
        state = Mutex(State(counts: Array(repeating: 0, count: upperBounds.count + 1)))
    }

    package func observe(_ value: Double) {
        // Buckets are `le` (less than or equal); NaN lands in +Inf only.
        var index = upperBounds.count
        var lo = 0
        var hi = upperBounds.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if value <= upperBounds[mid] { hi = mid } else { lo = mid + 1 }
        }
        if !value.isNaN { index = lo }
        state.withLock { s in
            s.counts[index] += 1
            s.sum += value
        }
    }

    package func observe(_ duration: Duration) { observe(duration.seconds) }

    package func render(into out: inout ExpositionBuffer) {
        let bytes = prefixes.bytes
        ends.withUnsafeBufferPointer { ends in
            // Formatting under the lock keeps `+Inf` == `_count` and costs observers ~1 µs at most.
            state.withLock { s in
                var start = 0
                var running: UInt64 = 0
                for i in 0..<s.counts.count {
                    running += s.counts[i]
                    out.write(UnsafeRawBufferPointer(rebasing: bytes[start..<ends[i]]))
                    out.writeInteger(Int64(running))
                    out.write(byte: 0x0a)
                    start = ends[i]
                }
                let n = s.counts.count
                out.write(UnsafeRawBufferPointer(rebasing: bytes[start..<ends[n]]))
                out.writeValue(s.sum)
                out.write(byte: 0x0a)
                out.write(UnsafeRawBufferPointer(rebasing: bytes[ends[n]..<ends[n + 1]]))
                out.writeInteger(Int64(running))
                out.write(byte: 0x0a)
            }
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
