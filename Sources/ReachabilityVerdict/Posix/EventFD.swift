import CShim
import Glibc

/// A non-blocking, close-on-exec `eventfd`: the wake-up descriptor of a thread that polls.
package enum EventFD {
    /// A new descriptor, or the errno of the failure.
    package static func make() throws(Errno) -> Int32 {
        let fd = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard fd >= 0 else { throw Errno.current }
        return fd
    }

    /// Wakes whoever polls `fd`.
    package static func signal(_ fd: Int32) {
        var one: UInt64 = 1
        _ = write(fd, &one, 8)
    }

    package static func close(_ fd: Int32) { _ = Glibc.close(fd) }
}
