import ReachabilityVerdict

/// One history file: `history-<UTC start, ms>Z.jsonl`.
package struct HistoryFile: Sendable, Equatable {
    package var name: String
    /// When the file was started (from its name), Unix seconds.
    package var startTime: Double
    package var size: Int
    /// When it was last written (mtime when listed; the writer's clock after an append).
    package var modified: Double = .infinity
    /// False for a link, FIFO, device or directory planted under a history file's name: it is
    /// never opened, read or written (retention may remove the name, never what it points at).
    package var isRegular = true
}

/// A failed file operation, with what was being done, for counting and logging per condition.
package struct HistoryStoreError: Error, Equatable, CustomStringConvertible {
    package enum Operation: String, Sendable { case list, open, write, sync, rotate, remove, repair }
    package let operation: Operation
    package let errno: Errno
    /// Set when a file was refused before any write (a link, not a regular file, a hard link).
    package let refusal: DirectoryHandle.Refusal?

    package init(operation: Operation, errno: Errno) {
        self.operation = operation
        self.errno = errno
        refusal = nil
    }

    package init(operation: Operation, refusal: DirectoryHandle.Refusal) {
        self.operation = operation
        self.refusal = refusal
        switch refusal {
        case .symbolicLink: errno = Errno(40)  // ELOOP, what O_NOFOLLOW answers
        case .notRegular: errno = Errno(22)  // EINVAL
        case .otherNames: errno = Errno(31)  // EMLINK
        case .failed(let e): errno = e
        }
    }

    /// For a person: what was wrong with the file, or the errno's text.
    package var detail: String { refusal?.description ?? errno.description }
    package var description: String { "\(operation.rawValue): \(detail)" }
}

