/// One history file: `history-<UTC start, ms>Z.jsonl`.
package struct HistoryFile: Sendable, Equatable {
    package var name: String
    /// When the file was started (from its name), Unix seconds.
    package var startTime: Double
    package var size: Int
    /// When it was last written (mtime when listed; the writer's clock after an append).
    package var modified: Double = .infinity
}

/// A failed file operation, with what was being done, for counting and logging per condition.
package struct HistoryStoreError: Error, Equatable, CustomStringConvertible {
    package enum Operation: String, Sendable { case list, open, write, sync, rotate, remove, repair }
    package let operation: Operation
    package let errno: Errno
    package var description: String { "\(operation.rawValue): \(errno)" }
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
    /// The last write left a partial line that could not be truncated away: the next record
    /// starts with a newline so that fragment stays a line of its own (skipped as corrupt).
    private var needsNewline = false
    /// Whether the directory has been listed (by `open`).
    private var listed = false
    /// The latest failure to delete an old file, for the writer to count and log.
    package private(set) var retentionFailure: HistoryStoreError?

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

    /// History files in a directory, oldest first (other names are ignored).
    package static func listFiles(in directory: String) throws(HistoryStoreError) -> [HistoryFile] {
        let names: [String]
        do { names = try FileIO.list(directory) } catch { throw HistoryStoreError(operation: .list, errno: error) }
        return names.compactMap { name -> HistoryFile? in
            guard let start = startTime(ofName: name) else { return nil }
            let st = FileIO.status(directory + "/" + name)
            return HistoryFile(name: name, startTime: start, size: st?.size ?? 0, modified: st?.modified ?? .infinity)
        }.sorted { $0.name < $1.name }
    }

    /// Creates the directory, lists it, applies retention and opens the newest file for
    /// appending if it is still current (repairing a torn last line). Returns the bytes of a
    /// torn line cut away (0 if none).
    package mutating func open(now: Double) throws(HistoryStoreError) -> Int {
        do { try FileIO.makeDirectories(directory) } catch { throw HistoryStoreError(operation: .open, errno: error) }
        files = try Self.listFiles(in: directory)
        listed = true
        enforceRetention(now: now)
        guard let newest = files.last, !isExpired(newest, now: now), newest.size < config.maxFileSize else { return 0 }
        do { fd = try FileIO.openAppend(path(newest), create: false) } catch {
            throw HistoryStoreError(operation: .open, errno: error)
        }
        return repairTail()
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
        var lastError = Errno(17)
        for _ in 0..<10 {
            let name = Self.fileName(startingAt: time)
            do {
                fd = try FileIO.openAppend(directory + "/" + name, create: true)
                files.append(
                    HistoryFile(name: name, startTime: Self.startTime(ofName: name) ?? time, size: 0, modified: now))
                try? FileIO.syncDirectory(directory)
                return
            } catch {
                lastError = error
                guard error.code == 17 else { break }  // EEXIST: a stray file; take the next millisecond
                time += 0.001
            }
        }
        throw HistoryStoreError(operation: .open, errno: lastError)
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
            do { try FileIO.remove(path(files[0])) } catch {
                if error.code != 2 {
                    firstError = firstError ?? HistoryStoreError(operation: .remove, errno: error)
                    break
                }
            }
            files.removeFirst()
            removed = true
        }
        if removed { try? FileIO.syncDirectory(directory) }
        if let firstError { retentionFailure = firstError }
    }

    package mutating func close() {
        if fd >= 0 {
            try? FileIO.syncData(fd)
            FileIO.close(fd)
            fd = -1
        }
    }
}
