import CShim
import Glibc

/// Name resolution through the system resolver (`getaddrinfo`, so /etc/hosts and nsswitch apply),
/// run on `BlockingPool.resolver` with a hard deadline. Numeric addresses skip the pool.
package enum Resolver {
    package struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// True when the deadline passed before the resolver answered.
        package let timedOut: Bool
        package let message: String
        /// The resolver answered that the name has no address of the family (NXDOMAIN, no
        /// data): a definite answer, unlike a timeout or a temporary failure.
        package var notFound = false
        package var description: String { message }
    }

    /// Resolves `host` to stream/datagram addresses of the wanted family, in resolver order.
    package static func resolve(
        _ host: String, port: UInt16 = 0, family: FamilyPreference = .any,
        deadline: ContinuousClock.Instant
    ) async throws(Failure) -> [SocketAddress] {
        if let numeric = SocketAddress(ip: host, port: port) {
            if family.admits(numeric.ipFamily) { return [numeric] }
            throw Failure(timedOut: false, message: "\(host) is not an \(family.rawValue) address")
        }
        guard isPlausibleHostName(host) else {
            throw Failure(timedOut: false, message: "invalid host name \(host.debugDescription)")
        }
        let outcome = await BlockingPool.resolver.run(deadline: deadline) { lookup(host, port: port, family: family) }
        switch outcome {
        case nil: throw Failure(timedOut: true, message: "resolving \(host) timed out")
        case .failure(let f)?: throw f
        case .success(let addresses)?: return addresses
        }
    }

    package static func isPlausibleHostName(_ host: String) -> Bool {
        !host.isEmpty && host.utf8.count <= 253
            && host.utf8.allSatisfy { b in
                (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b == 0x2d
                    || b == 0x2e || b == 0x5f
            }
    }

    private static func lookup(_ host: String, port: UInt16, family: FamilyPreference) -> Result<
        [SocketAddress], Failure
    > {
        var hints = addrinfo()
        hints.ai_family = family.addressFamily
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, nil, &hints, &list)
        if rc != 0 {
            let text = gai_strerror(rc).map { String(cString: $0) } ?? "error \(rc)"
            // EAI_NODATA (-5) and EAI_ADDRFAMILY (-9) are glibc's; Glibc does not import them.
            return .failure(
                Failure(
                    timedOut: false, message: "resolving \(host): \(text)",
                    notFound: rc == EAI_NONAME || rc == -5 || rc == -9))
        }
        defer { freeaddrinfo(list) }
        var out: [SocketAddress] = []
        var node = list
        while let n = node {
            if let a = n.pointee.ai_addr {
                var address = SocketAddress(a, length: n.pointee.ai_addrlen)
                address.port = port
                if !out.contains(address) { out.append(address) }
            }
            node = n.pointee.ai_next
        }
        if out.isEmpty {
            return .failure(Failure(timedOut: false, message: "resolving \(host): no addresses", notFound: true))
        }
        return .success(out)
    }
}
