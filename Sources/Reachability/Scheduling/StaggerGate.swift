import Synchronization

/// Lets a round's staggered probe starts begin early: each start waits for its offset or until
/// the gate opens, whichever comes first. `reconfigure` opens the running round's gate, so a
/// reload waits for the probes in flight (at most a timeout), not for the rest of the stagger.
final class StaggerGate: Sendable {
    private struct State {
        var open = false
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var next: UInt64 = 0
    }
    private let state = Mutex(State())

    /// Releases every waiter now and every later one at once.
    func open() {
        let waiters: [CheckedContinuation<Void, Never>] = state.withLock { s in
            s.open = true
            defer { s.waiters = [:] }
            return Array(s.waiters.values)
        }
        for w in waiters { w.resume() }
    }

    /// Waits for `duration` on `clock`, or less if the gate opens (or the task is cancelled).
    func wait<C: Clock>(for duration: Duration, clock: C) async where C.Duration == Duration {
        if state.withLock({ $0.open }) { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await clock.sleep(for: duration) }
            group.addTask { await self.opened() }
            await group.next()
            group.cancelAll()
        }
    }

    private func opened() async {
        let id = state.withLock { s -> UInt64 in
            s.next += 1
            return s.next
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let ready: Bool = state.withLock { s in
                    if s.open || Task.isCancelled { return true }
                    s.waiters[id] = c
                    return false
                }
                if ready { c.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }
}
