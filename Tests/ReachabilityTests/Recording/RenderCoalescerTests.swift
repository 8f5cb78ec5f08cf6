import Dispatch
import Glibc
import Synchronization
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// Concurrent scrapes share renders, none gets a rendering older than its own request, and a
/// scrape waiting for another's render holds no thread (#33).
@Suite struct RenderCoalescerTests {
    final class Flag: Sendable {
        let value = Atomic<Bool>(false)
    }

    /// Eight scrapers on the web server's kind of pool each bump a counter and then scrape, fifty
    /// times. Every scrape must show at least the value its scraper wrote just before asking;
    /// renders must be fewer than scrapes (they overlap: each render sleeps 2 ms).
    @Test func concurrentScrapesShareFreshRenders() async throws {
        let registry = MetricsRegistry()
        let counter = registry.counter("bumps_total", help: "bumps").labels()
        registry.onCollect { usleep(2_000) }
        let pool = ThreadPoolExecutor(name: "scraper", threads: 8)
        let scrapers = 8
        let rounds = 50
        let stale = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<scrapers {
                group.addTask(executorPreference: pool) {
                    var stale = 0
                    for _ in 0..<rounds {
                        counter.inc()
                        let seen = counter.value
                        let text = String(decoding: await registry.render(.prometheus), as: UTF8.self)
                        let shown =
                            text.split(separator: "\n").first { $0.hasPrefix("bumps_total ") }
                            .flatMap { Double($0.split(separator: " ")[1]) } ?? -1
                        if shown < seen { stale += 1 }
                    }
                    return stale
                }
            }
            return await group.reduce(0, +)
        }
        #expect(stale == 0)
        let renders = registry.renderCount.prometheus
        #expect(renders >= 1)
        #expect(
            renders < scrapers * rounds, "no render was shared: \(renders) renders for \(scrapers * rounds) scrapes")
        #expect(registry.renderCount.openMetrics == 0)
    }

    /// A lone caller renders for itself every time (nothing cached between calls).
    @Test func sequentialScrapesEachRender() async {
        let registry = MetricsRegistry()
        let gauge = registry.gauge("g", help: "g").labels()
        for i in 0..<5 {
            gauge.set(Double(i))
            #expect(String(decoding: await registry.render(.prometheus), as: UTF8.self).contains("g \(i)\n"))
        }
        #expect(registry.renderCount.prometheus == 5)
    }

    /// Twenty scrapes on a pool of two threads while one render is held: nineteen wait without a
    /// thread, so the pool's other thread still runs other work; once the render is let go, every
    /// scrape is answered, those that arrived during it by one more render between them.
    @Test func aWaitingScrapeHoldsNoThread() async throws {
        let registry = MetricsRegistry()
        let gauge = registry.gauge("g", help: "g").labels()
        let release = DispatchSemaphore(value: 0)
        let entered = Atomic<Int>(0)
        // Each render shows its own number (the hook runs before the values are read).
        registry.onCollect {
            let number = entered.add(1, ordering: .relaxed).newValue
            gauge.set(Double(number))
            if number == 1 { release.wait() }
        }
        let pool = ThreadPoolExecutor(name: "two", threads: 2)
        let first = Task(executorPreference: pool) { await registry.render(.prometheus) }
        let deadline = ContinuousClock.now + .seconds(10)
        while entered.load(ordering: .relaxed) == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        let others = (0..<19).map { _ in Task(executorPreference: pool) { await registry.render(.prometheus) } }
        while registry.waitingCount < 19, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(registry.waitingCount == 19)
        // One thread renders (held); the other is free for other work. (Polled, bounded: were the
        // waiters holding threads, the work would never run and the render is let go anyway.)
        let ran = Flag()
        Task(executorPreference: pool) { @Sendable in ran.value.store(true, ordering: .relaxed) }
        while !ran.value.load(ordering: .relaxed), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        let didRun = ran.value.load(ordering: .relaxed)
        #expect(didRun, "the pool's free thread never ran other work")
        #expect(pool.threadCount <= 2)
        release.signal()
        #expect(String(decoding: await first.value, as: UTF8.self).contains("g 1\n"))
        for task in others {
            #expect(String(decoding: await task.value, as: UTF8.self).contains("g 2\n"))
        }
        #expect(registry.renderCount.prometheus == 2)
    }
}
