import Glibc

/// Thin wrappers over the file system calls the history needs: errno captured at once, `EINTR`
/// retried, descriptors close-on-exec. Nothing here buffers; one `write` is one record. Files
/// are opened for writing only through `DirectoryHandle` (relative to their directory, never
/// through a link).
package enum FileIO {
    /// Creates the directory and its parents (mode 0755); an existing directory is fine.
    package static func makeDirectories(_ path: String) throws(Errno) {
        var current = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            current += "/" + part
            if mkdir(current, 0o755) != 0 {
                let e = errno
                guard e == EEXIST else { throw Errno(e) }
            }
        }
        var st = stat()
        guard stat(path, &st) == 0 else { throw Errno.current }
        guard st.st_mode & S_IFMT == S_IFDIR else { throw Errno(ENOTDIR) }
    }

    /// Sets a file's modification time (tests of retention on start).
    package static func setModified(_ path: String, to time: Double) throws(Errno) {
        var times = [
            timespec(tv_sec: Int(time.rounded(.down)), tv_nsec: 0),
            timespec(tv_sec: Int(time.rounded(.down)), tv_nsec: 0),
        ]
        guard utimensat(AT_FDCWD, path, &times, 0) == 0 else { throw Errno.current }
    }

    /// How many directory entries name the open file (0 once it is deleted).
    package static func linkCount(fd: Int32) throws(Errno) -> Int {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw Errno.current }
        return Int(st.st_nlink)
    }

    package static func size(fd: Int32) throws(Errno) -> Int {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw Errno.current }
        return Int(st.st_size)
    }

    /// Opens a regular file for reading, without blocking on a FIFO or a device (`EINVAL` for
    /// anything but a regular file) and without following a link at the name (`ELOOP`). Reads
    /// from it block as usual.
    package static func openRead(_ path: String) throws(Errno) -> Int32 {
        let fd = try retryingOnInterrupt { open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else {
            let error = st.st_mode & S_IFMT == S_IFREG ? Errno.current : Errno(EINVAL)
            Glibc.close(fd)
            throw error
        }
        return fd
    }

    /// One `write` call (retried only on `EINTR`); returns the bytes written, which may be short.
    package static func writeOnce(_ fd: Int32, _ bytes: [UInt8]) throws(Errno) -> Int {
        try retryingOnInterrupt { bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } }
    }

    /// Reads up to `count` bytes into `buffer` at `offset`; 0 at end of file.
    package static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        try retryingOnInterrupt { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    package static func pread(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(Errno)
        -> Int
    {
        try retryingOnInterrupt { Glibc.pread(fd, buffer.baseAddress, buffer.count, off_t(offset)) }
    }

    package static func truncate(_ fd: Int32, to size: Int) throws(Errno) {
        try retryingOnInterrupt { ftruncate(fd, off_t(size)) }
    }

    /// `fdatasync`: the data (and the size) reach the disk.
    package static func syncData(_ fd: Int32) throws(Errno) {
        try retryingOnInterrupt { fdatasync(fd) }
    }

    /// The first newline in `count` bytes at `p` (libc `memchr`, vectorised).
    @inline(__always) package static func findNewline(_ p: UnsafePointer<UInt8>, count: Int) -> UnsafePointer<UInt8>? {
        memchr(p, 0x0A, count).map { UnsafePointer($0.assumingMemoryBound(to: UInt8.self)) }
    }

    /// Online processors (at least 1).
    package static func processorCount() -> Int { max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))) }

    /// This process's id (for the `start` record).
    package static func processID() -> Int32 { getpid() }

    package static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }
}
