import Synchronization

/// Something that knows the host's network path and announces its changes: the real
/// `PathMonitor`, or `FakePathSource` in tests. The scheduler consumes this role.
///
/// Contract for conforming types: `current` is synchronous and safe from any thread; every
/// `updates()` call returns a new, independent stream (any number of subscribers) that first
/// yields the current snapshot and then each published change, keeping only the newest unread
/// element for a slow consumer; streams finish when the source stops. `PathBroadcaster`
/// implements all of that.
package protocol PathSource: Sendable {
    /// The latest published snapshot.
    var current: PathSnapshot { get }
    /// A new stream of snapshots for one subscriber.
    func updates() -> AsyncStream<PathSnapshot>
}

/// Fans snapshots out to any number of `AsyncStream` subscribers and holds the current one.
/// Thread-safe; publishing never waits for a consumer (each stream buffers only the newest
/// snapshot). Not for deciding what is a change: publishers do that and set `changeCount`.
package final class PathBroadcaster: Sendable {
    private struct State {
        var current: PathSnapshot
        var subscribers: [UInt64: AsyncStream<PathSnapshot>.Continuation] = [:]
        var nextID: UInt64 = 0
        var finished = false
    }

    private let state: Mutex<State>

    package init(initial: PathSnapshot = .empty) {
        state = Mutex(State(current: initial))
    }

    package var current: PathSnapshot { state.withLock { $0.current } }

    /// Live subscriptions (streams neither finished nor dropped).
    package var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// Makes `snapshot` current and hands it to every subscriber. Yields happen under the lock
    /// so that concurrent publishers cannot reorder snapshots in any stream.
    package func publish(_ snapshot: PathSnapshot) {
        state.withLock { s in
            guard !s.finished else { return }
            s.current = snapshot
            for continuation in s.subscribers.values { continuation.yield(snapshot) }
        }
    }

    /// A new stream starting with the current snapshot. After `finish()`, the stream yields
    /// the last snapshot and ends.
    package func updates() -> AsyncStream<PathSnapshot> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: PathSnapshot.self, bufferingPolicy: .bufferingNewest(1))
        let finished: Bool = state.withLock { s in
            continuation.yield(s.current)
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
