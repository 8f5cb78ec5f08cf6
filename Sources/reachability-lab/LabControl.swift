import CShim
import Glibc
import ReachabilityExporter
import ReachabilityVerdict

/// The lab's control channel: a unix stream socket at a path; each connection sends command
/// lines and gets one reply line per command (see `LabServices.apply`). `quit` ends the lab.
/// One connection at a time, served on the accept thread (the driver is the only client).
enum LabControl {
    /// Binds `path` (replacing a stale socket file) and serves commands until `quit`; returns then.
    static func serve(path: String, services: LabServices) throws(Errno) {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        if fd < 0 { throw Errno.current }
        defer {
            Glibc.close(fd)
            unlink(path)
        }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw Errno(ENAMETOOLONG) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        unlink(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if bound != 0 || listen(fd, 4) != 0 { throw Errno.current }
        while true {
            let client = cshim_accept4(fd, nil, nil, Int32(SOCK_CLOEXEC.rawValue))
            if client < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                throw Errno.current
            }
            let quit = session(client, services: services)
            Glibc.close(client)
            if quit { return }
        }
    }

    /// Serves one connection's lines; true when it asked to quit.
    private static func session(_ fd: Int32, services: LabServices) -> Bool {
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        // Bounded: a line is at most 4 KiB, and the peer's silence ends the session after 30 s.
        while pending.count < 4096 {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return false }
            pending += buffer[0..<n]
            while let newline = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[..<newline].filter { $0 != 0x0D }, as: UTF8.self)
                pending.removeSubrange(...newline)
                if line == "quit" {
                    reply(fd, "ok bye")
                    return true
                }
                if !line.isEmpty { reply(fd, services.apply(line)) }
            }
        }
        return false
    }

    private static func reply(_ fd: Int32, _ text: String) {
        let bytes = Array((text + "\n").utf8)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }
}
