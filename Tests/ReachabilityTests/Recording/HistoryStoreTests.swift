import Foundation
import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// A scratch directory under /tmp, removed when the test ends.
final class ScratchDirectory {
    let path: String
    init() {
        path = NSTemporaryDirectory() + "rx-history-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }

    var files: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted() }
    func contents(_ name: String) -> [UInt8] {
        Array(FileManager.default.contents(atPath: path + "/" + name) ?? Data())
    }
    func lines(_ name: String) -> [String] {
        String(decoding: contents(name), as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(
            String.init)
    }
    func append(_ name: String, _ text: String) {
        let h = FileHandle(forWritingAtPath: path + "/" + name)!
        h.seekToEndOfFile()
        h.write(Data(text.utf8))
        h.closeFile()
    }
}

func roundRecord(
    _ t: Double, _ state: ConnectivityState = .full, reason: VerdictReason? = nil, interval: Double = 1,
    since: Double? = nil
) -> HistoryRecord {
    .round(
        RoundRecord(
            time: t, duration: 0, interval: interval, round: 1, overall: Verdict(state, reason: reason),
            since: since ?? t))
}

/// Files: naming, rotation by size and by period, retention by age and size, torn tails,
/// garbage, and the wall clock stepping backwards.
@Suite struct HistoryStoreTests {
    static let day = 1_767_225_600.0  // 2026-01-01T00:00:00Z

    func config(_ dir: ScratchDirectory, maxFileSize: Int = 1 << 20) -> HistoryConfig {
        var c = HistoryConfig(directory: dir.path)
        c.maxFileSize = maxFileSize
        c.retention = .seconds(2 * 86_400)
        return c
    }

    @Test func rotatesBeforeARecordWouldPassTheSizeLimit() throws {
        let dir = ScratchDirectory()
        let record = roundRecord(Self.day + 1).encoded()
        var store = HistoryStore(config: config(dir, maxFileSize: 3 * record.count))
        _ = try store.open(now: Self.day)
        for i in 0..<7 { try store.append(roundRecord(Self.day + 1).encoded(), now: Self.day + 1 + Double(i) * 0.01) }
        store.close()
        // 3 + 3 + 1: exactly at the limit stays, one more byte rotates.
        #expect(dir.files.map { dir.contents($0).count } == [3, 3, 1].map { $0 * record.count })
        #expect(dir.files.first == "history-20260101T000001.000Z.jsonl")
        #expect(store.files.map(\.size) == [3, 3, 1].map { $0 * record.count })
    }

    @Test func rotatesAtMidnightUTCAndStartsANewFileAfterARestartPastIt() throws {
        let dir = ScratchDirectory()
        var store = HistoryStore(config: config(dir))
        _ = try store.open(now: Self.day - 10)
        try store.append(roundRecord(Self.day - 10).encoded(), now: Self.day - 10)
        try store.append(roundRecord(Self.day - 0.001).encoded(), now: Self.day - 0.001)
        try store.append(roundRecord(Self.day).encoded(), now: Self.day)
        store.close()
        #expect(dir.files == ["history-20251231T235950.000Z.jsonl", "history-20260101T000000.000Z.jsonl"])
        #expect(dir.lines(dir.files[0]).count == 3)  // two records and the final empty split

        // A restart the same day appends to the newest file; one the next day starts a new file.
        var again = HistoryStore(config: config(dir))
        _ = try again.open(now: Self.day + 3600)
        try again.append(roundRecord(Self.day + 3600).encoded(), now: Self.day + 3600)
        again.close()
        #expect(dir.files.count == 2)
        var nextDay = HistoryStore(config: config(dir))
        _ = try nextDay.open(now: Self.day + 86_400 + 5)
        try nextDay.append(roundRecord(Self.day + 86_405).encoded(), now: Self.day + 86_405)
        nextDay.close()
        #expect(dir.files.last == "history-20260102T000005.000Z.jsonl")
    }

    @Test func retentionDeletesExpiredFilesOnRotationAndOnStart() throws {
        let dir = ScratchDirectory()
        var store = HistoryStore(config: config(dir))
        _ = try store.open(now: Self.day)
        for d in 0..<5 {
            let t = Self.day + Double(d) * 86_400 + 60
            try store.append(roundRecord(t).encoded(), now: t)
        }
        // Day 4's rotation removed the files whose newest record is over 2 days old (days 0, 1).
        #expect(
            dir.files == [
                "history-20260103T000100.000Z.jsonl", "history-20260104T000100.000Z.jsonl",
                "history-20260105T000100.000Z.jsonl",
            ])
        store.close()

