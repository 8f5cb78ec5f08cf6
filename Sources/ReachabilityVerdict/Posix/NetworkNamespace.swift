import CShim
import Dispatch
import Glibc
import Synchronization

/// Runs short blocking work (typically `socket()`) inside another network namespace without
/// moving the process: a fresh thread joins the namespace with `setns(2)`, which affects only
/// that thread, runs the body and exits. Sockets keep the namespace they were created in, so a
/// socket made there can be used from any thread afterwards.
///
/// Not for long-running work (the caller blocks until the body returns) and not for reading
/// /sys or /proc of the namespace (those follow mounts, not `setns`).
package enum NetworkNamespace {
    /// The path of a namespace made by `ip netns add NAME`.
    package static func path(named name: String) -> String { "/run/netns/\(name)" }

    /// Runs `body` on a new thread that has joined the network namespace at `path` (for
    /// example `/run/netns/NAME` or `/proc/PID/ns/net`), after `prepare` ran on that thread.
    /// Throws the errno of `open` or `setns` (EPERM without CAP_SYS_ADMIN).
    package static func run<T: Sendable>(
        inNamespaceAt path: String?, _ body: @escaping @Sendable () -> T
    ) throws(Errno) -> T {
        try onDedicatedThread(namespace: path, prepare: {}, body)
    }

    /// Like `run(inNamespaceAt:_:)`, with a `prepare` step on the same thread before `body`
    /// (tests use it to drop capabilities of that thread only).
    package static func onDedicatedThread<T: Sendable>(
        namespace path: String?, prepare: @escaping @Sendable () -> Void, _ body: @escaping @Sendable () -> T
    ) throws(Errno) -> T {
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<T, Errno>?>(nil)
        startThread(name: "netns-call") {
            let result: Result<T, Errno>
            if let path {
                let nsFD = open(path, O_RDONLY | O_CLOEXEC)
                if nsFD < 0 {
                    result = .failure(Errno.current)
                } else {
                    let rc = cshim_setns_net(nsFD)
                    let err = Errno.current
                    Glibc.close(nsFD)
                    if rc != 0 {
                        result = .failure(err)
                    } else {
                        prepare()
                        result = .success(body())
                    }
                }
            } else {
                prepare()
                result = .success(body())
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        // The thread stored the result before signalling.
        switch outcome.withLock({ $0 }) {
        case .success(let value)?: return value
        case .failure(let err)?: throw err
        case nil: throw Errno(EIO)
        }
    }
}
