import CShim
import Glibc

/// A non-blocking `AF_NETLINK`/`NETLINK_ROUTE` socket subscribed to link, address and route
/// changes, which can also send dump requests. The socket belongs to the network namespace of
/// the thread that created it, for its whole life. Owned by one thread; not `Sendable`.
package final class NetlinkSocket {
    /// What one `receive()` found.
    package enum Received {
        case messages([NetlinkMessage])
        /// Nothing queued.
        case empty
        /// The kernel dropped messages (`ENOBUFS`) or one did not fit the buffer: the caller's
        /// view is stale and needs a fresh dump.
        case lost
    }

    package let fd: Int32
    /// The port id the kernel assigned; dump replies carry it, events from others do not.
    package let portID: UInt32
    /// The receive buffer the kernel granted (it reports twice the requested size).
    package let receiveBufferSize: Int
    private var buffer = [UInt8](repeating: 0, count: 64 * 1024)

    /// Opens, sizes (`SO_RCVBUFFORCE` when privileged, else `SO_RCVBUF`, which `rmem_max`
    /// caps) and binds the socket to `groups`.
    package init(groups: UInt32 = RTNL.monitorGroups, receiveBufferSize: Int = 1 << 20) throws(Errno) {
        let fd = socket(
            AF_NETLINK,
            Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
                | Int32(SOCK_NONBLOCK.rawValue), NETLINK_ROUTE)
        guard fd >= 0 else { throw Errno.current }
        do throws(Errno) {
            let size = Int32(clamping: receiveBufferSize)
            if (try? setSocketOption(fd, SOL_SOCKET, SO_RCVBUFFORCE, size)) == nil {
                try setSocketOption(fd, SOL_SOCKET, SO_RCVBUF, size)
            }
            var address = sockaddr_nl()
            address.nl_family = sa_family_t(AF_NETLINK)
            address.nl_groups = groups
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_nl>.size))
                }
            }
            guard bound == 0 else { throw Errno.current }
            var length = socklen_t(MemoryLayout<sockaddr_nl>.size)
            let named = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            guard named == 0 else { throw Errno.current }
            var granted: Int32 = 0
            var grantedLength = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &granted, &grantedLength)
            self.fd = fd
            self.portID = address.nl_pid
            self.receiveBufferSize = Int(granted)
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    deinit { Glibc.close(fd) }

    /// Asks the kernel to dump one kind of object; replies carry `sequence` and `portID`.
    package func requestDump(_ kind: DumpKind, sequence: UInt32) throws(Errno) {
        var body: [UInt8]
        switch kind {
        case .links:
            var m = ifinfomsg()
            m.ifi_family = kind.family
            body = withUnsafeBytes(of: m) { Array($0) }
        case .addresses:
            var m = ifaddrmsg()
            m.ifa_family = kind.family
            body = withUnsafeBytes(of: m) { Array($0) }
        case .ipv4Routes, .ipv6Routes:
            var m = rtmsg()
            m.rtm_family = kind.family
            body = withUnsafeBytes(of: m) { Array($0) }
        }
        var header = nlmsghdr()
        header.nlmsg_len = UInt32(RTNL.headerSize + body.count)
        header.nlmsg_type = kind.requestType
        header.nlmsg_flags = RTNL.flagRequest | RTNL.flagDump
        header.nlmsg_seq = sequence
        let request = withUnsafeBytes(of: header) { Array($0) } + body
        try sendToKernel(fd, request)
    }

    /// Reads one datagram (it may hold several messages) without blocking.
    package func receive() throws(Errno) -> Received {
        while true {
            var truncated = false
            let n = buffer.withUnsafeMutableBytes { raw -> Int in
                var iov = iovec(iov_base: raw.baseAddress, iov_len: raw.count)
                return withUnsafeMutablePointer(to: &iov) { iovp in
                    var msg = msghdr()
                    msg.msg_iov = iovp
                    msg.msg_iovlen = 1
                    let n = recvmsg(fd, &msg, 0)
                    truncated = msg.msg_flags & Int32(MSG_TRUNC) != 0
                    return n
                }
            }
            if n < 0 {
                let code = errno
                switch code {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK: return .empty
                case ENOBUFS: return .lost
                default: throw Errno(code)
                }
            }
            if truncated { return .lost }
            return buffer.withUnsafeBytes {
                .messages(NetlinkDecoder.decode(UnsafeRawBufferPointer(rebasing: $0[0..<n])))
            }
        }
    }
}
