import Dispatch
import Synchronization

/// A task executor of a few dedicated threads: the web server's connections run here (through
/// `Task(executorPreference:)`), so neither a handler that blocks (a bcrypt check, a render) nor
/// a caller that blocks the cooperative pool (a synchronous `shutdown`) can stall the other.
package final class ThreadPoolExecutor: TaskExecutor, Sendable {
    private let jobs = Mutex<[UnownedJob]>([])
    private let available = DispatchSemaphore(value: 0)

    package init(name: String, threads: Int) {
        for i in 0..<max(1, threads) {
            startThread(name: "\(name)-\(i)") { [self] in
                while true {
                    available.wait()
                    guard let job = jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { continue }
                    job.runSynchronously(on: asUnownedTaskExecutor())
                }
            }
        }
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        jobs.withLock { $0.append(unowned) }
        available.signal()
    }
}
