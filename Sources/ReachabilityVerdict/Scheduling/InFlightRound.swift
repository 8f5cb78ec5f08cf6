import Synchronization

/// The round the scheduler is running, so that losing the path can cut it short: docs/evidence.md
/// promises `none` at once, but a round in flight waits for its probes' timeouts, and the
/// path-triggered round queues behind it (the fault lab measured ~1.2 s for a lost carrier with
/// 500 ms timeouts). Cancelled probes end at once; probes not yet started see the lost path and
/// fail without traffic; the round then classifies as `none`.
package final class InFlightRound: Sendable {
    private let task = Mutex<Task<ReachabilityStatus, Never>?>(nil)

    /// Runs `round` as the cancellable round in flight; cancelling the caller cancels it too.
    package func run(_ round: @escaping @Sendable () async -> ReachabilityStatus) async -> ReachabilityStatus {
        let t = Task { await round() }
        task.withLock { $0 = t }
        defer { task.withLock { $0 = nil } }
        return await withTaskCancellationHandler {
            await t.value
        } onCancel: {
            t.cancel()
        }
    }

    /// Cancels the round in flight, if any.
    package func cancel() {
        task.withLock { $0 }?.cancel()
    }
}
