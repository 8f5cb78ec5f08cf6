import Foundation
import Glibc
import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// A tmpfs mounted on a scratch directory for one test (we are root), always unmounted.
final class ScratchMount {
    let dir = ScratchDirectory()
    var path: String { dir.path }

    init(options: String) throws {
        guard shell("mount -t tmpfs -o \(options) tmpfs \(dir.path)") == 0 else {
            throw TestFailure("cannot mount a tmpfs (needs root)")
        }
    }

    func remount(_ options: String) -> Bool { shell("mount -o remount,\(options) \(dir.path)") == 0 }

    // Lazily: a history file still open (the writer under test) made a plain umount fail with
    // EBUSY, and every run left a read-only tmpfs on /tmp.
    deinit { _ = shell("umount -l \(dir.path)") }
}

/// Log lines captured from a `Logger` writing to a temporary file.
final class CapturedLog {
    let path = NSTemporaryDirectory() + "rx-log-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    let fd: Int32
    init() { fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
    deinit {
        close(fd)
        unlink(path)
    }
    var logger: Logger { Logger(level: .info, fd: fd) }
    var text: String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
    func count(_ s: String) -> Int { text.components(separatedBy: s).count - 1 }
}

/// The writer under failing disks: a full tmpfs, a read-only mount, a queue that cannot drain.
@Suite(.serialized) struct HistoryWriterTests {
    static let t0 = 1_767_225_600.0

    static func value(_ metrics: String, _ name: String) -> Double? {
        for line in metrics.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Double(line.dropFirst(name.count + 1))
        }
        return nil
    }

    @Test func aFullDiskIsCountedLoggedOnceAndNeverTearsALine() throws {
        let mount = try ScratchMount(options: "size=64k")
        let log = CapturedLog()
        let registry = MetricsRegistry()
        let clock = TestWallClock(Self.t0)
        let history = HistoryService.start(
            HistoryConfig(directory: mount.path), interval: .seconds(1), registry: registry,
            logger: log.logger, now: clock.closure)
        // About 500 bytes a round: 64 KiB fills after ~130 rounds.
        for i in 0..<400 {
            clock.set(Self.t0 + Double(i))
            history.writer.roundCompleted(status(at: clock.now, Verdict(.full), since: Self.t0, round: i))
        }
        #expect(history.writer.flush())
        var m = registry.renderString()
        let errors = Self.value(m, "reachability_history_write_errors_total") ?? 0
        let dropped = Self.value(m, "reachability_history_dropped_records_total") ?? 0
        let written = Self.value(m, "reachability_history_records_written_total") ?? 0
        #expect(errors > 100 && dropped == errors, "\(m)")
        #expect(written + dropped == 401)  // the start record too
        #expect(log.count("history write failed") == 1, "\(log.text)")
        // Every line on disk is complete and valid: short writes were taken back.
        var rounds = 0
        let stats = try HistoryReader.read(directory: mount.path) { if case .round = $0 { rounds += 1 } }
        #expect(stats.corrupt == 0)
        #expect(Double(rounds) == written - 1)
        #expect(
            Self.value(m, "reachability_history_bytes")
                == Double(mount.dir.files.reduce(0) { $0 + mount.dir.contents($1).count }))