        // On start, ten days later: everything but the newest is expired; the newest (by its
        // modification time, there being no later file) is too.
        for f in dir.files { try FileIO.setModified(dir.path + "/" + f, to: Self.day + 4 * 86_400 + 60) }
        var later = HistoryStore(config: config(dir))
        _ = try later.open(now: Self.day + 14 * 86_400)
        #expect(dir.files.isEmpty)
        #expect(later.totalBytes == 0)
    }

    @Test func totalSizeIsBounded() throws {
        let dir = ScratchDirectory()
        let size = roundRecord(Self.day).encoded().count
        var c = config(dir, maxFileSize: 2 * size)
        c.maxTotalSize = 5 * size
        c.retention = .seconds(3650 * 86_400)
        var store = HistoryStore(config: c)
        _ = try store.open(now: Self.day)
        for i in 0..<20 { try store.append(roundRecord(Self.day + Double(i)).encoded(), now: Self.day + Double(i)) }
        // Enforced at each rotation: at most max-total-size plus the file being written.
        #expect(store.totalBytes <= c.maxTotalSize + c.maxFileSize)
        #expect(dir.files.reduce(0) { $0 + dir.contents($1).count } == store.totalBytes)
        #expect(dir.files.last == store.files.last?.name)
    }

    @Test func aTornLastLineIsCutOnOpenAndSkippedWhenRead() throws {
        let dir = ScratchDirectory()
        var store = HistoryStore(config: config(dir))
        _ = try store.open(now: Self.day)
        for i in 0..<3 { try store.append(roundRecord(Self.day + Double(i)).encoded(), now: Self.day + Double(i)) }
        store.close()
        let name = dir.files[0]
        let complete = dir.contents(name)
        let torn = #"{"v":1,"type":"round","time":1767225603,"dur"#
        dir.append(name, torn)

        // Read before repair: three rounds, one corrupt (torn) line.
        var rounds = 0
        let before = try HistoryReader.read(directory: dir.path) { if case .round = $0 { rounds += 1 } }
        #expect(rounds == 3 && before.corrupt == 1)

        var reopened = HistoryStore(config: config(dir))
        let cut = try reopened.open(now: Self.day + 10)
        #expect(cut == torn.utf8.count)
        try reopened.append(roundRecord(Self.day + 10).encoded(), now: Self.day + 10)
        reopened.close()
        #expect(Array(dir.contents(name).prefix(complete.count)) == complete)
        rounds = 0
        let after = try HistoryReader.read(directory: dir.path) { if case .round = $0 { rounds += 1 } }
        #expect(rounds == 4 && after.corrupt == 0)
    }

    @Test func garbageLinesAreSkippedAndCounted() throws {
        let dir = ScratchDirectory()
        let good = String(decoding: roundRecord(Self.day).encoded(), as: UTF8.self)
        let longLine = String(repeating: "x", count: 5 << 20)  // past the 4 MiB read buffer
        let text =
            good + "garbage\n\n" + good + "{\"v\":1}\n" + "\u{0}\u{1}\u{2}\n" + longLine + "\n" + good
            + "{\"v\":9,\"type\":\"round\"}\n" + good
        _ = FileManager.default.createFile(
            atPath: dir.path + "/history-20260101T000000.000Z.jsonl", contents: Data(text.utf8))
        _ = FileManager.default.createFile(atPath: dir.path + "/notes.txt", contents: Data("not history\n".utf8))
        var rounds = 0
        let stats = try HistoryReader.read(directory: dir.path) { if case .round = $0 { rounds += 1 } }
        #expect(rounds == 4)
        #expect(stats.corrupt == 4)  // garbage, {"v":1}, control bytes, the long line
        #expect(stats.skipped == 1)  // the newer version
        #expect(stats.files == 1)
    }

    @Test func fileNamesNeverGoBackwardsWhenTheClockSteps() throws {
        let dir = ScratchDirectory()
        var store = HistoryStore(config: config(dir, maxFileSize: roundRecord(0).encoded().count))
        _ = try store.open(now: Self.day + 7200)
        try store.append(roundRecord(Self.day + 7200).encoded(), now: Self.day + 7200)
        // The clock steps back an hour: no age rotation, and a size rotation names the new
        // file just after the newest one, so name order stays write order.
        try store.append(roundRecord(Self.day + 3600).encoded(), now: Self.day + 3600)
        try store.append(roundRecord(Self.day + 3601).encoded(), now: Self.day + 3601)
        store.close()
        #expect(
            dir.files == [
                "history-20260101T020000.000Z.jsonl", "history-20260101T020000.001Z.jsonl",
                "history-20260101T020000.002Z.jsonl",
            ])
        var times: [Double] = []
        _ = try HistoryReader.read(directory: dir.path) { if case .round(let r) = $0 { times.append(r.time) } }
        #expect(times == [Self.day + 7200, Self.day + 3600, Self.day + 3601])
    }
}
