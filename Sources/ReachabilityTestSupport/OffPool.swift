import ReachabilityExporter
import ReachabilityVerdict

/// Runs CPU-heavy test work (fuzz loops) on a thread of its own, so that it cannot starve the
/// cooperative pool (2 threads on a 2-core machine) that the deadline-measuring tests running
/// in parallel need. Record expectations after it returns, not inside `body`: issues are
/// attributed through task-locals, which the thread does not have.
package func runOffCooperativePool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        startThread(name: "test-cpu") { continuation.resume(returning: body()) }
    }
}
