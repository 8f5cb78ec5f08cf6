import Synchronization

/// Fans values out to any number of `AsyncStream` subscribers and holds the latest one: the path
/// monitor's snapshots and the scheduler's statuses go through it. Thread-safe; publishing never
/// waits for a consumer (each stream buffers only the newest value). Not for deciding what is a
/// change: publishers do that.
package final class Broadcaster<Value: Sendable>: Sendable {
    private struct State {
        package var latest: Value?
        package var subscribers: [UInt64: AsyncStream<Value>.Continuation] = [:]
        package var nextID: UInt64 = 0
        package var finished = false
    }

    private let state: Mutex<State>

    /// `latest`: what new subscribers get first (nil: nothing until the first `publish`).
    package init(latest: Value? = nil) {
        state = Mutex(State(latest: latest))
    }

    /// The latest published value.
    package var latest: Value? { state.withLock { $0.latest } }

    /// Live subscriptions (streams neither finished nor dropped).
    package var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// Makes `value` the latest and hands it to every subscriber. Yields happen under the lock so
    /// that concurrent publishers cannot reorder values in any stream.
    package func publish(_ value: Value) {
        state.withLock { s in
            guard !s.finished else { return }
            s.latest = value
            for continuation in s.subscribers.values { continuation.yield(value) }
        }
    }

    /// A new stream starting with the latest value (if any). After `finish()`, the stream
    /// yields the latest value and ends.
    package func updates() -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: .bufferingNewest(1))
        let finished: Bool = state.withLock { s in
            if let latest = s.latest { continuation.yield(latest) }
            guard !s.finished else { return true }
            let id = s.nextID
            s.nextID += 1
            s.subscribers[id] = continuation
            continuation.onTermination = { [weak self] _ in
                self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
            }
            return false
        }
        if finished { continuation.finish() }
        return stream
    }

    /// Ends every stream; later publishes are ignored.
    package func finish() {
        let continuations = state.withLock { s in
            s.finished = true
            defer { s.subscribers = [:] }
            return Array(s.subscribers.values)
        }
        for continuation in continuations { continuation.finish() }
    }
}
