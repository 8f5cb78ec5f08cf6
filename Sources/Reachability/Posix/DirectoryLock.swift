import Glibc

/// An exclusive `flock` on `DIR/.lock`, held for the life of the process (the kernel drops it
/// when the process ends, however it ends): two exporters writing one history directory would
/// interleave their rounds and make every report wrong, so the second is refused at start.
package enum DirectoryLock {
    package enum Failure: Error, Sendable, Equatable {
        /// Another process holds the lock; its pid as it wrote it, if readable.
        case held(pid: Int?)
        /// The lock file cannot be opened or locked (a symlink, a directory, no permission).
        case failed(Errno)
        /// The directory cannot be made or written: there is no history to protect.
        case unusableDirectory(Errno)
    }

    /// Takes the lock, or says who holds it or why it cannot be taken.
    package static func acquire(_ directory: String) -> Result<Void, Failure> {
        do throws(Errno) { try FileIO.makeDirectories(directory) } catch {
            return .failure(.unusableDirectory(error))
        }
        let path = directory + "/.lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o644)
        guard fd >= 0 else {
            // A directory nobody may write to holds no history to protect; anything else in
            // the way of the lock (a symlink, a directory named .lock) fails closed.
            let err = Errno.current
            return .failure([EROFS, EACCES, EPERM].contains(err.code) ? .unusableDirectory(err) : .failed(err))
        }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let err = Errno.current
            var buffer = [UInt8](repeating: 0, count: 32)
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
            Glibc.close(fd)
            guard err.code == EWOULDBLOCK else { return .failure(.failed(err)) }
            let text = n > 0 ? String(decoding: buffer[0..<n], as: UTF8.self) : ""
            return .failure(
                .held(pid: text.split(whereSeparator: { $0 == "\n" || $0 == " " }).first.flatMap { Int($0) }))
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        // Deliberately never closed: closing would release the lock.
        return .success(())
    }
}
