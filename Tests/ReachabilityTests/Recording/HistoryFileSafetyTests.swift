import Foundation
import Glibc
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// Found by a hostile review (#41): files in the history directory are not what they seem. A
/// link, a FIFO or a hard link under a name the exporter writes is refused untouched, and what it
/// points at stays byte-identical; the directory lock survives `rm .lock`.
@Suite struct HistoryFileSafetyTests {
    static let day = 1_767_225_600.0  // 2026-01-01T00:00:00Z
    static let victimBytes = Array("precious line one\nprecious torn tail without newline".utf8)

    /// A victim file outside the history directory, removed with it.
    func victim(_ dir: ScratchDirectory) -> String {
        let path = dir.path + "-victim"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(Self.victimBytes)))
        return path
    }

    func contents(_ path: String) -> [UInt8] { Array(FileManager.default.contents(atPath: path) ?? Data()) }

    enum Plant: CaseIterable { case symbolicLink, hardLink, fifo }

    func plant(_ kind: Plant, at path: String, victim: String) {
        switch kind {
        case .symbolicLink: #expect(symlink(victim, path) == 0)
        case .hardLink: #expect(link(victim, path) == 0)
        case .fifo: #expect(mkfifo(path, 0o600) == 0)
        }
    }

    @Test(arguments: Plant.allCases) func theNewestHistoryFileIsNeverWrittenThrough(_ kind: Plant) throws {
        let dir = ScratchDirectory()
        let victim = victim(dir)
        defer { unlink(victim) }
        let newest = HistoryStore.fileName(startingAt: Self.day)
        plant(kind, at: dir.path + "/" + newest, victim: victim)
        var store = HistoryStore(config: HistoryConfig(directory: dir.path))
        // Before the fix the open cut the victim's torn tail and the append wrote into it.
        #expect(try store.open(now: Self.day + 1) == 0)
        let taken = store.takeRefusedNewest()
        let refused = try #require(taken)
        #expect(refused.name == newest)
        #expect(refused.error.refusal != nil)
        try store.append(roundRecord(Self.day + 2).encoded(), now: Self.day + 2)
        try store.sync()
        store.close()
        #expect(contents(victim) == Self.victimBytes)
        // The record went to a new file named after the refused one, which is still there.
        #expect(dir.files == [newest, HistoryStore.fileName(startingAt: Self.day + 2)])
        #expect(dir.lines(HistoryStore.fileName(startingAt: Self.day + 2)).count == 2)
        if kind == .symbolicLink {
            var st = stat()
            #expect(lstat(dir.path + "/" + newest, &st) == 0 && st.st_mode & S_IFMT == S_IFLNK)
        }
        // Readers skip a link or a FIFO (a hard link is a regular file: reading it harms nothing).
        #expect(try HistoryReader.paths(directory: dir.path, from: nil).count == (kind == .hardLink ? 2 : 1))
    }

    /// A new file's name taken by a planted link: the next millisecond, the link untouched.
    @Test func aLinkAtTheNextFileNameIsSkipped() throws {
        let dir = ScratchDirectory()
        let victim = victim(dir)
        defer { unlink(victim) }
        plant(.symbolicLink, at: dir.path + "/" + HistoryStore.fileName(startingAt: Self.day), victim: victim)
        var store = HistoryStore(config: HistoryConfig(directory: dir.path))
        _ = try store.open(now: Self.day - 10)
        try store.rotate(now: Self.day)
        try store.append(roundRecord(Self.day).encoded(), now: Self.day)
        store.close()
        #expect(contents(victim) == Self.victimBytes)
        #expect(dir.files.contains(HistoryStore.fileName(startingAt: Self.day + 0.001)))
    }

    /// The budgets file is replaced whole through `name.tmp`: a link at either name is replaced
    /// as a name, never written through.
    @Test(arguments: [Plant.symbolicLink, .hardLink]) func theBudgetsFileNeverWritesThroughALink(_ kind: Plant) throws {
        let dir = ScratchDirectory()
        let victim = victim(dir)
        defer { unlink(victim) }
        plant(kind, at: dir.path + "/budgets.tmp", victim: victim)
        let handle = try DirectoryHandle.open(dir.path, create: false)
        defer { handle.close() }
        try handle.replace("budgets", with: Array("one\n".utf8))
        #expect(contents(victim) == Self.victimBytes)
        #expect(dir.contents("budgets") == Array("one\n".utf8))
        // A link at the name itself is refused for reading and replaced (not followed) on writing.
        unlink(dir.path + "/budgets")
        plant(kind, at: dir.path + "/budgets", victim: victim)
        #expect(throws: DirectoryHandle.Refusal.self) { try handle.readSmall("budgets", limit: 1 << 10) }
        try handle.replace("budgets", with: Array("two\n".utf8))
        #expect(contents(victim) == Self.victimBytes)
        #expect(dir.contents("budgets") == Array("two\n".utf8))
    }

    /// Found by review: `rm -r` of the whole directory, which the history then made anew,
    /// left the lock on the deleted one, and a second exporter could lock the new one. The
    /// store takes the lock of the new directory, or writes nothing there.
    @Test func aDirectoryRemovedAndMadeAgainIsLockedAgainOrNotWritten() throws {
        let dir = "/tmp/rx-lock-rmr-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        func removeTree() {
            unlink(dir + "/.lock")
            for name in (try? HistoryStore.listFiles(in: dir).map(\.name)) ?? [] { unlink(dir + "/" + name) }
            rmdir(dir)
        }
        defer { removeTree() }
        guard case .success = DirectoryLock.acquire(dir) else {
            Issue.record("first lock refused")
            return
        }
        removeTree()
        var store = HistoryStore(config: HistoryConfig(directory: dir))
        _ = try store.open(now: 1_000)
        guard case .failure(.held) = DirectoryLock.acquire(dir) else {
            Issue.record("a second writer could lock the directory made anew")
            return
        }
        // Another process was first to lock the new directory: this one writes nothing there.
        store.close()
        removeTree()
        #expect(mkdir(dir, 0o755) == 0)
        let other = open(dir, O_RDONLY | O_DIRECTORY)
        defer { close(other) }
        #expect(flock(other, LOCK_EX | LOCK_NB) == 0)
        var second = HistoryStore(config: HistoryConfig(directory: dir))
        #expect(throws: HistoryStoreError.self) { _ = try second.open(now: 2_000) }
    }

    /// Found by a hostile review (#41): a cleanup job removed `.lock` and a second exporter
    /// wrote the same files. The lock is on the directory itself.
    @Test func removingTheLockFileDoesNotReleaseTheLock() throws {
        let dir = "/tmp/rx-lock-rm-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer {
            unlink(dir + "/.lock")
            rmdir(dir)
        }
        guard case .success = DirectoryLock.acquire(dir) else {
            Issue.record("first lock refused")
            return
        }
        #expect(unlink(dir + "/.lock") == 0)
        guard case .failure(let failure) = DirectoryLock.acquire(dir) else {
            Issue.record("a second lock was granted once .lock was removed")
            return
        }
        #expect(failure == .held(pid: nil))
        // An older exporter, which locks only `.lock`, and this one exclude each other.
        let old = dir + "-old"
        #expect(mkdir(old, 0o700) == 0)
        let fd = open(old + "/.lock", O_RDWR | O_CREAT, 0o644)
        defer {
            close(fd)
            unlink(old + "/.lock")
            rmdir(old)
        }
        #expect(fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
        guard case .failure(.held) = DirectoryLock.acquire(old) else {
            Issue.record("a lock was granted beside an older exporter's")
            return
        }
    }
}
