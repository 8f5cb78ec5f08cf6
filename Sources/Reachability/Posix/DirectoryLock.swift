import Glibc

/// An exclusive `flock` on `DIR/.lock`, held for the life of the process (the kernel drops it
/// when the process ends, however it ends): two exporters writing one history directory would
/// interleave their rounds and make every report wrong, so the second is refused at start.
package enum DirectoryLock {
    package enum Failure: Error, Sendable, Equatable {
        /// Another process holds the lock; its pid as it wrote it, if readable.
        case held(pid: Int?)
        case failed(Errno)
    }

    /// Takes the lock, or says who holds it. A directory that cannot be created or written is
    /// `.failed` (the caller decides whether that matters).
    package static func acquire(_ directory: String) -> Result<Void, Failure> {
        do throws(Errno) { try FileIO.makeDirectories(directory) } catch { return .failure(.failed(error)) }
        let path = directory + "/.lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o644)
        guard fd >= 0 else { return .failure(.failed(Errno.current)) }
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
