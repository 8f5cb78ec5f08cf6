import CShim
import Glibc
import ReachabilityVerdict

extension HTTPServer {
    /// Where the server accepts connections: an address it binds itself, or a listening socket
    /// it was handed (systemd socket activation, `--web.systemd-socket`).
    package enum Listener: Sendable, Equatable {
        case address(ListenAddress)
        /// An open, listening stream socket; the server takes it over (and closes it at the end).
        case inherited(Int32)

        /// The listening descriptor, non-blocking (the accept loop drains until EAGAIN).
        func open() throws(Errno) -> Int32 {
            switch self {
            case .address(let listen): return try HTTPServer.openListener(listen)
            case .inherited(let fd):
                var listening: Int32 = 0
                var len = socklen_t(4)
                guard getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) == 0 else { throw Errno.current }
                guard listening == 1 else { throw Errno(EINVAL) }
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                try setNonBlocking(fd)
                return fd
            }
        }
    }

    /// The sockets systemd passed (`LISTEN_FDS`, from descriptor 3, for this process as
    /// `LISTEN_PID` says), as listeners; the variables are then unset so children do not see them.
    package static func systemdListeners(environment: [String: String]) -> [Listener] {
        guard let pid = environment["LISTEN_PID"].flatMap({ Int32($0) }), pid == getpid(),
            let count = environment["LISTEN_FDS"].flatMap({ Int32($0) }), count > 0, count < 1024
        else { return [] }
        for name in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] { unsetenv(name) }
        return (0..<count).map { .inherited(3 + $0) }
    }

    static func openListener(_ listen: ListenAddress) throws(Errno) -> Int32 {
        let wildcard = listen.host.isEmpty
        var candidates: [SocketAddress] = []
        if wildcard {
            candidates = [
                SocketAddress(ip: "::", port: listen.port)!, SocketAddress(ip: "0.0.0.0", port: listen.port)!,
            ]
        } else if let a = SocketAddress(ip: listen.host, port: listen.port) {
            candidates = [a]
        }
        var lastError = Errno(EINVAL)
        for address in candidates {
            let fd = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            if fd < 0 {
                lastError = Errno.current
                continue
            }
            do throws(Errno) {
                try setSocketOption(fd, SOL_SOCKET, SO_REUSEADDR, 1)
                if address.family == AF_INET6 && wildcard {
                    try setSocketOption(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, 0)
                }
                let rc = address.withSockAddr { bind(fd, $0, $1) }
                if rc != 0 { throw Errno.current }
                if Glibc.listen(fd, 1024) != 0 { throw Errno.current }
                // Non-blocking: the accept loop drains the queue until EAGAIN after each poll.
                try setNonBlocking(fd)
                return fd
            } catch {
                lastError = error
                close(fd)
            }
        }
        throw lastError
    }

    /// The address a socket is bound to (its port resolved when it was 0).
    static func localAddress(_ fd: Int32) -> SocketAddress {
        var storage = sockaddr_storage()
        var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        return withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress($0, length: len) }
        }
    }
}
