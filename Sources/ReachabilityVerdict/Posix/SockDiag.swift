import CShim
import Glibc

/// One TCP socket of this host as `NETLINK_SOCK_DIAG` reports it (`inet_diag_msg` plus the
/// `tcp_info` fields passive evidence reads). Addresses are raw bytes (4 or 16), never text:
/// nothing here is meant to be logged or exported.
package struct TCPSocketInfo: Sendable, Equatable {
    package var family: IPFamily
    /// The kernel's TCP state (`TCP_ESTABLISHED` 1, `TCP_SYN_SENT` 2, …).
    package var state: UInt8
    package var source: [UInt8]
    package var destination: [UInt8]
    package var sourcePort: UInt16
    package var destinationPort: UInt16
    /// The interface the socket is bound to (`SO_BINDTODEVICE`), 0 when none.
    package var boundInterface: UInt32
    /// Consecutive retransmission timeouts of the current segment (`tcpi_retransmits`).
    package var retransmits: UInt8
    /// Bytes sent and not yet acknowledged... in segments (`tcpi_unacked`).
    package var unacked: UInt32
    /// Milliseconds since data last came in (`tcpi_last_data_recv`), since the socket's birth
    /// when none ever did.
    package var lastDataReceived: UInt32
    /// Milliseconds since an acknowledgement last came in (`tcpi_last_ack_recv`).
    package var lastAckReceived: UInt32
    /// Payload bytes received (`tcpi_bytes_received`; nil before Linux 4.1).
    package var bytesReceived: UInt64?
    /// Retransmitted segments over the connection's life (`tcpi_total_retrans`).
    package var totalRetransmits: UInt32
    /// The socket's inode (`idiag_inode`): tells this process's own sockets apart.
    package var inode: UInt32 = 0

    package static let established: UInt8 = 1
    package static let synSent: UInt8 = 2
}

/// Sends one netlink request to the kernel (port 0): the whole of it, or throws.
package func sendToKernel(_ fd: Int32, _ request: [UInt8]) throws(Errno) {
    var kernel = sockaddr_nl()
    kernel.nl_family = sa_family_t(AF_NETLINK)
    let sent = try retryingOnInterrupt {
        request.withUnsafeBytes { bytes in
            withUnsafePointer(to: &kernel) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_nl>.size))
                }
            }
        }
    }
    if sent != request.count { throw Errno(EIO) }
}

