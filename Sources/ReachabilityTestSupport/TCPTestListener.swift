import CShim
import Dispatch
import Glibc
import ReachabilityExporter
import ReachabilityVerdict
import Synchronization

/// A TCP socket on a loopback address, port 0, for connect tests. Listening, it accepts and at
/// once closes every connection on a thread of its own (so its backlog never fills, however
/// many rounds a test runs); only bound (`listening: false`), it reserves a port whose connects
/// are refused with a reset. Call `stop()` when done: it returns once the socket is closed.
///
/// `greeting` is sent on each connection before it is closed (a server's banner); `holdsOpen`
/// keeps each connection open and silent until `stop()` (a middlebox that completes the
/// handshake and never speaks).
package final class TCPTestListener: Sendable {
    /// The numeric address with the port the kernel chose.
    package let address: SocketAddress
    private let fd: Int32
    private let listening: Bool
    private let acceptCount = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let greeting: [UInt8]
    private let holdsOpen: Bool

    package init(
        host: String = "127.0.0.1", listening: Bool = true, greeting: [UInt8] = [], holdsOpen: Bool = false
    ) throws {
        self.greeting = greeting
        self.holdsOpen = holdsOpen
        guard let bindAddress = SocketAddress(ip: host, port: 0) else { throw TestSupportError("not an IP: \(host)") }
        let fd = socket(bindAddress.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestSupportError("socket: \(Errno.current)") }
        address = try boundAddress(fd, bindAddress)
        if listening, listen(fd, 64) != 0 {
            let e = Errno.current
            Glibc.close(fd)
            throw TestSupportError("listen: \(e)")
        }
        self.fd = fd
        self.listening = listening
        if listening {
            startThread(name: "tcp-test-listener") { [self] in serve() }
        }
    }

    deinit {
        if !listening { Glibc.close(fd) }
    }

    /// Connections accepted so far.
    package var accepted: Int { acceptCount.load(ordering: .acquiring) }

    /// Connections accepted once the listener's thread has caught up: the kernel completes a
    /// handshake before `accept` returns, so a client can finish before the count moves. Waits
    /// until at least `count` are accepted or `within` has passed, then returns the count.
    package func accepted(reaching count: Int, within: Duration = .seconds(2)) -> Int {
        let end = ContinuousClock.now + within
        while accepted < count, ContinuousClock.now < end { usleep(5_000) }
        return accepted
    }

    /// Stops accepting and returns once the socket is closed (within one 20 ms poll interval).
    /// A bound-only socket closes when the object goes away.
    package func stop() {
        guard listening, !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        finished.wait()
    }

    private func serve() {
        // Bounded: the loop ends at stop(), and each turn waits at most 20 ms.
        var held: [Int32] = []
        while !stopped.load(ordering: .acquiring) {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 20) == 1 else { continue }
            let client = accept(fd, nil, nil)
            if client >= 0 {
                acceptCount.add(1, ordering: .releasing)
                if !greeting.isEmpty { _ = greeting.withUnsafeBytes { send(client, $0.baseAddress, $0.count, 0) } }
                if holdsOpen && held.count < 64 { held.append(client) } else { Glibc.close(client) }
            }
        }
        for client in held { Glibc.close(client) }
        Glibc.close(fd)
        finished.signal()
    }
}
