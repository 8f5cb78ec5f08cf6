import CShim
import Glibc

/// Asks the routers of some links for their Router Advertisements now (an RFC 4861 Router
/// Solicitation to `ff02::2`) and reads their answers on the same raw ICMPv6 sockets, up to a
/// deadline: a one-shot `check` learns a network's RA options (the captive-portal API, PREF64)
/// without waiting for the next periodic RA, and on hosts whose network manager keeps the
/// kernel from processing RAs (`accept_ra=0`: systemd-networkd, NetworkManager, dhcpcd).
///
/// Needs CAP_NET_RAW (raw sockets); without it nothing is sent and the answer is nil. One
/// socket per link, bound to it (`SO_BINDTODEVICE`), filtered to Router Advertisements
/// (`ICMP6_FILTER`); an answer counts only from a link-local source with hop limit 255 (RFC 4861
/// §6.1.2: it cannot have come from off the link). At most one RA per link is kept: the first.
package enum RouterSolicitation {
    /// The advertisements received per interface index (raw ICMPv6 messages, type 134), or nil
    /// when no raw socket could be opened (no CAP_NET_RAW).
    package static func solicit(_ interfaces: [(index: Int32, name: String)], wait: Duration) -> [Int32: [UInt8]]? {
        var sockets: [(fd: Int32, index: Int32)] = []
        defer { for s in sockets { close(s.fd) } }
        for i in interfaces.prefix(16) {
            let fd = Glibc.socket(
                AF_INET6, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), Int32(IPPROTO_ICMPV6))
            guard fd >= 0 else { return sockets.isEmpty ? nil : collect(sockets, wait: wait) }
            guard configure(fd, i.name) else {
                close(fd)
                continue
            }
            sockets.append((fd, i.index))
            send(fd, i.index)
        }
        return sockets.isEmpty ? [:] : collect(sockets, wait: wait)
    }

    /// Binds to the link, passes only RAs, asks for hop limits, sends with hop limit 255.
    private static func configure(_ fd: Int32, _ name: String) -> Bool {
        guard bindToDevice(fd, name) == nil else { return false }
        // ICMP6_FILTER (1): a bit set blocks a type; every type blocked but 134.
        var filter = [UInt32](repeating: .max, count: 8)
        filter[134 >> 5] &= ~(UInt32(1) << (134 & 31))
        let filtered = filter.withUnsafeBytes {
            setsockopt(fd, Int32(IPPROTO_ICMPV6), 1, $0.baseAddress, socklen_t($0.count))
        }
        do throws(Errno) {
            guard filtered == 0 else { return false }
            try setSocketOption(fd, Int32(IPPROTO_IPV6), IPV6_MULTICAST_HOPS, 255)
            try setSocketOption(fd, Int32(IPPROTO_IPV6), IPV6_RECVHOPLIMIT, 1)
            try setNonBlocking(fd)
        } catch {
            return false
        }
        return true
    }

    /// A Router Solicitation (type 133, no options; the kernel fills the checksum) to all routers.
    private static func send(_ fd: Int32, _ index: Int32) {
        var to = sockaddr_in6()
        to.sin6_family = sa_family_t(AF_INET6)
        to.sin6_scope_id = UInt32(bitPattern: index)
        withUnsafeMutableBytes(of: &to.sin6_addr) { a in
            a.copyBytes(from: [0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02] as [UInt8])
        }
        let message: [UInt8] = [133, 0, 0, 0, 0, 0, 0, 0]
        _ = withUnsafePointer(to: &to) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(fd, message, message.count, Int32(MSG_DONTWAIT), $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
            }
        }
    }

    private static func collect(_ sockets: [(fd: Int32, index: Int32)], wait: Duration) -> [Int32: [UInt8]] {
        let deadline = ContinuousClock.now.advanced(by: wait)
        var answers: [Int32: [UInt8]] = [:]
        while answers.count < sockets.count {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { break }
            let ms = Int32(
                min(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1, 5000))
            var fds = sockets.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            guard poll(&fds, nfds_t(fds.count), ms) > 0 else { continue }
            for (n, s) in sockets.enumerated() where fds[n].revents != 0 && answers[s.index] == nil {
                if let packet = receive(s.fd) { answers[s.index] = packet }
            }
        }
        return answers
    }

    /// One RA from a link-local source with hop limit 255, or nil when none is waiting.
    private static func receive(_ fd: Int32) -> [UInt8]? {
        for _ in 0..<32 {
            var buffer = [UInt8](repeating: 0, count: 2048)
            var control = [UInt8](repeating: 0, count: 64)
            var from = sockaddr_in6()
            let n: Int = buffer.withUnsafeMutableBytes { b in
                control.withUnsafeMutableBytes { c in
                    withUnsafeMutablePointer(to: &from) { f in
                        var io = iovec(iov_base: b.baseAddress, iov_len: b.count)
                        return withUnsafeMutablePointer(to: &io) { iop in
                            var header = msghdr()
                            header.msg_name = UnsafeMutableRawPointer(f)
                            header.msg_namelen = socklen_t(MemoryLayout<sockaddr_in6>.size)
                            header.msg_iov = iop
                            header.msg_iovlen = 1
                            header.msg_control = c.baseAddress
                            header.msg_controllen = c.count
                            return recvmsg(fd, &header, Int32(MSG_DONTWAIT))
                        }
                    }
                }
            }
            guard n > 0 else { return nil }
            let source = withUnsafeBytes(of: from.sin6_addr) { Array($0) }
            guard source[0] == 0xfe, source[1] & 0xc0 == 0x80, hopLimit(control) == 255 else { continue }
            return Array(buffer.prefix(n))
        }
        return nil
    }

    /// The `IPV6_HOPLIMIT` control message's value, if one came.
    private static func hopLimit(_ control: [UInt8]) -> Int? {
        // struct cmsghdr { size_t len; int level; int type; } then the data, 8-byte aligned.
        var at = 0
        while at + 16 <= control.count {
            let length = control[at..<(at + 8)].enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
            let level = control[(at + 8)..<(at + 12)].enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
            let type = control[(at + 12)..<(at + 16)].enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
            guard length >= 16, at + length <= control.count else { return nil }
            if level == Int(IPPROTO_IPV6), type == Int(IPV6_HOPLIMIT), length >= 20 {
                return control[(at + 16)..<(at + 20)].enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
            }
            at += (length + 7) & ~7
        }
        return nil
    }
}
