import Glibc

/// Writes to stdout with one `write` (Swift 6 cannot touch the `stdout` global).
package func writeOut(_ s: String) { writeAll(1, s) }
/// Writes to stderr with one `write`.
package func writeErr(_ s: String) { writeAll(2, s) }

/// Writes all of `s` to `fd`, retrying on `EINTR`; gives up silently on any other error (a
/// closed pipe must not stop the exporter).
package func writeAll(_ fd: Int32, _ s: String) {
    var bytes = Array(s.utf8)[...]
    while !bytes.isEmpty {
        let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        if n <= 0 {
            if n < 0 && errno == EINTR { continue }
            return
        }
        bytes = bytes.dropFirst(n)
    }
}

/// The process environment as a dictionary.
package func processEnvironment() -> [String: String] {
    var out: [String: String] = [:]
    var p = environ
    while let entry = p.pointee {
        let s = String(cString: entry)
        if let eq = s.firstIndex(of: "=") { out[String(s[..<eq])] = String(s[s.index(after: eq)...]) }
        p += 1
    }
    return out
}
