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

/// A service made of closures, for parts whose own type has start/stop calls: `run` is awaited,
/// then `stop` runs once the task is cancelled (or `run` returned).
package struct ClosureService: Service {
    package let name: String
    private let body: @Sendable () async throws -> Void
    private let stop: @Sendable () -> Void

    /// `body` defaults to waiting for cancellation: the thing runs on threads of its own.
    package init(
        _ name: String, run body: @escaping @Sendable () async throws -> Void = { await untilCancelled() },
        stop: @escaping @Sendable () -> Void = {}
    ) {
        self.name = name
        self.body = body
        self.stop = stop
    }

    package func run() async throws {
        defer { stop() }
        try await body()
    }
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
