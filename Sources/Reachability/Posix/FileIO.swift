import Glibc

/// Thin wrappers over the file system calls the history needs: errno captured at once, `EINTR`
/// retried, descriptors close-on-exec. Nothing here buffers; one `write` is one record.
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

    /// Names in a directory (no `.`/`..`), unsorted.
    package static func list(_ directory: String) throws(Errno) -> [String] {
        guard let dir = opendir(directory) else { throw Errno.current }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// A file's size and modification time (Unix seconds), or nil if it cannot be read.
    package static func status(_ path: String) -> (size: Int, modified: Double)? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return (Int(st.st_size), Double(st.st_mtim.tv_sec) + Double(st.st_mtim.tv_nsec) / 1e9)
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

    /// Opens for appending (and reading back, for the torn-tail repair); `create` makes a new
    /// file and fails if it exists.
    package static func openAppend(_ path: String, create: Bool) throws(Errno) -> Int32 {
        let flags = O_RDWR | O_APPEND | O_CLOEXEC | (create ? O_CREAT | O_EXCL : 0)
        return try retryingOnInterrupt { open(path, flags, 0o644) }
    }

    /// Opens a regular file for reading, without blocking on a FIFO or a device (`EINVAL` for
    /// anything but a regular file). Reads from it block as usual.
    package static func openRead(_ path: String) throws(Errno) -> Int32 {
        let fd = try retryingOnInterrupt { open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }
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

    /// Makes a directory's entries (new or removed files) durable.
    package static func syncDirectory(_ path: String) throws(Errno) {
        let fd = try retryingOnInterrupt { open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        defer { Glibc.close(fd) }
        try retryingOnInterrupt { fsync(fd) }
    }

    /// Replaces the file at `path` with `bytes` as a whole: written to `path.tmp`, synced, then
    /// renamed over it, so a crash leaves the old file or the new one, never a torn one.
    package static func replace(_ path: String, with bytes: [UInt8]) throws(Errno) {
        let temporary = path + ".tmp"
        // No symlink followed: a link planted at the temporary name truncates nothing.
        let fd = try retryingOnInterrupt {
            open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)
        }
        do throws(Errno) {
            var written = 0
            while written < bytes.count {
                let n = try writeOnce(fd, Array(bytes[written...]))
                if n <= 0 { throw Errno(EIO) }
                written += n
            }
            try syncData(fd)
        } catch {
            Glibc.close(fd)
            _ = unlink(temporary)
            throw error
        }
        Glibc.close(fd)
        guard rename(temporary, path) == 0 else {
            let error = Errno.current
            _ = unlink(temporary)
            throw error
        }
        // The rename itself made durable.
        let slash = path.lastIndex(of: "/")
        try? syncDirectory(slash.map { String(path[..<$0]) }.flatMap { $0.isEmpty ? "/" : $0 } ?? ".")
    }

    /// A small regular file's bytes (at most `limit`), nil when it does not exist.
    package static func readSmall(_ path: String, limit: Int) throws(Errno) -> [UInt8]? {
        do throws(Errno) {
            return try FileContents.read(path, limit: limit)
        } catch {
            if error.code == ENOENT { return nil }
            throw error
        }
    }

    package static func remove(_ path: String) throws(Errno) {
        guard unlink(path) == 0 else { throw Errno.current }
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
