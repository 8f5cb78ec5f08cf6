import CShim
import Dispatch
import Glibc
import ReachabilityExporter
import ReachabilityVerdict
import Synchronization

/// A task executor whose one thread lives in another network namespace, so that async code run
/// with `withTaskExecutorPreference(executor) { … }` creates its sockets there. `setns(2)`
/// moves only the calling thread, and a socket belongs to the namespace of the thread that
/// created it; the preference keeps every nonisolated step of the task (including resumptions
/// after reactor waits) on this thread. The reactor's epoll thread may watch those sockets:
/// epoll does not care about namespaces.
///
/// Contract: call `shutdown()` when done (the thread holds the executor alive until then).
/// Not for: code that hops to actors or other executors before creating a socket.
package final class NetnsExecutor: TaskExecutor {
    private let jobs = Mutex<[UnownedJob]>([])
    private let available = DispatchSemaphore(value: 0)
    private let running = Atomic<Bool>(true)

    /// Starts the thread and moves it into the namespace at `path`; throws if that fails or if
    /// the thread's namespace afterwards is not the one at `path` (checked by inode).
    package init(namespacePath path: String) throws {
        ignoreBrokenPipes()  // a child that exits early must fail the test, not kill the run
        let ready = DispatchSemaphore(value: 0)
        let outcome = Mutex<String?>(nil)
        startThread(name: "netns-executor") { [self] in
            let problem = Self.enter(path)
            outcome.withLock { $0 = problem }
            ready.signal()
            guard problem == nil else { return }
            while true {
                available.wait()
                if let job = jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
                    job.runSynchronously(on: asUnownedTaskExecutor())
                } else if !running.load(ordering: .acquiring) {
                    return
                }
            }
        }
        ready.wait()
        if let problem = outcome.withLock({ $0 }) { throw TestSupportError(problem) }
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        jobs.withLock { $0.append(unowned) }
        available.signal()
    }

    /// Ends the thread once the jobs queued so far have run; jobs enqueued later never run.
    package func shutdown() {
        running.store(false, ordering: .releasing)
        available.signal()
    }

    private static func enter(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "open \(path): \(Errno.current)" }
        defer { close(fd) }
        guard cshim_setns_net(fd) == 0 else { return "setns \(path): \(Errno.current)" }
        var target = stat()
        var mine = stat()
        guard stat(path, &target) == 0, stat("/proc/thread-self/ns/net", &mine) == 0, target.st_ino == mine.st_ino
        else {
            return "thread is not in \(path) after setns"
        }
        return nil
    }
}
