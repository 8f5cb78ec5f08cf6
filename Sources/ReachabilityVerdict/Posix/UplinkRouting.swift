import Glibc
import Synchronization

/// Policy routing for the probes bound to an uplink: a firewall mark (`SO_MARK`, so an
/// `ip rule fwmark M lookup T` sends them through the uplink's own table) and/or a source address
/// per family (for `ip rule from S lookup T`). Applied wherever a socket is bound to the
/// interface (`bindToDevice`, the ICMP sockets). The configuration's table reaches those sockets
/// through the task that opens them (`UplinkRouting.$table`, which the monitor sets from its
/// settings for each round), so a reload's table applies from the next round on.
package struct UplinkRouting: Sendable, Equatable, Hashable {
    package var mark: UInt32?
    /// At most one per family (numeric text).
    package var sources: [String]

    package init(mark: UInt32? = nil, sources: [String] = []) {
        self.mark = mark
        self.sources = sources
    }

    /// Every uplink's routing, for the sockets the current task opens (empty: none configured).
    @TaskLocal package static var table: [String: UplinkRouting] = [:]

    /// The routing of the probes bound to `interface`, nil when none is configured.
    package static func of(_ interface: String) -> UplinkRouting? { table[interface] }

    /// The source address of `family`, if one is configured.
    package func source(for family: IPFamily) -> SocketAddress? {
        sources.lazy.compactMap { SocketAddress(ip: $0) }.first { $0.ipFamily == family }
    }

    /// Sets the mark and binds the source of `family` on `fd`; nil on success, else what failed.
    package func apply(to fd: Int32, family: IPFamily) -> (step: String, errno: Errno)? {
        if let mark {
            var value = mark
            if setsockopt(fd, SOL_SOCKET, SO_MARK, &value, 4) != 0 {
                return ("SO_MARK \(mark) (needs CAP_NET_ADMIN, or CAP_NET_RAW from Linux 5.17)", .current)
            }
        }
        if let source = source(for: family) {
            if source.withSockAddr({ Glibc.bind(fd, $0, $1) }) != 0 { return ("binding to \(source.ip)", .current) }
        }
        return nil
    }
}