/// The history directory: which files exist, which one is appended to, rotation (by size and by
/// period), retention (by age and total size) and the torn-tail repair. Not thread-safe: owned
/// by the writer thread (or by start-up code before that thread exists).
///
/// File names carry their start time and never go backwards: if the wall clock steps back, a
/// new file is named one millisecond after the newest one, so name order is write order.
package struct HistoryStore: Sendable {
    package let directory: String
    package let config: HistoryConfig
    /// Every file, oldest first; the last one is the one appended to (when open).
    package private(set) var files: [HistoryFile] = []
    private var fd: Int32 = -1
    /// The directory, opened by `open`; every file is opened, created and removed relative to it.
    private var dir: DirectoryHandle?
    /// The last write left a partial line that could not be truncated away: the next record
    /// starts with a newline so that fragment stays a line of its own (skipped as corrupt).
    private var needsNewline = false
    /// Whether the directory has been listed (by `open`).
    private var listed = false
    /// The latest failure to delete an old file, for the writer to count and log.
    package private(set) var retentionFailure: HistoryStoreError?
    /// The newest file, refused at `open` (a link or not a regular file), with its name: it was
    /// left untouched and the next record starts a new file. For the owner to count and log.
    package private(set) var refusedNewest: (name: String, error: HistoryStoreError)?

    package init(config: HistoryConfig) {
        directory = config.directory
        self.config = config
    }

    package var totalBytes: Int { files.reduce(0) { $0 + $1.size } }
    package var isOpen: Bool { fd >= 0 }

    static let prefix = "history-"
    static let suffix = ".jsonl"

    package static func fileName(startingAt time: Double) -> String { prefix + UTCTime.compact(time) + suffix }

    /// The start time in a history file name, or nil if the name is not one.
    package static func startTime(ofName name: String) -> Double? {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix) else { return nil }
        return UTCTime.parseCompact(name.dropFirst(prefix.count).dropLast(suffix.count))
    }

    package func path(_ file: HistoryFile) -> String { directory + "/" + file.name }

    /// History files in a directory, oldest first (other names are ignored; a link or other
    /// non-regular entry under a history name is listed with `isRegular` false).
    package static func listFiles(in directory: String) throws(HistoryStoreError) -> [HistoryFile] {
        let dir: DirectoryHandle
        do { dir = try DirectoryHandle.open(directory, create: false) } catch {
            throw HistoryStoreError(operation: .list, errno: error)
        }
        defer { dir.close() }
        return try listFiles(in: dir)
    }

    static func listFiles(in dir: DirectoryHandle) throws(HistoryStoreError) -> [HistoryFile] {
        let names: [String]
        do { names = try dir.list() } catch { throw HistoryStoreError(operation: .list, errno: error) }
        return names.compactMap { name -> HistoryFile? in
            guard let start = startTime(ofName: name) else { return nil }
            let st = dir.status(name)
            return HistoryFile(
                name: name, startTime: start, size: st?.size ?? 0, modified: st?.modified ?? .infinity,
                isRegular: st?.isRegular ?? false)
        }.sorted { $0.name < $1.name }
    }

    /// Creates the directory, lists it, applies retention and opens the newest file for
    /// appending if it is still current (repairing a torn last line). Returns the bytes of a
    /// torn line cut away (0 if none). A newest file that is a link, not a regular file or a
    /// hard link is refused before any byte is read or written (`refusedNewest`); the next
    /// record starts a new file, named after it.
    package mutating func open(now: Double) throws(HistoryStoreError) -> Int {
        dir?.close()
        dir = nil
        let opened: DirectoryHandle
        do { opened = try DirectoryHandle.open(directory, create: true) } catch {
            throw HistoryStoreError(operation: .open, errno: error)
        }
        // The directory removed and made again (a cleanup job's `rm -r`): the lock of the old
        // one protects nothing here, so it is taken on the new one, or nothing is written.
        if case .failure(let failure)? = DirectoryLock.ensureHeld(directory) {
            opened.close()
            switch failure {
            case .failed(let err), .unusableDirectory(let err): throw HistoryStoreError(operation: .open, errno: err)
            case .held: throw HistoryStoreError(operation: .open, errno: DirectoryLock.heldError)
            }
        }
        dir = opened
        files = try Self.listFiles(in: opened)
        listed = true
        enforceRetention(now: now)
        guard let newest = files.last, !isExpired(newest, now: now), newest.size < config.maxFileSize else { return 0 }
        do { fd = try opened.openAppend(newest.name, create: false) } catch {
            let error = HistoryStoreError(operation: .open, refusal: error)
            guard error.refusal != .failed(error.errno) else { throw error }
            refusedNewest = (newest.name, error)
            return 0
        }
        return repairTail()
    }

    /// Takes the refusal of the newest file at `open` (to count and log it once).
    package mutating func takeRefusedNewest() -> (name: String, error: HistoryStoreError)? {
        defer { refusedNewest = nil }
        return refusedNewest
    }

    /// Cuts a final line that has no newline (a write torn by a crash or a full disk). If it
    /// cannot, the next record starts on a line of its own and readers skip the fragment.
    private mutating func repairTail() -> Int {
        guard fd >= 0, let last = files.indices.last, let size = try? FileIO.size(fd: fd) else { return 0 }
        files[last].size = size
        guard size > 0 else { return 0 }
        var keep = 0
        var end = size
        var block = [UInt8](repeating: 0, count: 64 << 10)
        search: while end > 0 {
            let start = max(0, end - block.count)
            let n =
                (try? block.withUnsafeMutableBytes { b throws(Errno) in
                    try FileIO.pread(fd, into: UnsafeMutableRawBufferPointer(rebasing: b[0..<(end - start)]), at: start)
                }) ?? -1
            guard n == end - start else {
                needsNewline = true
                return 0
            }
            for i in stride(from: n - 1, through: 0, by: -1) where block[i] == 0x0A {
                keep = start + i + 1
                break search
            }
            end = start
        }
        guard keep < size else { return 0 }
        do { try FileIO.truncate(fd, to: keep) } catch {
            needsNewline = true
            return size - keep
        }
        files[last].size = keep
        return size - keep
    }

    /// Whether a file's period is over (age rotation).
    func isExpired(_ file: HistoryFile, now: Double) -> Bool {
        let period = config.rotationPeriod.seconds
        guard period > 0 else { return false }
        return (now / period).rounded(.down) > (file.startTime / period).rounded(.down)
    }

    /// Appends one record with one `write`, rotating first if it is due. A short write is
    /// truncated back so the file never holds half a record before a whole one.
    package mutating func append(_ record: [UInt8], now: Double) throws(HistoryStoreError) {
        if fd >= 0, let current = files.last,
            isExpired(current, now: now) || (current.size > 0 && current.size + record.count > config.maxFileSize)
        {
            try rotate(now: now)
        }
        if fd < 0 && !listed { _ = try open(now: now) }
        if fd < 0 { try create(now: now) }
        guard let last = files.indices.last else { return }
        let bytes = needsNewline ? [0x0A] + record : record
        let before = files[last].size
        let written: Int
        do { written = try FileIO.writeOnce(fd, bytes) } catch {
            throw HistoryStoreError(operation: .write, errno: error)
        }
        files[last].modified = now
        if written == bytes.count {
            files[last].size = before + written
            needsNewline = false
            return
        }
        // Short write (disk full): take the fragment back.
        do {
            try FileIO.truncate(fd, to: before)
            files[last].size = before
        } catch {
            files[last].size = before + written
            needsNewline = true
        }
        throw HistoryStoreError(operation: .write, errno: Errno(28))  // ENOSPC: what a short write means
    }

    /// Makes written records durable. If the file was deleted behind our back (the directory
    /// removed or cleaned), it is dropped so the next record starts a new file rather than
    /// writing into an unlinked one.
    package mutating func sync() throws(HistoryStoreError) {
        guard fd >= 0 else { return }
        do { try FileIO.syncData(fd) } catch { throw HistoryStoreError(operation: .sync, errno: error) }
        if (try? FileIO.linkCount(fd: fd)) == 0 {
            FileIO.close(fd)
            fd = -1
            files.removeLast()
            listed = false
            throw HistoryStoreError(operation: .write, errno: Errno(2))  // ENOENT: the file is gone
        }
    }

    /// Closes the current file (after a sync) and starts the next one.
    package mutating func rotate(now: Double) throws(HistoryStoreError) {
        if fd >= 0 {
            try? FileIO.syncData(fd)
            FileIO.close(fd)
            fd = -1
        }
        needsNewline = false
        try create(now: now)
        enforceRetention(now: now)
    }

    /// Takes the latest retention failure (to count and log it once).
    package mutating func takeRetentionFailure() -> HistoryStoreError? {
        defer { retentionFailure = nil }
        return retentionFailure
    }

    private mutating func create(now: Double) throws(HistoryStoreError) {
        var time = now
        if let newest = files.last, time <= newest.startTime { time = newest.startTime + 0.001 }
        guard let dir else { throw HistoryStoreError(operation: .open, errno: Errno(9)) }  // EBADF: never opened
        var lastError = HistoryStoreError(operation: .open, errno: Errno(17))
        for _ in 0..<10 {
            let name = Self.fileName(startingAt: time)
            do throws(DirectoryHandle.Refusal) {
                fd = try dir.openAppend(name, create: true)
                files.append(
                    HistoryFile(name: name, startTime: Self.startTime(ofName: name) ?? time, size: 0, modified: now))
                try? dir.sync()
                return
            } catch {
                lastError = HistoryStoreError(operation: .open, refusal: error)
                // EEXIST: a stray file or link (O_EXCL never follows one); take the next millisecond.
                guard error == .failed(Errno(17)) else { break }
                time += 0.001
            }
        }
        throw lastError
    }

    /// Deletes rotated files whose newest record is older than the retention, then the oldest
    /// ones while the total exceeds `maxTotalSize`. The file being appended to is never deleted.
    package mutating func enforceRetention(now: Double) {
        var firstError: HistoryStoreError?
        var removed = false
        let keepOpen = fd >= 0 ? 1 : 0
        while files.count > keepOpen {
            // A file's newest record is no later than the next file's start or its last write.
            let end = min(files.count > 1 ? files[1].startTime : .infinity, files[0].modified)
            guard end < now - config.retention.seconds || totalBytes > config.maxTotalSize else { break }
            do throws(Errno) {
                guard let dir else { break }
                try dir.remove(files[0].name)
            } catch {
                if error.code != 2 {
                    firstError = firstError ?? HistoryStoreError(operation: .remove, errno: error)
                    break
                }
            }
            files.removeFirst()
            removed = true
        }
        if removed { try? dir?.sync() }
        if let firstError { retentionFailure = firstError }
    }

    package mutating func close() {
        if fd >= 0 {
            try? FileIO.syncData(fd)
            FileIO.close(fd)
            fd = -1
        }
        dir?.close()
        dir = nil
    }
}
