import Synchronization

/// A FIFO async mutex: rounds never overlap (a `check()` waits for a running round).
package final class AsyncLock: Sendable {
    private let state = Mutex<(locked: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    package init() {}

    package func lock() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let acquired: Bool = state.withLock { s in
                if !s.locked {
                    s.locked = true
                    return true
                }
                s.waiters.append(c)
                return false
            }
            if acquired { c.resume() }
        }
    }

    package func unlock() {
        let next: CheckedContinuation<Void, Never>? = state.withLock { s in
            if s.waiters.isEmpty {
                s.locked = false
                return nil
            }
            return s.waiters.removeFirst()
        }
        next?.resume()
    }
}

/// Bounds how many probes run at once. Places are taken all at once (`acquire(_:)`), first come
/// first served: a batch waiting for several places holds none meanwhile, so two batches can
/// never each hold part of what the other waits for (a batched ICMP slot stalled the monitor
/// that way when it took its places one by one).
package final class AsyncSemaphore: Sendable {
    private struct State {
        package var available: Int
        package var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }
    private let state: Mutex<State>
    /// The number of places; a request for more waits for all of them.
    package let capacity: Int

    package init(_ count: Int) {
        capacity = max(1, count)
        state = Mutex(State(available: capacity))
    }

    /// Takes one place, waiting for it.
    package func acquire() async { await acquire(1) }

    /// Takes `count` places at once (at most `capacity`), waiting behind earlier requests.
    package func acquire(_ count: Int) async {
        let count = min(max(1, count), capacity)
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let got: Bool = state.withLock { s in
                if s.waiters.isEmpty, s.available >= count {
                    s.available -= count
                    return true
                }
                s.waiters.append((count, c))
                return false
            }
            if got { c.resume() }
        }
    }

    /// Gives back one place.
    package func release() {
        let ready: [CheckedContinuation<Void, Never>] = state.withLock { s in
            s.available += 1
            var ready: [CheckedContinuation<Void, Never>] = []
            while let first = s.waiters.first, first.count <= s.available {
                s.available -= first.count
                s.waiters.removeFirst()
                ready.append(first.continuation)
            }
            return ready
        }
        for c in ready { c.resume() }
    }
}
