import ReachabilityVerdict

/// Which histogram forms the exporter keeps and serves (`--metrics.histograms`).
package enum HistogramMode: String, Sendable, CaseIterable {
    /// The configured buckets only: `_bucket{le=…}` series in every format.
    case classic
    /// Exponential buckets only, served in the protobuf exposition as one native-histogram series;
    /// the text formats carry just `_bucket{le="+Inf"}`, `_sum` and `_count`.
    case native
    /// Both: text scrapes see the classic buckets, protobuf scrapes get both in one message.
    case both

    var classic: Bool { self != .native }
    var native: Bool { self != .classic }
}

/// The sparse exponential buckets of a Prometheus native histogram.
///
/// Bucket `i` of schema `s` holds observations in `(2^((i-1)·2^-s), 2^(i·2^-s)]`. Schema 3 (each
/// bucket 2^(1/8) ≈ 1.09 times the previous) puts any quantile within ±4.4 % of its true value
/// ("~5 % resolution"). Values of magnitude up to `zeroThreshold` fall in the zero bucket.
///
/// Memory stays bounded: past `maxBuckets` populated buckets the schema drops by one (pairs of
/// buckets merge, halving the resolution), as client_golang and OpenTelemetry do. A probe
/// duration histogram on a real network fills 10–40 buckets.
struct NativeBuckets {
    static let initialSchema = 3
    static let maxBuckets = 160
    /// 2^-128, client_golang's default: only an exact zero lands in the zero bucket in practice.
    static let zeroThreshold = 2.938735877055719e-39

    private(set) var schema = initialSchema
    private(set) var zeroCount: UInt64 = 0
    /// Sorted bucket indices and their counts (not cumulative), for positive and negative values.
    private(set) var positive = Side()
    private(set) var negative = Side()

    struct Side {
        var indices: [Int32] = []
        var counts: [UInt64] = []
        var isEmpty: Bool { indices.isEmpty }

        mutating func add(_ index: Int32) {
            var lo = 0
            var hi = indices.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if indices[mid] < index { lo = mid + 1 } else { hi = mid }
            }
            if lo < indices.count && indices[lo] == index {
                counts[lo] += 1
            } else {
                indices.insert(index, at: lo)
                counts.insert(1, at: lo)
            }
        }

        /// Merges pairs of buckets: index `i` of schema `s` is index ⌈i/2⌉ of schema `s-1`.
        mutating func halveResolution() {
            var newIndices: [Int32] = []
            var newCounts: [UInt64] = []
            newIndices.reserveCapacity(indices.count)
            newCounts.reserveCapacity(indices.count)
            for (i, c) in zip(indices, counts) {
                let j = (i + 1) >> 1
                if newIndices.last == j {
                    newCounts[newCounts.count - 1] += c
                } else {
                    newIndices.append(j)
                    newCounts.append(c)
                }
            }
            indices = newIndices
            counts = newCounts
        }
    }

    /// Counts one observation. NaN counts toward `_count` and `_sum` only; ±Inf goes to the bucket
    /// of ±`greatestFiniteMagnitude`, as client_golang does, so the buckets still add up to
    /// `_count` (Prometheus rejects a histogram whose buckets hold fewer than its count unless
    /// the sum is NaN).
    mutating func observe(_ value: Double) {
        guard !value.isNaN else { return }
        let magnitude = value.isInfinite ? Double.greatestFiniteMagnitude : value.magnitude
        if magnitude <= Self.zeroThreshold {
            zeroCount += 1
            return
        }
        let index = Self.index(of: magnitude, schema: schema)
        if value > 0 { positive.add(index) } else { negative.add(index) }
        while positive.indices.count + negative.indices.count > Self.maxBuckets && schema > -4 {
            positive.halveResolution()
            negative.halveResolution()
            schema -= 1
        }
    }

    /// The boundaries 2^(j/8 - 1), j = 0…7, within one power of two at schema 3, as the exact
    /// doubles Prometheus and client_golang use (three are one ulp below the correctly rounded
    /// power); schemas 2 and 1 use every second and fourth entry.
    private static let schema3Bounds: [Double] = [
        0.5, 0.5452538663326288, 0.5946035575013605, 0.6484197773255048,
        0.7071067811865475, 0.7711054127039704, 0.8408964152537144, 0.9170040432046711,
    ]

    /// The index of the bucket holding `value` (positive, finite, above the zero threshold).
    static func index(of value: Double, schema: Int) -> Int32 {
        // value = frac · 2^exp with frac in [0.5, 1), as C's frexp.
        let exp = Int(value.exponent) + 1
        let frac = value.significand / 2
        if schema > 0 {
            let step = 1 << (3 - schema)
            let perOctave = 1 << schema
            var key = 0
            while key < perOctave && schema3Bounds[key * step] < frac { key += 1 }
            return Int32(key + (exp - 1) * perOctave)
        }
        var key = exp
        if frac == 0.5 { key -= 1 }
        let offset = (1 << -schema) - 1
        return Int32((key + offset) >> -schema)
    }
}
