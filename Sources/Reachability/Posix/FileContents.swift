import Glibc

/// Reading a whole (small) regular file, for configuration files.
enum FileContents {
    /// Whether `read` failed because the file is larger than its limit.
    static func isTooLarge(_ error: Errno) -> Bool { error.code == EFBIG }

    /// The file's bytes. Throws the errno of a failed call, or `EFBIG` past `limit` bytes, or
    /// `EISDIR`/`EINVAL` for something that is not a regular file.
    static func read(_ path: String, limit: Int) throws(Errno) -> [UInt8] {
        let fd = try retryingOnInterrupt { open(path, O_RDONLY | O_CLOEXEC) }
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
