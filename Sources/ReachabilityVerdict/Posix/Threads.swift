import CShim
import Glibc

private final class ThreadBody: @unchecked Sendable {
    // Written once before the thread starts and read once by it.
    package let name: String
    package let body: @Sendable () -> Void
    package init(name: String, body: @escaping @Sendable () -> Void) {
        self.name = name
        self.body = body
    }
}

/// Starts a detached POSIX thread running `body`, named for `top -H` and debuggers.
/// Used for loops that block in the kernel (epoll, netlink, accept) and so must stay off the
/// cooperative pool.
@discardableResult
package func startThread(name: String, _ body: @escaping @Sendable () -> Void) -> pthread_t {
    switch spawnThread(name: name, body) {
    case .success(let thread): return thread
    case .failure(let e): preconditionFailure("pthread_create failed: \(e)")
    }
}

/// `startThread` for threads started while serving: a thread limit or low memory gives the
/// error (nil when the thread started) instead of stopping the process.
package func tryStartThread(name: String, _ body: @escaping @Sendable () -> Void) -> Errno? {
    switch spawnThread(name: name, body) {
    case .success: return nil
    case .failure(let e): return e
    }
}

private func spawnThread(name: String, _ body: @escaping @Sendable () -> Void) -> Result<pthread_t, Errno> {
    let box = Unmanaged.passRetained(ThreadBody(name: name, body: body))
    var thread = pthread_t()
    var attr = pthread_attr_t()
    pthread_attr_init(&attr)
    pthread_attr_setdetachstate(&attr, Int32(PTHREAD_CREATE_DETACHED))
    let rc = pthread_create(
        &thread, &attr,
        { raw in
            let body = Unmanaged<ThreadBody>.fromOpaque(raw!).takeRetainedValue()
            body.name.withCString { cshim_set_thread_name($0) }
            body.body()
            return nil
        }, box.toOpaque())
    pthread_attr_destroy(&attr)
    guard rc == 0 else {
        box.release()
        return .failure(Errno(rc))
    }
    return .success(thread)
}
