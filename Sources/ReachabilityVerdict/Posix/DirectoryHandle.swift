import Glibc

/// A directory opened once, and every file the daemon writes in it opened relative to that
/// descriptor (`openat`), never following a symbolic link and only if it is a regular file with
/// one name. Someone who can write into the directory can plant a link, a FIFO or a hard link
/// where a file of ours will be; through this type that costs them our file (refused, reported),
/// never theirs (truncated or appended to).
///
/// The directory's own path is the operator's and is followed as given: systemd's
/// `StateDirectory=` with `DynamicUser=` is itself a symbolic link to `/var/lib/private/…`.
/// Not for reading configuration (see `FileContents`). Not thread-safe: one owner closes it.
package struct DirectoryHandle: Sendable {
    /// Why a file in the directory was refused before anything was written to it.
    package enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        /// A symbolic link sits at the name.
        case symbolicLink
        /// A FIFO, socket, device or directory sits at the name.
        case notRegular
        /// The file has other names (a hard link): writing would change them too.
        case otherNames(Int)
        case failed(Errno)

        package var description: String {
            switch self {
            case .symbolicLink: "a symbolic link, not a file of ours (left untouched)"
            case .notRegular: "not a regular file (left untouched)"
            case .otherNames(let n): "a file with \(n) names (a hard link; left untouched)"
            case .failed(let errno): errno.description
            }
        }
    }

    package let path: String
    package let fd: Int32

    /// Opens (making it and its parents first if `create`) the directory at `path`.
    package static func open(_ path: String, create: Bool) throws(Errno) -> DirectoryHandle {
        if create { try FileIO.makeDirectories(path) }
        let fd = try retryingOnInterrupt { Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        return DirectoryHandle(path: path, fd: fd)
    }

    package func close() { _ = Glibc.close(fd) }

    /// Opens `name` for reading and appending (`create`: a new file, failing if the name
    /// exists). Refused without a byte written when the name is a link, not a regular file, or
    /// a file with more than one name.
    package func openAppend(_ name: String, create: Bool) throws(Refusal) -> Int32 {
        let flags = O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | (create ? O_CREAT | O_EXCL : 0)
        return try openChecked(name, flags: flags)
    }

    /// Opens `name` for reading only, under the same checks (nil if it does not exist).
    package func openRead(_ name: String) throws(Refusal) -> Int32? {
        do throws(Refusal) {
            return try openChecked(name, flags: O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        } catch .failed(let errno) where errno.code == ENOENT {
            return nil
        }
    }

    private func openChecked(_ name: String, flags: Int32) throws(Refusal) -> Int32 {
        let fd: Int32
        do throws(Errno) {
            fd = try retryingOnInterrupt { openat(self.fd, name, flags, 0o644) }
        } catch {
            // ELOOP is what O_NOFOLLOW answers for a link; ENXIO a socket; the rest are plain.
            switch error.code {
            case ELOOP: throw .symbolicLink
            case ENXIO, EISDIR: throw .notRegular
            default: throw .failed(error)
            }
        }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let error = Errno.current
            _ = Glibc.close(fd)
            throw .failed(error)
        }
        guard st.st_mode & S_IFMT == S_IFREG else {
            _ = Glibc.close(fd)
            throw .notRegular
        }
        guard st.st_nlink <= 1 else {
            _ = Glibc.close(fd)
            throw .otherNames(Int(st.st_nlink))
        }
        // The non-blocking open was for FIFOs and devices; a regular file's writes block as usual.
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return fd
    }

    /// What sits at `name` without following a link: its size and modification time, and
    /// whether it is a regular file. Nil if nothing can be read there.
    package func status(_ name: String) -> (size: Int, modified: Double, isRegular: Bool)? {
        var st = stat()
        guard fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        return (
            Int(st.st_size), Double(st.st_mtim.tv_sec) + Double(st.st_mtim.tv_nsec) / 1e9,
            st.st_mode & S_IFMT == S_IFREG
        )
    }

    /// Names in the directory (no `.`/`..`), unsorted.
    package func list() throws(Errno) -> [String] {
        let copy = try retryingOnInterrupt { openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard let dir = fdopendir(copy) else {
            let error = Errno.current
            _ = Glibc.close(copy)
            throw error
        }
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

    /// Removes the name (a link is removed, never its target).
    package func remove(_ name: String) throws(Errno) {
        guard unlinkat(fd, name, 0) == 0 else { throw Errno.current }
    }

    /// Makes the directory's entries (new, renamed or removed files) durable.
    package func sync() throws(Errno) {
        try retryingOnInterrupt { fsync(fd) }
    }

    /// Replaces `name` with `bytes` as a whole: written to a fresh `name.tmp` (a stale one, or
    /// anything planted there, is unlinked first, never opened), synced, then renamed over
    /// `name`, so a crash leaves the old file or the new one, never a torn one. The rename
    /// replaces whatever entry is at `name` (a link included) without touching what it names.
    package func replace(_ name: String, with bytes: [UInt8]) throws(Refusal) {
        let temporary = name + ".tmp"
        _ = unlinkat(fd, temporary, 0)
        let file = try openChecked(temporary, flags: O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW)
        do throws(Errno) {
            var written = 0
            while written < bytes.count {
                let n = try FileIO.writeOnce(file, Array(bytes[written...]))
                if n <= 0 { throw Errno(EIO) }
                written += n
            }
            try FileIO.syncData(file)
        } catch {
            _ = Glibc.close(file)
            _ = unlinkat(fd, temporary, 0)
            throw .failed(error)
        }
        _ = Glibc.close(file)
        guard renameat(fd, temporary, fd, name) == 0 else {
            let error = Errno.current
            _ = unlinkat(fd, temporary, 0)
            throw .failed(error)
        }
        try? sync()
    }

    /// A small file's bytes (at most `limit`; `EFBIG` past it), nil when it does not exist.
    package func readSmall(_ name: String, limit: Int) throws(Refusal) -> [UInt8]? {
        guard let file = try openRead(name) else { return nil }
        defer { _ = Glibc.close(file) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(file, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .failed(Errno.current)
            }
            if n == 0 { return out }
            out += chunk[0..<n]
            if out.count > limit { throw .failed(Errno(EFBIG)) }
        }
    }
}
