import Synchronization

/// A wake-up signal the scheduler waits on with a timeout: path changes and `check()` fire it.
package final class Trigger: Sendable {
    private struct State {
        package var pending = false
        package var waiter: CheckedContinuation<Bool, Never>?
        package var timer: Task<Void, Never>?
    }
    private let state = Mutex(State())

    /// Wakes the current (or next) waiter.
    package func fire() {
        let (waiter, timer): (CheckedContinuation<Bool, Never>?, Task<Void, Never>?) = state.withLock { s in
            guard let w = s.waiter else {
                s.pending = true
                return (nil, nil)
            }
            s.waiter = nil
            defer { s.timer = nil }
            return (w, s.timer)
        }
        timer?.cancel()
        waiter?.resume(returning: true)
    }

    /// Waits until fired (true) or until `duration` passes on `clock` (false).
    package func wait<C: Clock>(for duration: Duration, clock: C) async -> Bool where C.Duration == Duration {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
                let already: Bool = state.withLock { s in
                    if s.pending {
                        s.pending = false
                        return true
                    }
                    s.waiter = c
                    return false
                }
                if already {
                    c.resume(returning: true)
                    return
                }
                let timer = Task { [self] in
                    do { try await clock.sleep(for: duration) } catch { return }
                    let w: CheckedContinuation<Bool, Never>? = state.withLock { s in
                        let w = s.waiter
                        s.waiter = nil
                        s.timer = nil
                        return w
                    }
                    w?.resume(returning: false)
                }
                state.withLock { s in if s.waiter != nil { s.timer = timer } else { timer.cancel() } }
            }
        } onCancel: {
            fire()
        }
    }
}
