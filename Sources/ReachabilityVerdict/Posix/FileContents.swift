import Glibc

/// Reading a whole (small) regular file, for configuration files.
package enum FileContents {
    /// What a failed `read` found, for a person: the errno's text, or what was wrong with the file.
    package static func describe(_ error: Errno, limit: Int) -> String {
        switch error.code {
        case EFBIG: "a file over \(limit) bytes"
        case EISDIR: "a directory"
        case EINVAL: "not a regular file (a FIFO, socket or device)"
        default: error.description
        }
    }

    /// The file's bytes. Throws the errno of a failed call, or `EFBIG` past `limit` bytes, or
    /// `EISDIR`/`EINVAL` for something that is not a regular file. Opened without blocking, so
    /// a FIFO (or a device) at the path is refused at once instead of waiting for a writer.
    package static func read(_ path: String, limit: Int) throws(Errno) -> [UInt8] {
        let fd = try retryingOnInterrupt { open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }
        defer { Glibc.close(fd) }
        var st = stat()
        if fstat(fd, &st) != 0 { throw Errno.current }
        switch st.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw Errno(EISDIR)
        default: throw Errno(EINVAL)
        }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = try retryingOnInterrupt {
                chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            }
            if n == 0 { return out }
            out += chunk[0..<n]
            if out.count > limit { throw Errno(EFBIG) }
        }
    }
}

extension FileContents {
    /// A file another program writes for this one to believe (a DHCP client's hook): its bytes,
    /// only when neither it nor its directory could have been written by someone else — a
    /// regular file reached without following a symbolic link, owned (with its directory) by
    /// root or this process's user, writable by neither group nor others. Throws `EPERM` for
    /// one that fails that (`ENOENT` when there is no such file, trusted or not), else as
    /// `read`; past `limit` bytes, the first `limit` (the caller reads the first line).
    package static func readTrusted(_ directory: String, _ name: String, limit: Int) throws(Errno) -> [UInt8] {
        var dir = stat()
        guard lstat(directory, &dir) == 0 else { throw Errno.current }
        let path = directory + "/" + name
        var entry = stat()
        guard lstat(path, &entry) == 0 else { throw Errno.current }
        guard dir.st_mode & S_IFMT == S_IFDIR, ownedSafely(dir) else { throw Errno(EPERM) }
        let fd = try retryingOnInterrupt { open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW) }
        defer { Glibc.close(fd) }
        var st = stat()
        if fstat(fd, &st) != 0 { throw Errno.current }
        guard st.st_mode & S_IFMT == S_IFREG else { throw Errno(EINVAL) }
        guard ownedSafely(st) else { throw Errno(EPERM) }
        var out = [UInt8](repeating: 0, count: limit)
        let n = try retryingOnInterrupt { out.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) } }
        return Array(out.prefix(n))
    }

    /// The file (or a directory on its way) does not exist.
    package static func isAbsent(_ error: Errno) -> Bool { error.code == ENOENT || error.code == ENOTDIR }

    private static func ownedSafely(_ st: stat) -> Bool {
        (st.st_uid == 0 || st.st_uid == geteuid()) && st.st_mode & 0o022 == 0
    }
}

/// What identifies one version of a file: device, inode, size and modification time. A changed
/// stamp means the file was replaced or written.
package struct FileStamp: Sendable, Equatable {
    package let device: UInt64
    package let inode: UInt64
    package let size: Int64
    package let modified: Int64
    package let modifiedNanos: Int64

    /// The stamp of `path` now; nil when it cannot be read (itself a change worth a reload).
    package static func of(_ path: String) -> FileStamp? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return FileStamp(
            device: UInt64(st.st_dev), inode: UInt64(st.st_ino), size: Int64(st.st_size),
            modified: Int64(st.st_mtim.tv_sec), modifiedNanos: Int64(st.st_mtim.tv_nsec))
    }
}
