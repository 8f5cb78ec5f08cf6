/// A long-running part of the exporter with one lifecycle: `run()` does the work until the task
/// is cancelled, then cleans up and returns. Started and stopped by `ServiceRunner`.
///
/// Contract: `run()` returns promptly after cancellation (within the runner's grace period);
/// it throws only for a failure that should stop the whole process.
package protocol Service: Sendable {
    /// For logs: `path-monitor`, `scheduler`, `web` …
    var name: String { get }
    func run() async throws
}

/// Suspends until the current task is cancelled (no polling, no timer).
package func untilCancelled() async {
    let (stream, continuation) = AsyncStream<Never>.makeStream()
    await withTaskCancellationHandler {
        for await _ in stream {}
    } onCancel: {
        continuation.finish()
    }
}
