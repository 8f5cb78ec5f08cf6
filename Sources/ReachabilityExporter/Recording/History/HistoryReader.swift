import Dispatch
import ReachabilityVerdict
import Synchronization

/// Reads history files in write order and hands each decoded line to a closure. Never fails on
/// content: corrupt lines (garbage, a torn final line, lines over the size limit) are skipped
/// and counted; lines of a newer format version or an unknown type are skipped and counted
/// apart. Files are read in large chunks and lines decoded in place through the fast path.
package struct HistoryReader {
    /// What a read went through.
    package struct Stats: Sendable, Equatable {
        package var files = 0
        package var bytes = 0
        package var records = 0
        package var rounds = 0
        package var corrupt = 0
        /// Newer versions and unknown types.
        package var skipped = 0
        /// Files that could not be opened or read (with the first error).
        package var unreadable = 0
        package var firstError: String?
        package init() {}

        mutating func add(_ o: Stats) {
            files += o.files
            bytes += o.bytes
            records += o.records
            rounds += o.rounds
            corrupt += o.corrupt
            skipped += o.skipped
            unreadable += o.unreadable
            firstError = firstError ?? o.firstError
        }
    }

    static let chunkSize = 4 << 20

    /// Reads every history file of `directory` whose records may reach `from` (all if nil).
    package static func read(directory: String, from: Double? = nil, _ body: (HistoryEvent) -> Void)
        throws(HistoryStoreError) -> Stats
    {
        read(paths: try paths(directory: directory, from: from), body)
    }

    /// The history files of `directory` whose records may reach `from` (all if nil), in order.
    package static func paths(directory: String, from: Double?) throws(HistoryStoreError) -> [String] {
        // A link or device under a history name is not ours to read.
        var files = try HistoryStore.listFiles(in: directory).filter(\.isRegular)
        if let from {
            // A file ends where the next begins; keep one file before the window so the first
            // round of the window knows the verdict that was holding.
            if let firstInside = files.firstIndex(where: { $0.startTime >= from }) {
                files.removeFirst(max(0, firstInside - 2))
            } else {
                files.removeFirst(max(0, files.count - 2))
            }
        }
        return files.map { directory + "/" + $0.name }
    }

    /// Reads the given files in order. With several files and cores, files are decoded ahead
    /// on helper threads (at most `lookahead` files in memory); `body` still sees every event
    /// in order, on the calling thread.
    package static func read(
        paths: [String], threads: Int = min(2, FileIO.processorCount()), _ body: (HistoryEvent) -> Void
    ) -> Stats {
        guard paths.count > 1, threads > 1 else {
            var stats = Stats()
            var buffer = [UInt8](repeating: 0, count: chunkSize)
            var scanner = HistoryLineScanner()
            for path in paths {
                readFile(path, buffer: &buffer, stats: &stats) { decode($0, scanner: &scanner, stats: &$1, body) }
            }
            return stats
        }
        let lookahead = 2 * threads
        let slots = (0..<paths.count).map { _ in DecodedFile() }
        let permits = DispatchSemaphore(value: lookahead)
        let next = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)
        let exited = DispatchSemaphore(value: 0)
        for n in 0..<threads {
            startThread(name: "history-read-\(n)") {
                var buffer = [UInt8](repeating: 0, count: chunkSize)
                var scanner = HistoryLineScanner()
                while true {
                    permits.wait()
                    let i = next.add(1, ordering: .relaxed).oldValue
                    guard i < paths.count, !stop.load(ordering: .relaxed) else { break }
                    var events: [HistoryEvent] = []
                    var stats = Stats()
                    readFile(paths[i], buffer: &buffer, stats: &stats) { line, stats in
                        decode(line, scanner: &scanner, stats: &stats) { events.append($0) }
                    }
                    slots[i].put(events, stats)
                }
                exited.signal()
            }
        }
        var stats = Stats()
        for slot in slots {
            let (events, fileStats) = slot.take()
            stats.add(fileStats)
            events.withUnsafeBufferPointer { all in
                for i in all.indices { body(all[i]) }
            }
            permits.signal()
        }
        stop.store(true, ordering: .relaxed)
        for _ in 0..<threads { permits.signal() }
        for _ in 0..<threads { exited.wait() }
        return stats
    }

    /// Reads the given files in order with the full decoder, probe results included (slower
    /// than `read(paths:)`: for short spans, such as the status page's last 24 hours of RTT).
    package static func readRecords(paths: [String], _ body: (HistoryRecord) -> Void) -> Stats {
        var stats = Stats()
        var buffer = [UInt8](repeating: 0, count: chunkSize)
        for path in paths {
            readFile(path, buffer: &buffer, stats: &stats) { line, stats in
                do throws(HistoryDecodeError) {
                    let record = try HistoryRecord.decode(line)
                    stats.records += 1
                    if case .round = record { stats.rounds += 1 }
                    body(record)
                } catch {
                    count(error, in: &stats)
                }
            }
        }
        return stats
    }

    /// Opens one file and hands each complete line to `line`; unreadable files are counted.
    private static func readFile(
        _ path: String, buffer: inout [UInt8], stats: inout Stats,
        _ line: (UnsafeBufferPointer<UInt8>, inout Stats) -> Void
    ) {
        stats.files += 1
        let fd: Int32
        do { fd = try FileIO.openRead(path) } catch {
            stats.unreadable += 1
            stats.firstError = stats.firstError ?? "\(path): \(error)"
            return
        }
        defer { FileIO.close(fd) }
        if let error = readLines(fd, buffer: &buffer, stats: &stats, line) {
            stats.unreadable += 1
            stats.firstError = stats.firstError ?? "\(path): \(error)"
        }
    }

    private static func readLines(
        _ fd: Int32, buffer: inout [UInt8], stats: inout Stats,
        _ line: (UnsafeBufferPointer<UInt8>, inout Stats) -> Void
    ) -> Errno? {
        var filled = 0
        var skippingLongLine = false
        while true {
            if filled == buffer.count {
                // A line longer than the buffer: corrupt; drop what we have and skip to its end.
                if !skippingLongLine { stats.corrupt += 1 }
                skippingLongLine = true
                filled = 0
            }
            let result = buffer.withUnsafeMutableBytes { b -> Result<Int, Errno> in
                do throws(Errno) {
                    return .success(try FileIO.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: b[filled...])))
                } catch { return .failure(error) }
            }
            let n: Int
            switch result {
            case .success(let count): n = count
            case .failure(let error): return error
            }
            if n == 0 {
                // A final line without its newline was torn by a crash (or is being written).
                if filled > 0 && !skippingLongLine { stats.corrupt += 1 }
                return nil
            }
            stats.bytes += n
            let end = filled + n
            var lineStart = 0
            buffer.withUnsafeBufferPointer { all in
                var i = filled
                while i < end {
                    guard let nl = memchrIndex(all, from: i, to: end) else { break }
                    if skippingLongLine {
                        skippingLongLine = false
                    } else if nl > lineStart {
                        line(UnsafeBufferPointer(rebasing: all[lineStart..<nl]), &stats)
                    }
                    lineStart = nl + 1
                    i = nl + 1
                }
            }
            // Keep the unfinished line at the front.
            let rest = end - lineStart
            if rest > 0 && lineStart > 0 {
                buffer.withUnsafeMutableBytes { b in
                    b.baseAddress!.advanced(by: 0).copyMemory(
                        from: b.baseAddress!.advanced(by: lineStart), byteCount: rest)
                }
            }
            filled = skippingLongLine ? 0 : rest
        }
    }

    @inline(__always) private static func memchrIndex(_ all: UnsafeBufferPointer<UInt8>, from: Int, to: Int) -> Int? {
        guard let base = all.baseAddress, let hit = FileIO.findNewline(base + from, count: to - from) else {
            return nil
        }
        return hit - base
    }

    private static func decode(
        _ line: UnsafeBufferPointer<UInt8>, scanner: inout HistoryLineScanner, stats: inout Stats,
        _ body: (HistoryEvent) -> Void
    ) {
        do {
            let event = try scanner.scan(line)
            stats.records += 1
            if case .round = event { stats.rounds += 1 }
            body(event)
        } catch {
            count(error, in: &stats)
        }
    }

    private static func count(_ error: HistoryDecodeError, in stats: inout Stats) {
        switch error {
        case .corrupt: stats.corrupt += 1
        case .unsupportedVersion, .unknownType: stats.skipped += 1
        }
    }
}

/// One file's decoded events, handed from a reader thread to the consumer. All state is behind
/// the lock; `take` waits for `put`.
private final class DecodedFile: Sendable {
    private let ready = DispatchSemaphore(value: 0)
    private let content = Mutex<([HistoryEvent], HistoryReader.Stats)?>(nil)

    func put(_ events: [HistoryEvent], _ stats: HistoryReader.Stats) {
        content.withLock { $0 = (events, stats) }
        ready.signal()
    }

    func take() -> ([HistoryEvent], HistoryReader.Stats) {
        ready.wait()
        return content.withLock { c in
            defer { c = nil }
            return c ?? ([], HistoryReader.Stats())
        }
    }
}
