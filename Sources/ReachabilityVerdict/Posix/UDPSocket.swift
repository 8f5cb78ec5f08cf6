import CShim
import Glibc

/// A non-blocking UDP socket connected to one peer, for request/response probes (DNS).
/// Being connected, it only receives datagrams from that peer, and ICMP errors about the peer
/// (port or host unreachable) come back as errors of the next send or receive.
///
/// Contract: one task uses it at a time (one pending wait, per the reactor's rule); the
/// descriptor is closed when the object goes away.
package final class UDPSocket: Sendable {
    /// What one non-blocking receive found.
    package enum Received: Sendable, Equatable {
        case datagram([UInt8])
        /// Nothing queued right now.
        case wouldBlock
        case failed(ConnectError)
    }

    /// Largest datagram read; anything bigger is cut (DNS over UDP without EDNS is ≤ 512).
    package static let maxDatagram = 65_535

    private let fd: Int32
    private let family: IPFamily
    /// The meter of the task that made it (a probe's): each datagram counts into it.
    private let meter: TrafficMeter?

    /// Opens a socket of the peer's family, binds it to `interface` when given, and connects it.
    package init(connectedTo peer: SocketAddress, interface: String? = nil) throws(ConnectError) {
        let flags = Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let fd = socket(peer.family, flags, 0)
        guard fd >= 0 else { throw ConnectError(errno: .current, step: "socket") }
        if let interface, let error = bindToDevice(fd, interface) {
            Glibc.close(fd)
            throw error
        }
        let rc = peer.withSockAddr { Glibc.connect(fd, $0, $1) }
        if rc != 0 {
            let error = ConnectError(errno: .current, step: "connect")
            Glibc.close(fd)
            throw error
        }
        self.fd = fd
        family = peer.ipFamily
        meter = TrafficMeter.current
    }

    deinit { Glibc.close(fd) }

    /// Sends one datagram; nil when the kernel took it whole.
    package func send(_ bytes: [UInt8]) -> ConnectError? {
        while true {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n == bytes.count {
                meter?.udp(payload: n, family: family, sent: true)
                return nil
            }
            if n >= 0 { return ConnectError(kind: .other, step: "send (short write \(n) of \(bytes.count))") }
            let err = errno
            if err != EINTR { return ConnectError(errno: Errno(err), step: "send") }
        }
    }

    /// Takes one queued datagram, if any, without blocking.
    package func receive() -> Received {
        var buffer = [UInt8](repeating: 0, count: Self.maxDatagram)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n >= 0 {
                meter?.udp(payload: n, family: family, sent: false)
                return .datagram(Array(buffer[0..<n]))
            }
            let err = errno
            if err == EINTR { continue }
            if err == EAGAIN || err == EWOULDBLOCK { return .wouldBlock }
            return .failed(ConnectError(errno: Errno(err), step: "recv"))
        }
    }

    /// Waits until a datagram (or an error) is queued, the deadline passes, or the task is cancelled.
    package func waitReadable(deadline: ContinuousClock.Instant) async -> Readiness {
        await Reactor.shared.waitReadable(fd, deadline: deadline)
    }
}
