import Foundation
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// The protobuf exposition against bytes from the reference encoder: `Fixtures/protobuf/*.pb` are
/// written by `scripts/lab protobuf golden` (Google's `protobuf` package encoding
/// client_model's `metrics.proto`, native buckets computed there independently), and
/// `scripts/test` checks they are still what that encoder produces.
@Suite struct ProtobufExpositionTests {
    static let fixtures = RepositoryRoot.url.appendingPathComponent("Tests/ReachabilityTests/Fixtures/protobuf")

    /// The fixture's families, recorded into a registry of the given mode.
    static func registry(_ mode: HistogramMode) throws -> MetricsRegistry {
        let data = try Data(contentsOf: fixtures.appendingPathComponent("exposition.json"))
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let families = try #require(root["families"] as? [[String: Any]])
        let r = MetricsRegistry(histograms: mode)
        func number(_ v: Any?) throws -> Double {
            switch v {
            // Special values, or exact decimal text (JSONSerialization's numbers are not always the
            // correctly rounded double of their text; Double(_:) is).
            case let s as String:
                return try #require(["+Inf": .infinity, "-Inf": -.infinity, "NaN": .nan][s] ?? Double(s))
            case let n as NSNumber: return n.doubleValue
            default: throw CocoaError(.coderInvalidValue)
            }
        }
        for f in families {
            let name = try #require(f["name"] as? String)
            let help = try #require(f["help"] as? String)
            let labels = try #require(f["labels"] as? [String])
            let series = try #require(f["series"] as? [[String: Any]])
            switch f["type"] as? String {
            case "counter":
                let c = r.counter(name, help: help, labels: labels)
                for s in series { c.labels(try #require(s["labels"] as? [String])).inc(try number(s["value"])) }
            case "gauge":
                let g = r.gauge(name, help: help, labels: labels)
                for s in series { g.labels(try #require(s["labels"] as? [String])).set(try number(s["value"])) }
            default:
                let buckets = try #require(f["buckets"] as? [Double])
                let h = r.histogram(name, help: help, labels: labels, buckets: buckets)
                for s in series {
                    let one = h.labels(try #require(s["labels"] as? [String]))
                    for o in try #require(s["observations"] as? [Any]) { one.observe(try number(o)) }
                }
            }
        }
        return r
    }

    @Test(arguments: HistogramMode.allCases)
    func matchesTheReferenceEncoder(mode: HistogramMode) throws {
        let ours = try Self.registry(mode).renderNow(.protobuf)
        let reference = [UInt8](try Data(contentsOf: Self.fixtures.appendingPathComponent("\(mode.rawValue).pb")))
        let firstDifference = zip(ours, reference).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(firstDifference == nil, "first differing byte at \(firstDifference ?? 0)")
        #expect(ours.count == reference.count)
    }

    @Test func nativeModeTextKeepsOnlyTheInfBucket() throws {
        let text = try Self.registry(.native).renderString()
        #expect(text.contains("demo_latency_seconds_bucket{target=\"x\",le=\"+Inf\"} 3\n"))
        #expect(!text.contains("le=\"0.5\""))
        #expect(text.contains("demo_latency_seconds_count{target=\"x\"} 3\n"))
        let classic = try Self.registry(.both).renderString()
        #expect(classic.contains("demo_latency_seconds_bucket{target=\"x\",le=\"0.5\"} 2\n"))
    }

    @Test(
        arguments: [
            (1.0, 0), (0.5, -8), (2.0, 8), (1.0000001, 1), (1.09, 1), (1.0906, 2), (0.9999999, 0), (1e-6, -159),
        ] as [(Double, Int32)])
    func nativeBucketIndexAtSchema3(value: Double, index: Int32) {
        #expect(NativeBuckets.index(of: value, schema: 3) == index)
    }

    @Test func lowerSchemasAgreeWithMergingBuckets() {
        for v in [1e-5, 0.003, 0.7, 1.0, 1.5, 2.0, 3.3, 1024.0, 77777.7] {
            for s in -3...3 {
                let fine = NativeBuckets.index(of: v, schema: s)
                let coarse = NativeBuckets.index(of: v, schema: s - 1)
                #expect((fine + 1) >> 1 == coarse, "v=\(v) schema \(s)")
            }
        }
    }

    @Test func bucketCountStaysBounded() {
        var n = NativeBuckets()
        var v = 1e-9
        for _ in 0..<2000 {
            n.observe(v)
            v *= 1.03
        }
        #expect(n.positive.indices.count <= NativeBuckets.maxBuckets)
        #expect(n.schema < NativeBuckets.initialSchema)
        #expect(n.positive.counts.reduce(0, +) == 2000)
    }

    @Test(
        arguments: [
            // Prometheus 2.42+ with --enable-feature=native-histograms.
            (
                "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited,"
                    + "application/openmetrics-text;version=1.0.0;q=0.8,application/openmetrics-text;version=0.0.1;"
                    + "q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1", ExpositionFormat.protobuf
            ),
            ("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=text", .prometheus),
            (
                "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0",
                .prometheus
            ),
            ("text/plain;q=0.9,application/openmetrics-text;q=0.5", .prometheus),
            ("application/openmetrics-text;q=0.5,application/vnd.google.protobuf;q=0.9", .openMetrics),
            ("*/*", .prometheus),
        ] as [(String, ExpositionFormat)])
    func negotiation(accept: String, expected: ExpositionFormat) {
        #expect(ExpositionFormat.negotiate(accept: accept) == expected)
    }
}
