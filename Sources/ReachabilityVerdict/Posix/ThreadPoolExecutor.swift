import Dispatch
import Glibc
import Synchronization

/// A task executor of a few dedicated threads: the web server's connections run here (through
/// `Task(executorPreference:)`), so neither a handler that blocks (a bcrypt check, a render) nor
/// a caller that blocks the cooperative pool (a synchronous `shutdown`) can stall the other.
///
/// The pool grows with the work and shrinks when it ends: it starts `minimum` threads, starts
/// another (up to `maximum`) when a job arrives and none is idle, and a thread that has waited
/// `idleTimeout` for work ends, down to `minimum`. An idle exporter so holds one web thread,
/// not sixteen (#33); a burst of scrapes that block on one shared render gets its threads. A
/// thread that cannot be started (a thread or memory limit) is not fatal: the job waits for one
/// of the threads already running.
package final class ThreadPoolExecutor: TaskExecutor, Sendable {
    private struct State {
        /// Jobs not yet taken, oldest from `head` on (a queue without `removeFirst`'s shifting).
        package var jobs: [UnownedJob] = []
        package var head = 0
        package var threads = 0
        /// Threads waiting for a job, or starting (counted from the moment they are asked for).
        package var idle = 0
        package var started = 0

        /// The number in the next thread's name (`http-worker-N` stays within the 15 characters
        /// a thread name may have).
        package mutating func nextName() -> Int {
            defer { started += 1 }
            return started % 1000
        }

        package mutating func take() -> UnownedJob? {
            guard head < jobs.count else { return nil }
            let job = jobs[head]
            head += 1
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: jobs.count <= 64)
                head = 0
            } else if head >= 64, head * 2 >= jobs.count {
                // Under sustained load the queue may never drain: drop the taken half.
                jobs.removeFirst(head)
                head = 0
            }
            return job
        }
    }

    private let state = Mutex(State())
    private let available = DispatchSemaphore(value: 0)
    private let name: String
    private let minimum: Int
    private let maximum: Int
    private let idleTimeout: Duration

    package init(name: String, threads maximum: Int, minimum: Int = 1, idleTimeout: Duration = .seconds(30)) {
        self.name = name
        self.maximum = max(1, maximum)
        self.minimum = min(max(1, minimum), self.maximum)
        self.idleTimeout = idleTimeout
        for _ in 0..<self.minimum {
            let n = state.withLock {
                $0.threads += 1
                $0.idle += 1
                return $0.nextName()
            }
            startThread(name: "\(name)-\(n)") { [self] in work() }
        }
    }

    /// Threads running now (busy or idle).
    package var threadCount: Int { state.withLock { $0.threads } }

    package func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        // A thread more when the jobs waiting outnumber the threads waiting (or starting).
        let spawn: Int? = state.withLock { s in
            s.jobs.append(unowned)
            guard s.jobs.count - s.head > s.idle, s.threads < maximum else { return nil }
            s.threads += 1
            s.idle += 1
            return s.nextName()
        }
        if let spawn {
            if tryStartThread(name: "\(name)-\(spawn)", { [self] in work() }) != nil {
                // Not started: the job waits for a running thread (there is always `minimum`).
                state.withLock {
                    $0.threads -= 1
                    $0.idle -= 1
                }
            }
        }
        available.signal()
    }

    private enum Next {
        case run(UnownedJob)
        case wait
        case end
    }

    private func work() {
        let seconds = Double(idleTimeout.components.seconds) + Double(idleTimeout.components.attoseconds) / 1e18
        // Counted idle from the start (see `State.idle`); every wake-up takes it off, under
        // the same lock as taking a job.
        while true {
            let timedOut = available.wait(timeout: .now() + seconds) == .timedOut
            let next: Next = state.withLock { s in
                s.idle -= 1
                if let job = s.take() { return .run(job) }
                guard timedOut, s.threads > minimum else {
                    s.idle += 1
                    return .wait
                }
                s.threads -= 1
                return .end
            }
            switch next {
            case .run(let job):
                job.runSynchronously(on: asUnownedTaskExecutor())
                state.withLock { $0.idle += 1 }
            case .wait: continue
            case .end: return
            }
        }
    }
}
