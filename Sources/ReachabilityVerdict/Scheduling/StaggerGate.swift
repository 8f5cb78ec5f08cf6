import Synchronization

/// Lets a round's staggered probe starts begin early: each start waits for its offset or until
/// the gate opens, whichever comes first. `reconfigure` opens the running round's gate, so a
/// reload waits for the probes in flight (at most a timeout), not for the rest of the stagger.
package final class StaggerGate: Sendable {
    private struct State {
        package var open = false
        package var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        package var next: UInt64 = 0
    }
    private let state = Mutex(State())

    /// Releases every waiter now and every later one at once.
    package func open() {
        let waiters: [CheckedContinuation<Void, Never>] = state.withLock { s in
            s.open = true
            defer { s.waiters = [:] }
            return Array(s.waiters.values)
        }
        for w in waiters { w.resume() }
    }

    /// Waits for `duration` on `clock`, or less if the gate opens (or the task is cancelled).
    package func wait<C: Clock>(for duration: Duration, clock: C) async where C.Duration == Duration {
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

/// How a round's staggered starts are grouped.
package enum StaggerBatches {
    /// The spacing below which staggered starts are grouped: probes whose evenly spread offsets
    /// fall in the same 10 ms slot start together after one wait (never later than their own
    /// offset). At 1,000 probes a second that is 100 wake-ups instead of 1,000, and bursts of
    /// sends whose replies one receive wake-up collects: the whole exporter's CPU per ICMP
    /// echo fell from ~300 to ~95 µs (`bench/exporter_icmp_bench.sh`, issue #17).
    package static let quantum = Duration.milliseconds(10)

    /// (offset, indices of `due`) for a round of `count` probes spread over `window`: one entry
    /// per probe when they are at least `quantum` apart, else one per occupied slot.
    package static func plan(count: Int, window: Duration) -> [(Duration, [Int])] {
        guard count > 0 else { return [] }
        let exact = (0..<count).map { window * Double($0) / Double(count) }
        guard count > 1, window / count < quantum else { return exact.enumerated().map { ($1, [$0]) } }
        var batches: [(Duration, [Int])] = []
        for (i, offset) in exact.enumerated() {
            let slot = quantum * Int64(offset / quantum)
            if let last = batches.last, last.0 == slot {
                batches[batches.count - 1].1.append(i)
            } else {
                batches.append((slot, [i]))
            }
        }
        return batches
    }
}