extension SockDiag {
    /// The inodes of this process's own sockets (`/proc/self/fd` links `socket:[N]`): its probes'
    /// connections are not evidence of anything but the probes.
    package static func ownSocketInodes() -> Set<UInt32> {
        var out: Set<UInt32> = []
        guard let dir = opendir("/proc/self/fd") else { return out }
        defer { closedir(dir) }
        var target = [CChar](repeating: 0, count: 64)
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.first?.isNumber == true else { continue }
            let n = readlink("/proc/self/fd/" + name, &target, target.count - 1)
            guard n > 9 else { continue }
            let text = String(decoding: target[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard text.hasPrefix("socket:["), text.hasSuffix("]"), let inode = UInt32(text.dropFirst(8).dropLast())
            else {
                continue
            }
            out.insert(inode)
        }
        return out
    }
}

/// Reads the host's TCP sockets through `NETLINK_SOCK_DIAG` (`SOCK_DIAG_BY_FAMILY` dumps with
/// `INET_DIAG_INFO`), as `ss -ti` does: one request per family, one pass over the replies, no
/// per-socket system call. Runs in the calling thread's network namespace. Needs no privilege
/// (every user may dump TCP sockets; the kernel hides nothing but other namespaces).
package enum SockDiag {
    package static let netlinkSockDiag: Int32 = 4  // NETLINK_SOCK_DIAG
    package static let sockDiagByFamily: UInt16 = 20  // SOCK_DIAG_BY_FAMILY
    package static let inetDiagInfo: UInt16 = 2  // INET_DIAG_INFO
    package static let messageSize = 72  // sizeof(struct inet_diag_msg)

    /// Established and connecting (SYN sent) TCP sockets of `families`.
    package static func tcpSockets(families: [IPFamily] = IPFamily.allCases) throws(Errno) -> [TCPSocketInfo] {
        let fd = Glibc.socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), netlinkSockDiag)
        guard fd >= 0 else { throw Errno.current }
        defer { close(fd) }
        // A dump never ends without NLMSG_DONE; should the kernel stall, give up after 2 s.
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var out: [TCPSocketInfo] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 128 * 1024, alignment: 8)
        defer { buffer.deallocate() }
        for (i, family) in families.enumerated() {
            try send(fd, family: family, sequence: UInt32(i + 1))
            reading: while true {
                let n = try retryingOnInterrupt { recv(fd, buffer.baseAddress, buffer.count, 0) }
                guard n > 0 else { throw Errno(EIO) }
                switch decode(UnsafeRawBufferPointer(rebasing: buffer[0..<n]), into: &out) {
                case .more: continue
                case .done: break reading
                case .failed(let code): throw Errno(code)
                }
            }
        }
        return out
    }

    /// `struct inet_diag_req_v2` for TCP sockets established or connecting, with `tcp_info`.
    package static func send(_ fd: Int32, family: IPFamily, sequence: UInt32) throws(Errno) {
        let size = 16 + 56  // nlmsghdr + inet_diag_req_v2
        var request = [UInt8](repeating: 0, count: size)
        request.withUnsafeMutableBytes { r in
            r.storeBytes(of: UInt32(size), toByteOffset: 0, as: UInt32.self)  // nlmsg_len
            r.storeBytes(of: sockDiagByFamily, toByteOffset: 4, as: UInt16.self)  // nlmsg_type
            r.storeBytes(of: UInt16(NLM_F_REQUEST | NLM_F_DUMP), toByteOffset: 6, as: UInt16.self)
            r.storeBytes(of: sequence, toByteOffset: 8, as: UInt32.self)
            r[16] = UInt8(family == .ipv4 ? AF_INET : AF_INET6)  // sdiag_family
            r[17] = UInt8(IPPROTO_TCP)  // sdiag_protocol
            r[18] = UInt8(1 << (inetDiagInfo - 1))  // idiag_ext
            let states = UInt32(1) << UInt32(TCPSocketInfo.established) | UInt32(1) << UInt32(TCPSocketInfo.synSent)
            r.storeBytes(of: states, toByteOffset: 20, as: UInt32.self)  // idiag_states
        }
        try sendToKernel(fd, request)
    }

    package enum Decoded: Equatable {
        case more, done
        case failed(Int32)
    }

    /// Decodes one datagram of dump replies, appending each socket; bounds-checked throughout
    /// (a short or lying length ends the datagram, it never reads past it).
    package static func decode(_ bytes: UnsafeRawBufferPointer, into out: inout [TCPSocketInfo]) -> Decoded {
        var offset = 0
        while offset + 16 <= bytes.count {
            let length = Int(bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
            let type = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt16.self)
            guard length >= 16, offset + length <= bytes.count else { return .more }
            switch Int32(type) {
            case NLMSG_DONE: return .done
            case NLMSG_ERROR:
                let code = length >= 20 ? bytes.loadUnaligned(fromByteOffset: offset + 16, as: Int32.self) : -EIO
                return code == 0 ? .done : .failed(-code)
            default:
                if type == sockDiagByFamily,
                    let socket = decodeSocket(
                        UnsafeRawBufferPointer(rebasing: bytes[(offset + 16)..<(offset + length)]))
                {
                    out.append(socket)
                }
            }
            offset += (length + 3) & ~3
        }
        return .more
    }

    /// One `inet_diag_msg` and its attributes; nil when too short or of another family.
    package static func decodeSocket(_ m: UnsafeRawBufferPointer) -> TCPSocketInfo? {
        guard m.count >= messageSize else { return nil }
        var family: IPFamily
        switch Int32(m[0]) {
        case AF_INET: family = .ipv4
        case AF_INET6: family = .ipv6
        default: return nil
        }
        var size = family == .ipv4 ? 4 : 16
        var (sourceAt, destinationAt) = (8, 24)
        // An IPv4 connection of a dual-stack IPv6 socket (::ffff:a.b.c.d at both ends) is IPv4.
        let mapped: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]
        if family == .ipv6, Array(m[24..<36]) == mapped, Array(m[8..<20]) == mapped || m[8..<24].allSatisfy({ $0 == 0 })
        {
            family = .ipv4
            size = 4
            (sourceAt, destinationAt) = (m[8..<24].allSatisfy { $0 == 0 } ? 8 : 20, 36)
        }
        var info = TCPSocketInfo(
            family: family, state: m[1], source: Array(m[sourceAt..<(sourceAt + size)]),
            destination: Array(m[destinationAt..<(destinationAt + size)]),
            sourcePort: UInt16(bigEndian: m.loadUnaligned(fromByteOffset: 4, as: UInt16.self)),
            destinationPort: UInt16(bigEndian: m.loadUnaligned(fromByteOffset: 6, as: UInt16.self)),
            boundInterface: m.loadUnaligned(fromByteOffset: 40, as: UInt32.self), retransmits: 0, unacked: 0,
            lastDataReceived: 0, lastAckReceived: 0, bytesReceived: nil, totalRetransmits: 0,
            inode: m.loadUnaligned(fromByteOffset: 68, as: UInt32.self))
        var offset = messageSize
        while offset + 4 <= m.count {
            let length = Int(m.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
            let type = m.loadUnaligned(fromByteOffset: offset + 2, as: UInt16.self)
            guard length >= 4, offset + length <= m.count else { break }
            if type == inetDiagInfo {
                readTCPInfo(UnsafeRawBufferPointer(rebasing: m[(offset + 4)..<(offset + length)]), into: &info)
            }
            offset += (length + 3) & ~3
        }
        return info
    }

    /// The `struct tcp_info` fields by their fixed offsets (the struct only ever grows at its end).
    package static func readTCPInfo(_ t: UnsafeRawBufferPointer, into info: inout TCPSocketInfo) {
        guard t.count >= 104 else { return }
        info.retransmits = t[2]
        info.unacked = t.loadUnaligned(fromByteOffset: 24, as: UInt32.self)
        info.lastDataReceived = t.loadUnaligned(fromByteOffset: 52, as: UInt32.self)
        info.lastAckReceived = t.loadUnaligned(fromByteOffset: 56, as: UInt32.self)
        info.totalRetransmits = t.loadUnaligned(fromByteOffset: 100, as: UInt32.self)
        if t.count >= 136 { info.bytesReceived = t.loadUnaligned(fromByteOffset: 128, as: UInt64.self) }
    }
}
