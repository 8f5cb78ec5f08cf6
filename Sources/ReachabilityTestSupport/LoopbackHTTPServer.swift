import COpenSSL
import CShim
import Glibc
import ReachabilityExporter
import ReachabilityVerdict
import Synchronization

/// A small HTTP(S) server on 127.0.0.1 or ::1, port 0, for tests and benchmarks: one blocking
/// accept thread and one thread per connection, each running a `LoopbackHTTPBehavior` — a
/// well-behaved answer or a hostile one (silence, drip, endless body, reset, garbage).
///
/// Contract: call `stop()` when done (the threads keep the server alive until then). `stop()`
/// wakes every blocked accept, read and write, so no thread outlives it for long.
package final class LoopbackHTTPServer: Sendable {
    package let host: String
    package let port: UInt16
    package let isTLS: Bool
    let stopFD: Int32
    private let listenFD: Int32
    private let tls: LoopbackTLSIdentity?
    private let behavior: LoopbackHTTPBehavior
    private let state = Mutex(State())

    private struct State {
        var stopped = false
        var clients: Set<Int32> = []
        var requests: [String] = []
        var accepted = 0
    }

    /// Listens on `host` (numeric) and `port` (0: the kernel picks; the fault lab binds 80/443
    /// inside its namespaces) and starts accepting.
    package init(
        host: String = "127.0.0.1", port: UInt16 = 0, tls: LoopbackTLSIdentity? = nil, behavior: LoopbackHTTPBehavior
    ) throws(Errno) {
        ignoreBrokenPipes()  // a client that leaves early must fail the test, not kill the run
        guard let address = SocketAddress(ip: host, port: port) else { throw Errno(EINVAL) }
        let fd = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        if fd < 0 { throw Errno.current }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if address.withSockAddr({ bind(fd, $0, $1) }) != 0 || listen(fd, 128) != 0 {
            let e = Errno.current
            Glibc.close(fd)
            throw e
        }
        var bound = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &bound) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        let local = withUnsafePointer(to: &bound) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress($0, length: length) }
        }
        self.host = host
        self.port = local.port
        self.isTLS = tls != nil
        self.tls = tls
        self.behavior = behavior
        self.listenFD = fd
        self.stopFD = eventfd(0, Int32(EFD_CLOEXEC))
        startThread(name: "loopback-accept") { [self] in acceptLoop() }
    }

    deinit { Glibc.close(stopFD) }

    /// `http://127.0.0.1:PORT` or `https://[::1]:PORT`, without a trailing slash.
    package var baseURL: String {
        let h = host.contains(":") ? "[\(host)]" : host
        return "\(isTLS ? "https" : "http")://\(h):\(port)"
    }

    package func url(_ path: String = "/") -> String { baseURL + path }

    /// Request heads received so far, in arrival order.
    package var requests: [String] { state.withLock { $0.requests } }
    /// Connections accepted so far.
    package var acceptedConnections: Int { state.withLock { $0.accepted } }

    /// Stops accepting, wakes and ends every connection thread. Idempotent.
    package func stop() {
        let clients: Set<Int32>? = state.withLock { s in
            if s.stopped { return nil }
            s.stopped = true
            return s.clients
        }
        guard let clients else { return }
        var one: UInt64 = 1
        _ = Glibc.write(stopFD, &one, 8)
        shutdown(listenFD, Int32(SHUT_RDWR))
        // Shut down under the lock so a descriptor cannot be closed and reused meanwhile.
        state.withLock { s in for fd in s.clients where clients.contains(fd) { shutdown(fd, Int32(SHUT_RDWR)) } }
    }

    var isStopped: Bool { state.withLock { $0.stopped } }

    func record(request: String) { state.withLock { $0.requests.append(request) } }

    private func acceptLoop() {
        defer { Glibc.close(listenFD) }
        while true {
            let client = cshim_accept4(listenFD, nil, nil, Int32(SOCK_CLOEXEC.rawValue))
            if client < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            let admitted = state.withLock { s -> Bool in
                if s.stopped { return false }
                s.clients.insert(client)
                s.accepted += 1
                return true
            }
            guard admitted else {
                Glibc.close(client)
                return
            }
            startThread(name: "loopback-conn") { [self] in serve(client) }
        }
    }

    private func serve(_ fd: Int32) {
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connection = LoopbackConnection(fd: fd, server: self, tls: tls)
        if connection.acceptTLS() {
            behavior.run(connection)
        }
        connection.finish()
        state.withLock { s in
            s.clients.remove(fd)
            Glibc.close(fd)  // sends RST instead of FIN when the behaviour asked for a reset
        }
    }
}
