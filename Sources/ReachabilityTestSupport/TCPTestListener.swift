import Glibc
import Reachability

/// A TCP socket on a loopback address, port 0, for connect tests: listening (the kernel
/// completes handshakes into the backlog; nothing is accepted or read), or only bound, which
/// reserves a port whose connects are refused with a reset. Closed on `close()` or deinit.
public final class TCPTestListener: Sendable {
    /// The numeric address with the port the kernel chose.
    public let address: SocketAddress
    private let fd: Int32

    public init(host: String = "127.0.0.1", listening: Bool = true) throws {
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
    }

    deinit { Glibc.close(fd) }
}
