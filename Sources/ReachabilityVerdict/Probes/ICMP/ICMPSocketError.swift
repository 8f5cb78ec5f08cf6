import CShim
import Glibc

/// How ICMP echo sockets are opened.
package enum ICMPSocketMode: String, Sendable, CaseIterable, Codable {
    /// Datagram ("ping") sockets when `net.ipv4.ping_group_range` admits our group, else raw.
    case auto
    /// Only `SOCK_DGRAM` + `IPPROTO_ICMP[V6]`: unprivileged, the kernel owns identifier and checksum.
    case datagram
    /// Only `SOCK_RAW`: needs root or CAP_NET_RAW; sees every ICMP message of the family.
    case raw
}

/// The kind of socket actually in use (what `auto` resolved to).
package enum ICMPSocketKind: String, Sendable, Equatable {
    case datagram, raw
}

/// Why no ICMP socket could be opened. The description says how to fix it, for a person.
/// Probers turn it into a failed round (`permission`, `unreachable` or `error`); it never ends the process.
package struct ICMPSocketError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Broad cause, for choosing a failure reason.
    package enum Kind: String, Sendable, Equatable {
        /// Neither ping sockets nor raw sockets are allowed for this process.
        case noPermission
        /// The kernel does not support this family or socket type (IPv6 disabled, no ping sockets).
        case unsupported
        /// The interface to bind to does not exist (or the name is not valid).
        case badInterface
        /// Anything else (descriptor limits, memory).
        case system
    }

    package let kind: Kind
    package let family: IPFamily
    package let mode: ICMPSocketMode
    /// The errno of the call that failed, if one did.
    package let code: Int32?
    package let description: String

    package init(kind: Kind, family: IPFamily, mode: ICMPSocketMode, code: Int32?, description: String) {
        self.kind = kind
        self.family = family
        self.mode = mode
        self.code = code
        self.description = description
    }

    /// The failure reason a probe reports for this error.
    package var reason: FailureReason {
        switch kind {
        case .noPermission: .permission
        case .badInterface: .unreachable
        case .unsupported, .system: .error
        }
    }

    /// Classifies a failed `socket()` call.
    package static func opening(_ kind: ICMPSocketKind, family: IPFamily, mode: ICMPSocketMode, errno code: Int32)
        -> ICMPSocketError
    {
        let what = "\(kind == .raw ? "raw" : "datagram (ping)") ICMP socket for \(family.rawValue)"
        if code == EACCES || code == EPERM {
            return ICMPSocketError(
                kind: .noPermission, family: family, mode: mode, code: code,
                description: "cannot open a \(what): \(Errno(code)). \(fixHint(for: mode))")
        }
        if code == EAFNOSUPPORT || code == EPROTONOSUPPORT || code == ESOCKTNOSUPPORT {
            return ICMPSocketError(
                kind: .unsupported, family: family, mode: mode, code: code,
                description: "cannot open a \(what): \(Errno(code)) (is \(family.rawValue) enabled in this kernel?)")
        }
        return ICMPSocketError(
            kind: .system, family: family, mode: mode, code: code, description: "cannot open a \(what): \(Errno(code))")
    }

    /// What a person can do to allow ICMP, phrased for the mode that was asked for.
    package static func fixHint(for mode: ICMPSocketMode) -> String {
        let datagram =
            "allow ping sockets for the daemon's group: sysctl -w net.ipv4.ping_group_range=\"0 2147483647\" (persist it in /etc/sysctl.d/)"
        let raw =
            "or grant raw sockets: setcap cap_net_raw+ep <binary>, or AmbientCapabilities=CAP_NET_RAW in the systemd unit"
        switch mode {
        case .auto: return "To fix: \(datagram); \(raw)."
        case .datagram: return "To fix: \(datagram) (this sysctl also covers IPv6)."
        case .raw:
            return
                "To fix: run as root, setcap cap_net_raw+ep <binary>, or AmbientCapabilities=CAP_NET_RAW in the systemd unit."
        }
    }
}
