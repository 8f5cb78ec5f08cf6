import CShim
import Glibc

/// The sd_notify protocol (systemd's `Type=notify`): one datagram per state change to the
/// unix socket named by `NOTIFY_SOCKET` (a path, or `@name` in the abstract namespace). Without
/// the variable every call does nothing, so the exporter runs the same outside systemd.
package enum SystemdNotify {
    /// Sends `state` (`READY=1`, `STOPPING=1`, `RELOADING=1`, `STATUS=…`); false when there is
    /// no socket to tell or the send failed (systemd then times the start out, as it should).
    @discardableResult
    package static func send(_ state: String, environment: [String: String]) -> Bool {
        guard let path = environment["NOTIFY_SOCKET"], path.utf8.count > 1, path.utf8.count < 108,
            path.hasPrefix("/") || path.hasPrefix("@")
        else { return false }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        if bytes[0] == UInt8(ascii: "@") { bytes[0] = 0 }  // the abstract namespace
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        let message = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                message.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), sa, length) }
            }
        }
        return sent == message.count
    }
}
