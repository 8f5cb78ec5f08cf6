import CShim
import Glibc

/// A blocking TCP client for tests that need to misbehave on purpose: send raw bytes, stop
/// half way, half-close, vanish. Every read has a timeout so no test can hang.
package final class RawTCPClient {
    package let fd: Int32

    package init(port: UInt16, host: String = "127.0.0.1", timeoutMS: Int = 5000) throws {
        let v6 = host.contains(":")
        fd = socket(v6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: errno \(errno)") }
        var tv = timeval(tv_sec: timeoutMS / 1000, tv_usec: (timeoutMS % 1000) * 1000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        let rc: Int32
        if v6 {
            var a = sockaddr_in6()
            a.sin6_family = sa_family_t(AF_INET6)
            a.sin6_port = port.bigEndian
            inet_pton(AF_INET6, host, &a.sin6_addr)
            rc = withUnsafePointer(to: &a) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        } else {
            var a = sockaddr_in()
            a.sin_family = sa_family_t(AF_INET)
            a.sin_port = port.bigEndian
            inet_pton(AF_INET, host, &a.sin_addr)
            rc = withUnsafePointer(to: &a) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard rc == 0 else {
            let e = errno
            Glibc.close(fd)
            throw TestFailure("connect to \(host):\(port): errno \(e)")
        }
    }

    deinit { Glibc.close(fd) }

    package func send(_ text: String) { send(Array(text.utf8)) }

    package func send(_ bytes: [UInt8]) {
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + off, $0.count - off, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            off += n
        }
    }

    /// Stops sending (TCP FIN) but keeps reading.
    package func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }

    /// Reads until the peer closes, the timeout passes, or `until` is satisfied.
    package func read(until done: (String) -> Bool = { _ in false }) -> (text: String, closed: Bool) {
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &buf, buf.count, 0)
            if n == 0 { return (String(decoding: out, as: UTF8.self), true) }
            if n < 0 {
                if errno == EINTR { continue }
                return (String(decoding: out, as: UTF8.self), errno == ECONNRESET)
            }
            out.append(contentsOf: buf[0..<n])
            let text = String(decoding: out, as: UTF8.self)
            if done(text) { return (text, false) }
        }
    }

    /// Reads one response whose body length is given by Content-Length.
    package func readResponse() -> String {
        read { text in
            guard let headEnd = text.range(ofBytes: "\r\n\r\n") else { return false }
            let head = text[..<headEnd.lowerBound].lowercased()
            guard let clLine = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
                let length = Int(String(clLine.dropFirst("content-length:".count)).trimmedSpaces)
            else { return true }
            if head.hasPrefix("http/1.1 200") && text.hasPrefix("HEAD") { return true }
            return text.utf8.count - text[..<headEnd.upperBound].utf8.count >= length
        }.text
    }
}

package struct TestFailure: Error, CustomStringConvertible {
    package let description: String
    package init(_ d: String) { description = d }
}

extension String {
    /// Byte-wise search (String's own `range(of:)` needs Foundation and treats CR LF as one Character).
    package func range(ofBytes needle: String) -> Range<String.Index>? {
        let hay = Array(utf8)
        let n = Array(needle.utf8)
        guard n.count <= hay.count else { return nil }
        for i in 0...(hay.count - n.count) where hay[i..<(i + n.count)].elementsEqual(n) {
            let lower = utf8.index(startIndex, offsetBy: i)
            return lower..<utf8.index(lower, offsetBy: n.count)
        }
        return nil
    }

    var trimmedSpaces: String { String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed()) }

    /// Counts non-overlapping byte-wise occurrences.
    package func occurrences(ofBytes needle: String) -> Int {
        let hay = Array(utf8)
        let n = Array(needle.utf8)
        guard !n.isEmpty, n.count <= hay.count else { return 0 }
        var i = 0
        var count = 0
        while i <= hay.count - n.count {
            if hay[i..<(i + n.count)].elementsEqual(n) {
                count += 1
                i += n.count
            } else {
                i += 1
            }
        }
        return count
    }
}
