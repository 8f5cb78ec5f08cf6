import Dispatch
import Synchronization
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// The web server's pool grows with the work and shrinks back when it ends (#33: an idle
/// exporter holds one web thread, not sixteen).
@Suite struct ThreadPoolExecutorTests {
    final class Shared: Sendable {
        let count = Atomic<Int>(0)
    }

    @Test func growsToTheWorkAndShrinksWhenIdle() async throws {
        let pool = ThreadPoolExecutor(name: "elastic", threads: 4, minimum: 1, idleTimeout: .milliseconds(100))
        #expect(pool.threadCount == 1)
        let release = DispatchSemaphore(value: 0)
        let running = Shared()
        // Six blocking jobs: four run at once (the maximum), two wait for a thread.
        var jobs: [Task<Void, Never>] = []
        for _ in 0..<6 {
            jobs.append(
                Task(executorPreference: pool) { @Sendable in
                    running.count.add(1, ordering: .relaxed)
                    release.wait()
                })
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while running.count.load(ordering: .relaxed) < 4, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(running.count.load(ordering: .relaxed) == 4)
        #expect(pool.threadCount == 4)
        for _ in 0..<6 { release.signal() }
        for job in jobs { await job.value }
        #expect(running.count.load(ordering: .relaxed) == 6)
        while pool.threadCount > 1, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(pool.threadCount == 1, "idle threads end after the idle timeout, down to the minimum")
        // The one left still serves.
        #expect(await Task(executorPreference: pool) { 7 }.value == 7)
    }
}
