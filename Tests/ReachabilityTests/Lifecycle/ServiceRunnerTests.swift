import Synchronization
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// The lifecycle: services start in order, stop in reverse, within a bounded grace period.
@Suite struct ServiceRunnerTests {
    final class Journal: Sendable {
        let lines = Mutex<[String]>([])
        func note(_ s: String) { lines.withLock { $0.append(s) } }
        var all: [String] { lines.withLock { $0 } }
    }

    struct Recorded: Service {
        let name: String
        let journal: Journal
        var failAfterStart: (any Error)? = nil
        var ignoresCancellation = false

        func run() async throws {
            journal.note("start \(name)")
            if let failAfterStart { throw failAfterStart }
            await untilCancelled()
            if ignoresCancellation {
                // A service stuck in a call that ignores cancellation: an unstructured task does
                // not inherit the cancellation, so this really waits.
                await Task { try? await Task.sleep(for: .seconds(3)) }.value
            }
            journal.note("stop \(name)")
        }
    }

    struct Boom: Error {}

    /// Waits (bounded) until `count` lines are journaled.
    func until(_ journal: Journal, count: Int) async -> Bool {
        for _ in 0..<2_000 {
            if journal.all.count >= count { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return false
    }

    @Test func stopsInReverseOrderOnShutdown() async throws {
        let journal = Journal()
        let runner = ServiceRunner(["a", "b", "c"].map { Recorded(name: $0, journal: journal) })
        async let done: Void = runner.run()
        #expect(await until(journal, count: 3))
        #expect(Set(journal.all) == ["start a", "start b", "start c"])
        runner.requestShutdown()
        try await done
        #expect(Array(journal.all.suffix(3)) == ["stop c", "stop b", "stop a"])
    }

    @Test func aServiceThatEndsStopsTheOthersAndItsErrorIsRethrown() async {
        let journal = Journal()
        let runner = ServiceRunner([
            Recorded(name: "a", journal: journal), Recorded(name: "b", journal: journal, failAfterStart: Boom()),
            Recorded(name: "c", journal: journal),
        ])
        await #expect(throws: Boom.self) { try await runner.run() }
        #expect(Array(journal.all.suffix(2)) == ["stop c", "stop a"])
    }

    /// The grace period bounds how long the others wait: `a` stops 200 ms after the stuck
    /// service was cancelled, before the stuck one returns (3 s later).
    @Test func aStuckServiceDoesNotHoldUpTheOthersPastTheGracePeriod() async throws {
        let journal = Journal()
        let runner = ServiceRunner(
            [
                Recorded(name: "a", journal: journal),
                Recorded(name: "stuck", journal: journal, ignoresCancellation: true),
            ],
            gracePeriod: .milliseconds(200))
        async let done: Void = runner.run()
        #expect(await until(journal, count: 2))
        let clock = ContinuousClock()
        let started = clock.now
        runner.requestShutdown()
        try await done
        // A bound against hangs, not a timing claim.
        #expect(started.duration(to: clock.now) < .seconds(20))
        #expect(Array(journal.all.suffix(2)) == ["stop a", "stop stuck"])
    }

    @Test func untilCancelledReturnsOnCancellation() async {
        let task = Task {
            await untilCancelled()
            return true
        }
        task.cancel()
        #expect(await task.value)
    }
}
