import CShim
import Glibc

/// An IPv4 or IPv6 socket address (a `sockaddr_storage` held by value, so it is `Sendable`).
package struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    private var storage: sockaddr_storage
    package let length: socklen_t

    /// Copies an address the kernel or `getaddrinfo` handed out.
    package init(_ pointer: UnsafePointer<sockaddr>, length: socklen_t) {
        var s = sockaddr_storage()
        withUnsafeMutableBytes(of: &s) { dst in
            dst.copyMemory(from: UnsafeRawBufferPointer(start: pointer, count: min(Int(length), dst.count)))
        }
        storage = s
        self.length = length
    }

    /// Parses a numeric address (`127.0.0.1`, `::1`, optionally bracketed); nil if not numeric.
    package init?(ip: String, port: UInt16 = 0) {
        var text = ip
        if text.hasPrefix("["), text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        var raw = [UInt8](repeating: 0, count: 16)
        if inet_pton(AF_INET, text, &raw) == 1 {
            self.init(bytes: Array(raw.prefix(4)), port: port)
        } else if inet_pton(AF_INET6, text, &raw) == 1 {
            self.init(bytes: raw, port: port)
        } else {
            return nil
        }
    }

    /// An address from its raw bytes: 4 for IPv4, 16 for IPv6; nil for another count.
    package init?(bytes: [UInt8], port: UInt16 = 0) {
        switch bytes.count {
        case 4:
            var v4 = sockaddr_in()
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            withUnsafeMutableBytes(of: &v4.sin_addr) { $0.copyBytes(from: bytes) }
            self = withUnsafePointer(to: &v4) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    SocketAddress($0, length: socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        case 16:
            var v6 = sockaddr_in6()
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            withUnsafeMutableBytes(of: &v6.sin6_addr) { $0.copyBytes(from: bytes) }
            self = withUnsafePointer(to: &v6) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    SocketAddress($0, length: socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        default:
            return nil
        }
    }

    package var family: Int32 { Int32(storage.ss_family) }
    package var ipFamily: IPFamily { family == AF_INET6 ? .ipv6 : .ipv4 }

    package var port: UInt16 {
        get {
            withUnsafeBytes(of: storage) { raw in
                // sin_port and sin6_port sit at the same offset (2).
                UInt16(bigEndian: raw.loadUnaligned(fromByteOffset: 2, as: UInt16.self))
            }
        }
        set {
            withUnsafeMutableBytes(of: &storage) { raw in
                raw.storeBytes(of: newValue.bigEndian, toByteOffset: 2, as: UInt16.self)
            }
        }
    }

    /// The address alone, without the port: `127.0.0.1`, `::1`.
    package var ip: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        var copy = storage
        let ok: Bool = withUnsafePointer(to: &copy) { p in
            p.withMemoryRebound(to: UInt8.self, capacity: MemoryLayout<sockaddr_storage>.size) { bytes in
                let offset = family == AF_INET6 ? 8 : 4  // sin6_addr / sin_addr
                return inet_ntop(family, bytes + offset, &buffer, socklen_t(buffer.count)) != nil
            }
        }
        guard ok else { return "?" }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// The raw address bytes (4 for IPv4, 16 for IPv6).
    package var addressBytes: [UInt8] {
        withUnsafeBytes(of: storage) { raw in
            family == AF_INET6 ? Array(raw[8..<24]) : Array(raw[4..<8])
        }
    }

    package var description: String { family == AF_INET6 ? "[\(ip)]:\(port)" : "\(ip):\(port)" }

    package func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws -> R) rethrows -> R {
        var copy = storage
        return try withUnsafePointer(to: &copy) { p in
            try p.withMemoryRebound(to: sockaddr.self, capacity: 1) { try body($0, length) }
        }
    }

    package static func == (a: SocketAddress, b: SocketAddress) -> Bool {
        a.length == b.length
            && withUnsafeBytes(of: a.storage) { ra in
                withUnsafeBytes(of: b.storage) { rb in ra.prefix(Int(a.length)).elementsEqual(rb.prefix(Int(b.length)))
                }
            }
    }

    package func hash(into hasher: inout Hasher) {
        withUnsafeBytes(of: storage) { hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: $0.prefix(Int(length)))) }
    }
}
