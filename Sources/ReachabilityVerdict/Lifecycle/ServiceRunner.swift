import Synchronization

/// Runs services in one task group: starts them in order, waits for a shutdown request
/// (`requestShutdown()`, fed by SIGTERM/SIGINT) or for a service to end on its own, then stops
/// them in reverse order, giving each up to `gracePeriod` to return after its cancellation
/// before going on to the next.
///
/// A service that throws stops the others the same way; `run()` rethrows the first error. A
/// service that breaks the `Service` contract and ignores its cancellation past the grace period
/// is logged and the others are stopped without it; being a child of the group, it still delays
/// the return of `run()` until it returns.
package final class ServiceRunner: Sendable {
    private let services: [any Service]
    private let gracePeriod: Duration
    private let logger: Logger
    private let shutdown = AsyncStream<Void>.makeStream()

    package init(_ services: [any Service], gracePeriod: Duration = .seconds(5), logger: Logger = Logger(level: .error))
    {
        self.services = services
        self.gracePeriod = gracePeriod
        self.logger = logger
    }

    /// Asks `run()` to stop every service. Safe from any thread, more than once.
    package func requestShutdown() { shutdown.continuation.yield() }

    /// Why a task of the group ended.
    private enum Ended: Sendable {
        case service(Int, (any Error)?)
        case shutdownRequested
        /// The grace period of the `n`th stop passed.
        case graceOver(Int)
    }

    package func run() async throws {
        let stops = services.map { _ in AsyncStream<Void>.makeStream() }
        let firstError = Mutex<(any Error)?>(nil)
        func record(_ error: (any Error)?, of index: Int) {
            guard let error else { return }
            logger.error("service failed", ("service", services[index].name), ("err", String(describing: error)))
            firstError.withLock { if $0 == nil { $0 = error } }
        }
        await withTaskGroup(of: Ended.self) { group in
            for (index, service) in services.enumerated() {
                let stop = stops[index].stream
                group.addTask { .service(index, await Self.run(service, until: stop)) }
            }
            group.addTask { [shutdown] in
                for await _ in shutdown.stream { break }
                return .shutdownRequested
            }
            // Whatever ends first (a shutdown request, a service returning or failing) stops all.
            var ended: Set<Int> = []
            if case .service(let index, let error) = await group.next() {
                ended.insert(index)
                record(error, of: index)
            }
            var stopNumber = 0
            for index in services.indices.reversed() where !ended.contains(index) {
                stops[index].continuation.finish()
                stopNumber += 1
                let number = stopNumber
                group.addTask { [gracePeriod] in
                    try? await Task.sleep(for: gracePeriod)
                    return .graceOver(number)
                }
                waiting: while !ended.contains(index), let next = await group.next() {
                    switch next {
                    case .service(let other, let error):
                        ended.insert(other)
                        record(error, of: other)
                    case .graceOver(number):
                        logger.warn(
                            "service did not stop within the grace period", ("service", services[index].name),
                            ("grace", DurationParser.format(gracePeriod)))
                        break waiting
                    case .graceOver, .shutdownRequested:
                        continue
                    }
                }
            }
            shutdown.continuation.finish()
            group.cancelAll()
        }
        if let error = firstError.withLock({ $0 }) { throw error }
    }

    /// Runs one service until it returns, or until `stop` finishes and it has returned from
    /// its cancellation; the error it threw, if any.
    private static func run(_ service: any Service, until stop: AsyncStream<Void>) async -> (any Error)? {
        // Children answer `.some(outcome)` for the service, `.none` for the stop signal.
        await withTaskGroup(of: Optional<(any Error)?>.self) { inner in
            inner.addTask {
                do {
                    try await service.run()
                    return .some(nil)
                } catch { return .some(error) }
            }
            inner.addTask {
                for await _ in stop {}
                return .none
            }
            if case .some(let outcome)? = await inner.next() {
                inner.cancelAll()  // it ended on its own: end the stop listener too
                return outcome
            }
            inner.cancelAll()
            while let next = await inner.next() {
                if case .some(let outcome) = next { return outcome }
            }
            return nil
        }
    }
}