        // Space comes back: writes recover, and that is logged once.
        #expect(mount.remount("size=1m"))
        history.writer.roundCompleted(status(at: Self.t0 + 500, Verdict(.full), since: Self.t0, round: 500))
        #expect(history.writer.flush())
        m = registry.renderString()
        #expect(Self.value(m, "reachability_history_records_written_total") == written + 1)
        #expect(log.count("history writes recovered") == 1)
        history.stop()
    }

    @Test func aReadOnlyDirectoryKeepsTheExporterGoing() throws {
        let mount = try ScratchMount(options: "size=1m")
        // History from an earlier run, then the directory turns read-only.
        try HistoryScenario.small.write(to: mount.path)
        #expect(mount.remount("ro"))
        let log = CapturedLog()
        let registry = MetricsRegistry()
        let clock = TestWallClock(HistoryScenario.small.end + 60)
        let history = HistoryService.start(
            HistoryConfig(directory: mount.path), interval: .seconds(60), registry: registry,
            logger: log.logger, now: clock.closure)
        // Reading still works: the state is restored and the gauges seeded.
        #expect(history.lastRound?.overall == Verdict(.full))
        #expect(history.loaded.rounds > 0)
        for i in 0..<5 {
            history.writer.roundCompleted(status(at: clock.now + Double(i), Verdict(.full), since: 0, round: i))
        }
        #expect(history.writer.flush())
        let m = registry.renderString()
        #expect((Self.value(m, "reachability_history_write_errors_total") ?? 0) >= 6)
        #expect(Self.value(m, "reachability_history_dropped_records_total") == 6)
        #expect(m.contains("reachability_availability_ratio{window=\"1d\"} "))
        #expect(log.count("history write failed") == 1, "\(log.text)")
        #expect(log.text.contains("Read-only file system"))
        history.stop()
    }

    @Test func aVanishedDirectoryIsNoticedAndRecreated() throws {
        let dir = ScratchDirectory()
        let log = CapturedLog()
        let registry = MetricsRegistry()
        let history = HistoryService.start(
            HistoryConfig(directory: dir.path + "/sub"), interval: .seconds(1), registry: registry, logger: log.logger)
        history.writer.roundCompleted(status(at: Self.t0, Verdict(.full), since: Self.t0))
        #expect(history.writer.flush())
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path + "/sub").count == 1)
        try FileManager.default.removeItem(atPath: dir.path + "/sub")
        // Written into the deleted file; the sync notices, counts and logs it.
        history.writer.roundCompleted(status(at: Self.t0 + 1, Verdict(.full), since: Self.t0))
        #expect(history.writer.flush())
        #expect(Self.value(registry.renderString(), "reachability_history_write_errors_total") == 1)
        #expect(log.count("history write failed") == 1, "\(log.text)")
        // The next record recreates the directory and a file.
        history.writer.roundCompleted(status(at: Self.t0 + 2, Verdict(.full), since: Self.t0))
        #expect(history.writer.flush())
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path + "/sub")
        #expect(files.count == 1)
        #expect(log.count("history writes recovered") == 1)
        history.stop()
    }

    @Test func theQueueIsBoundedAndNeverBlocks() throws {
        let dir = ScratchDirectory()
        var config = HistoryConfig(directory: dir.path)
        config.queueCapacity = 4
        let log = CapturedLog()
        let registry = MetricsRegistry()
        let metrics = HistoryMetrics(registry: registry)
        // Not started: nothing drains the queue.
        let writer = HistoryWriter(config: config, interval: .seconds(1), metrics: metrics, logger: log.logger)
        for i in 0..<10 { writer.append(roundRecord(Self.t0 + Double(i))) }
        #expect(Self.value(registry.renderString(), "reachability_history_dropped_records_total") == 6)
        #expect(log.count("history queue full") == 1)
        writer.start()  // the start record is dropped too: the queue is still full
        #expect(writer.flush())
        #expect(Self.value(registry.renderString(), "reachability_history_records_written_total") == 4)
        writer.append(roundRecord(Self.t0 + 20))
        writer.stop()
        let lines = dir.files.flatMap { dir.lines($0) }.filter { !$0.isEmpty }
        #expect(lines.count == 6)  // four queued rounds, the later round, the stop record
        #expect(lines.last?.contains("\"type\":\"stop\"") == true)
    }
}

extension HistoryScenario {
    /// Two days at a 60 s interval: small enough for a tmpfs.
    static var small: HistoryScenario {
        var s = HistoryScenario()
        s.days = 2
        s.interval = 60
        s.probes = 0
        return s
    }
}
