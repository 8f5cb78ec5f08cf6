import Glibc
import Synchronization

/// An exclusive `flock` on the history directory itself, held for the life of the process (the
/// kernel drops it when the process ends, however it ends): two exporters writing one history
/// directory would interleave their rounds and make every report wrong, so the second is
/// refused at start.
///
/// The lock is on the directory's own descriptor, so no file deletion can undo it (a lock on a
/// file inside, `DIR/.lock`, was undone by a cleanup job removing the file: the next exporter
/// made a new one and locked that). `DIR/.lock` is still locked too and carries our pid, so an
/// older exporter (which locks only that file) and this one exclude each other, and a refused
/// start can name the holder.
package enum DirectoryLock {
    package enum Failure: Error, Sendable, Equatable {
        /// Another process holds the lock; its pid as it wrote it, if readable.
        case held(pid: Int?)
        /// The lock file cannot be opened or locked (a symlink, a directory, no permission).
        case failed(Errno)
        /// The directory cannot be made or written: there is no history to protect.
        case unusableDirectory(Errno)
    }

    package static let fileName = ".lock"

    /// What a writer reports when another process holds the lock (`EBUSY`).
    package static let heldError = Errno(EBUSY)

    /// The directories this process holds the lock of (device, inode), by path.
    private static let held = Mutex<[String: (dev: UInt64, ino: UInt64)]>([:])

    /// For a directory this process locked: whether the directory at `directory` is still the
    /// one it locked, and if it was removed and made again (`rm -r`, then the history made it
    /// anew), the lock on the new one, taken now. Nil when this process never locked it (tests,
    /// tools): nothing to keep. A failure means another process holds the new directory: its
    /// writer must stop writing there.
    package static func ensureHeld(_ directory: String) -> Result<Void, Failure>? {
        guard let locked = held.withLock({ $0[directory] }) else { return nil }
        var st = stat()
        guard stat(directory, &st) == 0 else { return .failure(.unusableDirectory(.current)) }
        if UInt64(st.st_dev) == locked.dev && UInt64(st.st_ino) == locked.ino { return .success(()) }
        return acquire(directory)
    }

    /// Takes the lock, or says who holds it or why it cannot be taken.
    package static func acquire(_ directory: String) -> Result<Void, Failure> {
        let dir: DirectoryHandle
        do throws(Errno) { dir = try DirectoryHandle.open(directory, create: true) } catch {
            return .failure(.unusableDirectory(error))
        }
        if flock(dir.fd, LOCK_EX | LOCK_NB) != 0 {
            let err = Errno.current
            let pid = holder(dir)
            dir.close()
            return .failure(err.code == EWOULDBLOCK ? .held(pid: pid) : .failed(err))
        }
        // Deliberately never closed: closing would release the lock.
        let fd = openat(dir.fd, fileName, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o644)
        guard fd >= 0 else {
            // A directory nobody may write to holds no history to protect; anything else in
            // the way of the lock file (a symlink, a directory named .lock) fails closed.
            let err = Errno.current
            dir.close()
            return .failure([EROFS, EACCES, EPERM].contains(err.code) ? .unusableDirectory(err) : .failed(err))
        }
        var st = stat()
        // Not a FIFO or a device; not a hard link to someone's file (truncated below).
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_nlink <= 1 else {
            Glibc.close(fd)
            dir.close()
            return .failure(.failed(Errno(st.st_nlink > 1 ? EMLINK : EINVAL)))
        }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            // An older exporter, which locks only the file.
            let err = Errno.current
            let pid = holder(dir)
            Glibc.close(fd)
            dir.close()
            return .failure(err.code == EWOULDBLOCK ? .held(pid: pid) : .failed(err))
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        var identity = stat()
        if fstat(dir.fd, &identity) == 0 {
            held.withLock { $0[directory] = (UInt64(identity.st_dev), UInt64(identity.st_ino)) }
        }
        return .success(())
    }

    /// The pid the holder wrote in `.lock`, if there is one to read.
    private static func holder(_ dir: DirectoryHandle) -> Int? {
        guard let bytes = try? dir.readSmall(fileName, limit: 64) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        return text.split(whereSeparator: { $0 == "\n" || $0 == " " }).first.flatMap { Int($0) }
    }
}
