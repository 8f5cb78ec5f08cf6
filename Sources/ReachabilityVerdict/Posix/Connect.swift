import CShim
import Glibc

/// Why a socket could not be set up or connected: a coarse kind that probes map to a failure
/// reason, plus the errno and the step for people.
package struct ConnectError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The coarse class of failure, from the errno.
    package enum Kind: String, Sendable, Equatable {
        /// The peer answered with a reset (ECONNREFUSED), or ICMP port unreachable for UDP.
        case refused
        /// The deadline passed first (or the kernel gave up: ETIMEDOUT).
        case timedOut
        /// No route, network down, host unreachable, no usable source address.
        case unreachable
        /// The connection was reset or aborted after it started.
        case reset
        /// EACCES/EPERM: a firewall rule, or binding to a device without CAP_NET_RAW.
        case permission
        /// SO_BINDTODEVICE named an interface that does not exist (ENODEV).
        case noSuchInterface
        /// The waiting task was cancelled.
        case cancelled
        /// Anything else (see `errno`).
        case other
    }

    package let kind: Kind
    package let errno: Errno?
    /// The call that failed: `socket`, `SO_BINDTODEVICE`, `connect`, `send`, `recv`.
    package let step: String

    package init(kind: Kind, step: String, errno: Errno? = nil) {
        self.kind = kind
        self.step = step
        self.errno = errno
    }

    /// Classifies an errno from a socket call.
    package init(errno: Errno, step: String) {
        let kind: Kind
        switch errno.code {
        case ECONNREFUSED: kind = .refused
        case ETIMEDOUT: kind = .timedOut
        case ENETUNREACH, EHOSTUNREACH, ENETDOWN, EHOSTDOWN, EADDRNOTAVAIL: kind = .unreachable
        case ECONNRESET, ECONNABORTED, EPIPE: kind = .reset
        case EACCES, EPERM: kind = .permission
        case ENODEV: kind = .noSuchInterface
        default: kind = .other
        }
        self.init(kind: kind, step: step, errno: errno)
    }

    package var description: String {
        switch kind {
        case .timedOut where errno == nil: "\(step): timed out"
        case .cancelled: "\(step): cancelled"
        default: "\(step): \(errno.map(\.description) ?? kind.rawValue)"
        }
    }
}

/// Opens a non-blocking TCP socket and connects it to `address` before `deadline`, without
/// parking a thread: the connect runs in the kernel and the reactor waits for writability,
/// then `SO_ERROR` tells the outcome.
///
/// - Parameter interface: when set, the socket is bound to that device first (SO_BINDTODEVICE;
///   needs CAP_NET_RAW), so the connection leaves through it whatever the routing table says.
/// - Returns: the connected descriptor (non-blocking, close-on-exec), owned by the caller, who
///   must close it (`closeDescriptor`). On failure nothing stays open.
package func connectSocket(to address: SocketAddress, interface: String? = nil, deadline: ContinuousClock.Instant) async
    -> Result<Int32, ConnectError>
{
    if ContinuousClock.now >= deadline { return .failure(ConnectError(kind: .timedOut, step: "connect")) }
    let flags = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
    let fd = socket(address.family, flags, 0)
    guard fd >= 0 else { return .failure(ConnectError(errno: .current, step: "socket")) }
    if let interface {
        if let error = bindToDevice(fd, interface) {
            Glibc.close(fd)
            return .failure(error)
        }
    }
    let rc = address.withSockAddr { Glibc.connect(fd, $0, $1) }
    if rc == 0 { return .success(fd) }
    let err = errno
    // EINTR on a non-blocking connect means it goes on in the background, like EINPROGRESS.
    guard err == EINPROGRESS || err == EINTR else {
        Glibc.close(fd)
        return .failure(ConnectError(errno: Errno(err), step: "connect"))
    }
    // What the attempt put on the wire (its SYNs, a reset back) counts as it closes.
    let meter = TrafficMeter.current
    switch await Reactor.shared.waitWritable(fd, deadline: deadline) {
    case .timedOut:
        meter?.tcpClosing(fd)
        Glibc.close(fd)
        return .failure(ConnectError(kind: .timedOut, step: "connect"))
    case .cancelled:
        meter?.tcpClosing(fd)
        Glibc.close(fd)
        return .failure(ConnectError(kind: .cancelled, step: "connect"))
    case .ready:
        var soError: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &length) != 0 { soError = errno }
        if soError == 0 { return .success(fd) }
        meter?.tcpClosing(fd)
        Glibc.close(fd)
        return .failure(ConnectError(errno: Errno(soError), step: "connect"))
    }
}

/// Closes a descriptor handed out by `connectSocket(to:interface:deadline:)`, counting what the
/// connection carried into the running task's meter (`TrafficMeter.current`).
package func closeDescriptor(_ fd: Int32) {
    TrafficMeter.current?.tcpClosing(fd)
    Glibc.close(fd)
}

/// Binds `fd` to a network device by name (SO_BINDTODEVICE), then applies the uplink's policy
/// routing (`UplinkRouting`: its mark, its source address of the socket's family); nil on success.
package func bindToDevice(_ fd: Int32, _ interface: String) -> ConnectError? {
    let rc = interface.withCString { name in
        setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, name, socklen_t(strlen(name) + 1))
    }
    if rc != 0 { return ConnectError(errno: .current, step: "SO_BINDTODEVICE \(interface)") }
    guard let routing = UplinkRouting.of(interface) else { return nil }
    var domain: Int32 = 0
    var length = socklen_t(4)
    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &length)
    if let failed = routing.apply(to: fd, family: domain == AF_INET6 ? .ipv6 : .ipv4) {
        return ConnectError(errno: failed.errno, step: "\(failed.step) for \(interface)")
    }
    return nil
}
