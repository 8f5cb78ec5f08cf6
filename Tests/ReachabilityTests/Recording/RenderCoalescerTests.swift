import Glibc
import Synchronization
import Testing

@testable import Reachability

/// Concurrent scrapes share renders, and none gets a rendering older than its own request.
@Suite struct RenderCoalescerTests {
    /// Eight OS threads (like the HTTP server's connection threads) each bump a counter and then
    /// scrape, fifty times. Every scrape must show at least the value its thread wrote just
    /// before asking; renders must be fewer than scrapes (they overlap: each render sleeps 2 ms).
    @Test func concurrentScrapesShareFreshRenders() async throws {
        let registry = MetricsRegistry()
        let counter = registry.counter("bumps_total", help: "bumps").labels()
        registry.onCollect { usleep(2_000) }
        let threads = 8
        let rounds = 50
        let stale = Atomic<Int>(0)
        let finished = Atomic<Int>(0)
        for _ in 0..<threads {
            startThread(name: "scraper") {
                for _ in 0..<rounds {
                    counter.inc()
                    let seen = counter.value
                    let text = registry.renderString()
                    let shown =
                        text.split(separator: "\n").first { $0.hasPrefix("bumps_total ") }
                        .flatMap { Double($0.split(separator: " ")[1]) } ?? -1
                    if shown < seen { stale.add(1, ordering: .relaxed) }
                }
                finished.add(1, ordering: .relaxed)
            }
        }
        let deadline = ContinuousClock.now + .seconds(30)
        while finished.load(ordering: .relaxed) < threads, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(finished.load(ordering: .relaxed) == threads)
        #expect(stale.load(ordering: .relaxed) == 0)
        let renders = registry.renderCount.prometheus
        #expect(renders >= 1)
        #expect(renders < threads * rounds, "no render was shared: \(renders) renders for \(threads * rounds) scrapes")
        #expect(registry.renderCount.openMetrics == 0)
    }

    /// A lone caller renders for itself every time (nothing cached between calls).
    @Test func sequentialScrapesEachRender() {
        let registry = MetricsRegistry()
        let gauge = registry.gauge("g", help: "g").labels()
        for i in 0..<5 {
            gauge.set(Double(i))
            #expect(registry.renderString().contains("g \(i)\n"))
        }
        #expect(registry.renderCount.prometheus == 5)
    }
}
