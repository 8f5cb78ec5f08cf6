import CShim
import Glibc

/// The kernel's neighbour table (ARP for IPv4, neighbour discovery for IPv6), read with one
/// `RTM_GETNEIGH` dump on a fresh netlink socket: blocking, bounded by a 1 s receive timeout
/// and a message count. Run it off the cooperative pool (`BlockingPool`).
package enum NeighbourTable {
    package static let getNeighbour = UInt16(RTM_GETNEIGH)
    package static let newNeighbour = UInt16(RTM_NEWNEIGH)
    package static let ndmsgSize = 12
    package static let ndaDestination: UInt16 = 1  // NDA_DST

    /// The state of `address`'s entry on the interface `interfaceIndex` (any interface when nil);
    /// `.absent` when there is none, nil when the table cannot be read.
    package static func state(of address: String, interfaceIndex: Int?) -> NeighbourState? {
        guard let target = SocketAddress(ip: address) else { return nil }
        let wanted = target.addressBytes
        let family = target.ipFamily == .ipv4 ? RTNL.familyInet : RTNL.familyInet6
        let fd = socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), NETLINK_ROUTE)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var request = [UInt8](repeating: 0, count: RTNL.headerSize + ndmsgSize)
        request.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: UInt32(raw.count), toByteOffset: 0, as: UInt32.self)
            raw.storeBytes(of: getNeighbour, toByteOffset: 4, as: UInt16.self)
            raw.storeBytes(of: RTNL.flagRequest | RTNL.flagDump, toByteOffset: 6, as: UInt16.self)
            raw.storeBytes(of: UInt32(1), toByteOffset: 8, as: UInt32.self)
            raw[RTNL.headerSize] = family
        }
        var kernel = sockaddr_nl()
        kernel.nl_family = sa_family_t(AF_NETLINK)
        let sent = request.withUnsafeBytes { bytes in
            withUnsafePointer(to: &kernel) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_nl>.size))
                }
            }
        }
        guard sent == request.count else { return nil }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var found: NeighbourState? = .absent
        for _ in 0..<256 {  // a dump of any table ends long before
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return nil }
            var done = false
            buffer.withUnsafeBytes { raw in
                let view = ByteView(UnsafeRawBufferPointer(rebasing: raw[0..<n]))
                var offset = 0
                while let header = view.header(at: offset), Int(header.length) >= RTNL.headerSize,
                    offset + Int(header.length) <= n
                {
                    defer { offset += RTNL.align(Int(header.length)) }
                    if header.type == RTNL.messageError {
                        found = nil  // the kernel refused the dump: unknown, not absent
                        done = true
                        return
                    }
                    if header.type == RTNL.messageDone {
                        done = true
                        return
                    }
                    guard header.type == newNeighbour else { continue }
                    let body = view.slice(offset + RTNL.headerSize, offset + Int(header.length))
                    guard let index = body.i32(4), let bits = body.u16(8) else { continue }
                    if let interfaceIndex, Int(index) != interfaceIndex { continue }
                    var destination: [UInt8]?
                    body.forEachAttribute(from: ndmsgSize) { type, value in
                        if type == ndaDestination { destination = value.ipBytes() }
                    }
                    if let destination, destination == wanted { found = Self.state(bits) }
                }
            }
            if done { return found }
        }
        return found
    }

    /// `NUD_*` bits to a state; the most telling bit wins.
    package static func state(_ bits: UInt16) -> NeighbourState {
        let order: [(UInt16, NeighbourState)] = [
            (0x80, .permanent), (0x40, .noarp), (0x02, .reachable), (0x20, .failed), (0x01, .incomplete),
            (0x10, .probe), (0x08, .delay), (0x04, .stale),
        ]
        return order.first { bits & $0.0 != 0 }?.1 ?? .absent
    }
}

package enum InterfaceIndex {
    package static func of(_ name: String) -> Int? {
        let index = if_nametoindex(name)
        return index == 0 ? nil : Int(index)
    }
}
