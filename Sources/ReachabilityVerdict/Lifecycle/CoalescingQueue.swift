import Synchronization

/// Requests for one job (a configuration reload) that run one at a time and are coalesced:
/// every request that arrives while a run is pending (asked for, not started) shares that run
/// and its outcome, so however many arrive during a run, one more run follows it (#41: 4,159
/// queued reloads ran one after another). A request that arrives while a run is under way is
/// not given that run's outcome (it may have read the file before the change it asks for).
///
/// Waiting holds no thread: a waiter is a suspended task, resumed with the outcome, or after its
/// timeout, or at shutdown. Waiters are bounded (`maxWaiters`); one more is answered `.busy` at
/// once (the pending run still happens).
///
/// Not for: jobs whose callers need a run of their own each.
package final class CoalescingQueue<Outcome: Sendable>: Sendable {
    /// How one wait ended.
    package enum Wait: Sendable {
        case done(Outcome)
        /// `maxWaiters` callers wait already (the pending run covers this request too).
        case busy
        /// The queue has stopped (shutdown); nothing runs.
        case stopped
        /// No outcome within the timeout (the run may still come).
        case timedOut
    }

    private struct Waiter {
        package let run: UInt64
        package let continuation: CheckedContinuation<Wait, Never>
        package var timer: Task<Void, Never>?
    }

    private struct State {
        /// The run that is asked for and not started, by number, with what asked for it.
        package var pending: UInt64?
        package var triggers: [String] = []
        package var nextRun: UInt64 = 1
        package var waiters: [UInt64: Waiter] = [:]
        package var nextWaiter: UInt64 = 0
        /// The runner, waiting for a request.
        package var idle: CheckedContinuation<Bool, Never>?
        package var stopped = false
        package var runs = 0
    }

    package let maxWaiters: Int
    private let state = Mutex(State())

    package init(maxWaiters: Int = 32) {
        precondition(maxWaiters > 0, "CoalescingQueue needs room for a waiter")
        self.maxWaiters = maxWaiters
    }

    /// Runs started so far.
    package var runs: Int { state.withLock { $0.runs } }

    /// Callers waiting now.
    package var waiting: Int { state.withLock { $0.waiters.count } }

    /// Asks for a run without waiting for it (SIGHUP); false once stopped.
    @discardableResult
    package func request(_ trigger: String) -> Bool {
        let (accepted, idle) = state.withLock { s -> (Bool, CheckedContinuation<Bool, Never>?) in
            guard !s.stopped else { return (false, nil) }
            Self.join(&s, trigger)
            defer { s.idle = nil }
            return (true, s.idle)
        }
        idle?.resume(returning: true)
        return accepted
    }

    /// Asks for a run and waits, suspended, for its outcome, at most `timeout`.
    package func requestAndWait(_ trigger: String, timeout: Duration) async -> Wait {
        await withCheckedContinuation { (continuation: CheckedContinuation<Wait, Never>) in
            let (now, idle) = state.withLock { s -> (Wait?, CheckedContinuation<Bool, Never>?) in
                if s.stopped { return (.stopped, nil) }
                if s.waiters.count >= maxWaiters {
                    Self.join(&s, trigger)
                    defer { s.idle = nil }
                    return (.busy, s.idle)
                }
                let run = Self.join(&s, trigger)
                let id = s.nextWaiter
                s.nextWaiter += 1
                s.waiters[id] = Waiter(run: run, continuation: continuation)
                s.waiters[id]?.timer = Task { [self] in
                    try? await Task.sleep(for: timeout)
                    guard !Task.isCancelled else { return }
                    state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(returning: .timedOut)
                }
                defer { s.idle = nil }
                return (nil, s.idle)
            }
            idle?.resume(returning: true)
            if let now { continuation.resume(returning: now) }
        }
    }

    /// The pending run's number, made pending if none was.
    @discardableResult
    private static func join(_ s: inout State, _ trigger: String) -> UInt64 {
        if s.pending == nil {
            s.pending = s.nextRun
            s.nextRun += 1
            s.triggers = []
        }
        if !s.triggers.contains(trigger) { s.triggers.append(trigger) }
        return s.pending!
    }

    /// Carries out the runs, one at a time, until cancelled; then (at once, even while a run is
    /// under way) answers every waiter `.stopped` and refuses new requests. `job` gets the
    /// triggers of its run, joined by commas.
    package func run(_ job: @Sendable (String) async -> Outcome) async {
        await withTaskCancellationHandler {
            while let (run, trigger) = await next() {
                let outcome = await job(trigger)
                let done = state.withLock { s in
                    let mine = s.waiters.filter { $0.value.run == run }
                    for id in mine.keys { s.waiters[id] = nil }
                    return Array(mine.values)
                }
                for waiter in done {
                    waiter.timer?.cancel()
                    waiter.continuation.resume(returning: .done(outcome))
                }
            }
        } onCancel: {
            stop()
        }
    }

    /// The next run to carry out, waiting (suspended) for a request; nil once stopped.
    private func next() async -> (UInt64, String)? {
        let go = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let now: Bool? = state.withLock { s in
                if s.stopped { return false }
                if s.pending != nil { return true }
                s.idle = continuation
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
        guard go else { return nil }
        return state.withLock { s in
            guard !s.stopped, let run = s.pending else { return nil }
            s.pending = nil
            s.runs += 1
            return (run, s.triggers.joined(separator: ","))
        }
    }

    /// Refuses new requests and answers every waiter `.stopped`.
    private func stop() {
        let (idle, waiters) = state.withLock { s in
            s.stopped = true
            s.pending = nil
            defer {
                s.idle = nil
                s.waiters = [:]
            }
            return (s.idle, Array(s.waiters.values))
        }
        idle?.resume(returning: false)
        for waiter in waiters {
            waiter.timer?.cancel()
            waiter.continuation.resume(returning: .stopped)
        }
    }
}
