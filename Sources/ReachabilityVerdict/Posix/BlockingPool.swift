import Dispatch
import Synchronization

/// A fixed set of threads for calls that block and cannot be made non-blocking (`getaddrinfo`),
/// so they never park the cooperative pool. Jobs run in submission order.
package final class BlockingPool: Sendable {
    /// Shared pool for name resolution.
    package static let resolver = BlockingPool(name: "resolver", threads: 4)

    private let jobs = Mutex<[@Sendable () -> Void]>([])
    private let available = DispatchSemaphore(value: 0)

    package init(name: String, threads: Int) {
        for i in 0..<threads {
            startThread(name: "\(name)-\(i)") { [self] in
                while true {
                    available.wait()
                    let job = jobs.withLock { $0.isEmpty ? nil : $0.removeFirst() }
                    job?()
                }
            }
        }
    }

    /// Runs `body` on a pool thread. If the deadline passes first, returns nil at once; the
    /// body still finishes on its thread and its result is dropped.
    package func run<T: Sendable>(deadline: ContinuousClock.Instant, _ body: @escaping @Sendable () -> T) async -> T? {
        let once = OnceResult<T?>()
        return await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
            once.arm(continuation)
            jobs.withLock { $0.append { once.resume(body()) } }
            available.signal()
            Task {
                await Reactor.shared.sleep(until: deadline)
                once.resume(nil)
            }
        }
    }
}

/// A continuation that the first of several racers resumes; later calls are ignored.
package final class OnceResult<T: Sendable>: Sendable {
    private let slot = Mutex<(CheckedContinuation<T, Never>?, T?)>((nil, nil))

    package func arm(_ continuation: CheckedContinuation<T, Never>) {
        let early: T? = slot.withLock { s in
            if let v = s.1 { return v }
            s.0 = continuation
            return nil
        }
        if let early { continuation.resume(returning: early) }
    }

    package func resume(_ value: T) {
        let c: CheckedContinuation<T, Never>? = slot.withLock { s in
            if s.1 != nil { return nil }
            s.1 = value
            let c = s.0
            s.0 = nil
            return c
        }
        c?.resume(returning: value)
    }
}
