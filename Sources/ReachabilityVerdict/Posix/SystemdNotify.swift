import CShim
import Glibc

/// The sd_notify protocol (systemd's `Type=notify`): one datagram per state change to the
/// unix socket named by `NOTIFY_SOCKET` (a path, or `@name` in the abstract namespace). Without
/// the variable every call does nothing, so the exporter runs the same outside systemd.
///
/// Never blocks: a socket that nobody reads (its queue full) costs at most `patience`, then the
/// message is dropped and the call returns false. The exporter sends `STOPPING=1` at SIGTERM, so
/// a stuck listener must not be able to hold shutdown (#41).
package enum SystemdNotify {
    /// How long a send may wait for room in the receiver's queue before it gives up.
    package static let defaultPatience: Duration = .milliseconds(100)

    /// Sends `state` (`READY=1`, `STOPPING=1`, `RELOADING=1`, `STATUS=…`); false when there is
    /// no socket to tell or the send failed or found no room within `patience` (systemd then
    /// times the start out, as it should).
    @discardableResult
    package static func send(
        _ state: String, environment: [String: String], patience: Duration = defaultPatience
    ) -> Bool {
        guard let path = environment["NOTIFY_SOCKET"], path.utf8.count > 1, path.utf8.count < 108,
            path.hasPrefix("/") || path.hasPrefix("@")
        else { return false }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue), 0)
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
        // Connected, so that poll's POLLOUT reports room in the receiver's queue (Linux's
        // unix_dgram_poll looks at the peer of a connected datagram socket).
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) }
        }
        guard connected == 0 else { return false }
        let message = Array(state.utf8)
        let deadline = ContinuousClock.now + patience
        while true {
            let sent = message.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if sent >= 0 { return sent == message.count }
            guard errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else { return false }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return false }
            let ms = Int32(
                clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
            var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            _ = poll(&pfd, 1, ms)
        }
    }
}
