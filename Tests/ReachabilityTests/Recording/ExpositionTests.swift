import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

@Suite struct ExpositionTests {
    /// A registry with every metric type, escaping, special values and an empty label set.
    static func sampleRegistry() -> MetricsRegistry {
        let r = MetricsRegistry()
        let c = r.counter(
            "demo_requests_total", help: "Requests seen.\nSecond line with \\ backslash.", labels: ["code", "path"])
        c.labels("200", "/a\"b\\c\nd").inc(3)
        c.labels("500", "/").inc()
        let g = r.gauge("demo_temperature_celsius", help: "A gauge with \"quotes\".")
        g.labels().set(-12.5)
        let special = r.gauge("demo_special", help: "Special values.", labels: ["kind"])
        special.labels("pinf").set(.infinity)
        special.labels("ninf").set(-.infinity)
        special.labels("nan").set(.nan)
        special.labels("tiny").set(1e-7)
        let h = r.histogram("demo_latency_seconds", help: "Latency.", labels: ["target"], buckets: [0.005, 0.5, 1])
        let hs = h.labels("x")
        hs.observe(0.001)
        hs.observe(0.5)
        hs.observe(3)
        _ = r.gauge("demo_unused", help: "No series yet.", labels: ["a"])
        return r
    }

    static let golden004 = """
        # HELP demo_latency_seconds Latency.
        # TYPE demo_latency_seconds histogram
        demo_latency_seconds_bucket{target="x",le="0.005"} 1
        demo_latency_seconds_bucket{target="x",le="0.5"} 2
        demo_latency_seconds_bucket{target="x",le="1"} 2
        demo_latency_seconds_bucket{target="x",le="+Inf"} 3
        demo_latency_seconds_sum{target="x"} 3.501
        demo_latency_seconds_count{target="x"} 3
        # HELP demo_requests_total Requests seen.\\nSecond line with \\\\ backslash.
        # TYPE demo_requests_total counter
        demo_requests_total{code="200",path="/a\\"b\\\\c\\nd"} 3
        demo_requests_total{code="500",path="/"} 1
        # HELP demo_special Special values.
        # TYPE demo_special gauge
        demo_special{kind="nan"} NaN
        demo_special{kind="ninf"} -Inf
        demo_special{kind="pinf"} +Inf
        demo_special{kind="tiny"} 1e-07
        # HELP demo_temperature_celsius A gauge with "quotes".
        # TYPE demo_temperature_celsius gauge
        demo_temperature_celsius -12.5
        # HELP demo_unused No series yet.
        # TYPE demo_unused gauge

        """

    @Test func prometheusTextGolden() {
        #expect(Self.sampleRegistry().renderString(.prometheus) == Self.golden004)
    }

    @Test func openMetricsGolden() {
        let text = Self.sampleRegistry().renderString(.openMetrics)
        #expect(text.hasSuffix("# EOF\n"))
        #expect(text.contains("# TYPE demo_requests counter\ndemo_requests_total{code=\"200\""))
        #expect(text.contains("# HELP demo_temperature_celsius A gauge with \\\"quotes\\\".\n"))
        #expect(!text.contains("# TYPE demo_requests_total"))
    }

    @Test func removedSeriesDisappear() {
        let r = MetricsRegistry()
        let g = r.gauge("x_up", help: "h", labels: ["probe", "target"])
        g.labels("icmp", "a").set(1)
        g.labels("http", "b").set(1)
        g.remove("icmp", "a")
        let text = r.renderString()
        #expect(!text.contains("target=\"a\""))
        #expect(text.contains("x_up{probe=\"http\",target=\"b\"} 1"))
        g.removeAll { $0[0] == "http" }
        #expect(!r.renderString().contains("x_up{"))
    }

    @Test func sameRegistrationReturnsSameFamily() {
        let r = MetricsRegistry()
        let a = r.counter("c_total", help: "h", labels: ["l"])
        let b = r.counter("c_total", help: "h", labels: ["l"])
        #expect(a === b)
        #expect(a.labels("v") === b.labels("v"))
    }

    @Test(arguments: [
        ("valid_name", true), ("_x", true), ("a:b", true), ("9bad", false), ("bad-name", false), ("", false),
        ("é", false),
    ])
    func metricNames(name: String, valid: Bool) {
        #expect(MetricName.isValidMetricName(name) == valid)
    }

    @Test(arguments: [("le", true), ("__reserved", false), ("a:b", false), ("x1", true), ("1x", false)])
    func labelNames(name: String, valid: Bool) {
        #expect(MetricName.isValidLabelName(name) == valid)
    }

    @Test(
        arguments: [
            (nil, ExpositionFormat.prometheus),
            ("text/plain", .prometheus),
            ("application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1", .openMetrics),
            ("application/openmetrics-text; version=0.0.1; q=0.75, text/plain;q=0.5", .openMetrics),
            ("application/openmetrics-text;q=0", .prometheus),
            ("application/openmetrics-text;version=2.0.0", .prometheus),
        ] as [(String?, ExpositionFormat)])
    func negotiation(accept: String?, expected: ExpositionFormat) {
        #expect(ExpositionFormat.negotiate(accept: accept) == expected)
    }

    /// The `_bucket` values of a rendered histogram, in order.
    static func buckets(_ text: String) -> [UInt64] {
        text.split(separator: "\n").filter { $0.contains("_bucket{") }.compactMap {
            $0.split(separator: " ").last.flatMap { UInt64($0) }
        }
    }

    @Test func histogramBucketsAreCumulativeAndConsistentUnderConcurrency() async {
        let r = MetricsRegistry()
        let h = r.histogram("h_seconds", help: "h", buckets: Buckets.exponential(start: 0.001, factor: 2, count: 10))
            .labels()
        await withTaskGroup(of: Void.self) { group in
            for t in 0..<4 {
                group.addTask { for i in 0..<5000 { h.observe(Double((i * 7 + t) % 2000) / 1000) } }
            }
            group.addTask {
                for _ in 0..<50 {
                    let cum = Self.buckets(r.renderString())
                    #expect(zip(cum, cum.dropFirst()).allSatisfy { $0 <= $1 })
                }
            }
        }
        #expect(Self.buckets(r.renderString()).last == 20000)
        let text = r.renderString()
        #expect(text.contains("h_seconds_bucket{le=\"+Inf\"} 20000\n"))
        #expect(text.contains("h_seconds_count 20000\n"))
    }

    @Test func processMetricsParse() throws {
        let stat =
            "1234 (we ird) name) S 1 1 1 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 7 0 9000 104857600 2560 18446744073709551615"
        let f = try #require(ProcessSample.parseStat(stat))
        #expect(f.utime == 250 && f.stime == 50 && f.threads == 7 && f.startTicks == 9000)
        #expect(f.vsize == 104_857_600 && f.rssPages == 2560)
        #expect(ProcessSample.parseStat("garbage") == nil)
        let live = try #require(ProcessSample.read())
        #expect(live.openFDs > 2 && live.residentBytes > 1_000_000 && live.startTime > 1.6e9)
    }
}
