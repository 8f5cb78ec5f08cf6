import Glibc

/// An `errno` value captured right after a failed system call, with its text.
package struct Errno: Error, Sendable, Equatable, CustomStringConvertible {
    package let code: Int32
    package init(_ code: Int32) { self.code = code }

    /// The current thread's `errno`; read it before any other call can change it.
    package static var current: Errno { Errno(errno) }

    package var description: String {
        guard let text = strerror(code) else { return "errno \(code)" }
        return "\(String(cString: text)) (errno \(code))"
    }
}

/// Retries a system call while it fails with `EINTR`; returns its result or throws the errno.
@discardableResult
package func retryingOnInterrupt<T: BinaryInteger>(_ call: () -> T) throws(Errno) -> T {
    while true {
        let result = call()
        if result >= 0 { return result }
        let err = errno
        if err != EINTR { throw Errno(err) }
    }
}

/// Sets `O_NONBLOCK` on a descriptor.
package func setNonBlocking(_ fd: Int32) throws(Errno) {
    let flags = fcntl(fd, F_GETFL)
    if flags < 0 { throw Errno.current }
    if fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0 { throw Errno.current }
}

/// Sets an integer socket option.
package func setSocketOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32) throws(Errno) {
    var v = value
    if setsockopt(fd, level, name, &v, socklen_t(MemoryLayout<Int32>.size)) != 0 { throw Errno.current }
}
