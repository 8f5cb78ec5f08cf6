import CShim
import Dispatch
import Glibc
import Synchronization
@testable import Reachability

/// A network namespace created for one test (`rx-pm-<pid>-<n>`); `delete()` in a `defer`.
/// Everything the tests configure lives inside it, so no packet can leave the machine.
final class PathTestNamespace {
    private static let counter = Atomic<Int>(0)
    let name: String
    var path: String { "/run/netns/\(name)" }

    init() throws {
        let n = Self.counter.add(1, ordering: .relaxed).newValue
        name = "rx-pm-\(getpid())-\(n)"
        try PathTestCommand.run(["ip", "netns", "add", name])
    }

    /// Runs `ip -n <ns> <command>` (words split on spaces) and throws if it fails.
    func ip(_ command: String) throws {
        try PathTestCommand.run(["ip", "-n", name] + command.split(separator: " ").map(String.init))
    }

    /// Runs many `ip` commands in one process (`ip -n <ns> -batch <file>`).
    func batch(_ commands: [String]) throws {
        let file = "/tmp/\(name)-batch.txt"
        let text = commands.joined(separator: "\n") + "\n"
        let fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Errno.current }
        _ = text.withCString { write(fd, $0, strlen($0)) }
        Glibc.close(fd)
        defer { unlink(file) }
        try PathTestCommand.run(["ip", "-n", name, "-batch", file])
    }

    func delete() {
        try? PathTestCommand.run(["ip", "netns", "del", name])
    }

    /// Opens `/dev/net/tun` from a thread inside the namespace and attaches to the persistent
    /// tun device `device`, which gives it a carrier (as a VPN client does). Close the
    /// returned descriptor to drop the carrier.
    func attachTun(_ device: String) throws -> Int32 {
        let result = Mutex<Result<Int32, Errno>>(.failure(Errno(0)))
        let done = DispatchSemaphore(value: 0)
        let path = self.path
        startThread(name: "tun-attach") {
            result.withLock { $0 = Self.openTun(device, namespace: path) }
            done.signal()
        }
        guard done.wait(timeout: .now() + 5) == .success else { throw Errno(ETIMEDOUT) }
        return try result.withLock { $0 }.get()
    }

    private static func openTun(_ device: String, namespace: String) -> Result<Int32, Errno> {
        let ns = open(namespace, O_RDONLY | O_CLOEXEC)
        guard ns >= 0 else { return .failure(.current) }
        defer { Glibc.close(ns) }
        guard cshim_setns_net(ns) == 0 else { return .failure(.current) }
        let fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return .failure(.current) }
        var request = ifreq()
        withUnsafeMutableBytes(of: &request.ifr_ifrn.ifrn_name) { name in
            for (i, byte) in device.utf8.prefix(15).enumerated() { name[i] = byte }
        }
        request.ifr_ifru.ifru_flags = 0x0001 | 0x1000  // IFF_TUN | IFF_NO_PI
        let tunSetIFF: UInt = 0x4004_54ca  // _IOW('T', 202, int)
        guard ioctl(fd, tunSetIFF, &request) == 0 else {
            let error = Errno.current
            Glibc.close(fd)
            return .failure(error)
        }
        return .success(fd)
    }
}

/// Spawns a command (stdout to /dev/null, stderr inherited) and waits for it.
enum PathTestCommand {
    struct Failed: Error, CustomStringConvertible {
        var command: [String]
        var status: Int32
        var description: String { "\(command.joined(separator: " ")) exited with \(status)" }
    }

    static func run(_ command: [String]) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        let argv = command.map { strdup($0) } + [nil]
        let envp = [strdup("PATH=/usr/sbin:/usr/bin:/sbin:/bin"), nil]
        defer { for p in argv + envp { free(p) } }
        var pid = pid_t()
        let rc = posix_spawnp(&pid, command[0], &actions, nil, argv, envp)
        guard rc == 0 else { throw Errno(rc) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exit = (status >> 8) & 0xff
        guard status & 0x7f == 0, exit == 0 else { throw Failed(command: command, status: status) }
    }
}

/// Consumes one `updates()` stream and remembers every snapshot with its arrival time, so a
/// test can await "the first snapshot after mark N that satisfies P" with a deadline.
final class PathSnapshotRecorder: Sendable {
    struct Entry: Sendable {
        let snapshot: PathSnapshot
        let at: ContinuousClock.Instant
    }

    private struct Waiter {
        let from: Int
        let predicate: @Sendable (PathSnapshot) -> Bool
        let continuation: CheckedContinuation<Entry?, Never>
    }

    private struct State {
        var entries: [Entry] = []
        var waiters: [Int: Waiter] = [:]
        var nextID = 0
        var ended = false
    }

    private let state = Mutex(State())

    init(_ stream: AsyncStream<PathSnapshot>) {
        Task { [self] in
            for await snapshot in stream { record(snapshot) }
            end()
        }
    }

    var count: Int { state.withLock { $0.entries.count } }
    var ended: Bool { state.withLock { $0.ended } }
    var latest: PathSnapshot? { state.withLock { $0.entries.last?.snapshot } }
    var snapshots: [PathSnapshot] { state.withLock { $0.entries.map(\.snapshot) } }

    /// The first entry at index `from` or later that satisfies `predicate`; nil after `timeout`
    /// or when the stream ends without one.
    func first(from: Int = 0, timeout: Duration = .seconds(5),
               where predicate: @escaping @Sendable (PathSnapshot) -> Bool) async -> Entry? {
        await withCheckedContinuation { (continuation: CheckedContinuation<Entry?, Never>) in
            enum Now { case found(Entry?), waiting(Int) }
            let now: Now = state.withLock { s in
                if let hit = s.entries.dropFirst(from).first(where: { predicate($0.snapshot) }) { return .found(hit) }
                if s.ended { return .found(nil) }
                let id = s.nextID
                s.nextID += 1
                s.waiters[id] = Waiter(from: from, predicate: predicate, continuation: continuation)
                return .waiting(id)
            }
            switch now {
            case .found(let entry): continuation.resume(returning: entry)
            case .waiting(let id):
                Task { [self] in
                    try? await Task.sleep(for: timeout)
                    state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(returning: nil)
                }
            }
        }
    }

    /// Waits until the stream has ended (after `stop()`); false on timeout.
    func waitForEnd(timeout: Duration = .seconds(5)) async -> Bool {
        _ = await first(from: Int.max, timeout: timeout) { _ in false }
        return ended
    }

    private func record(_ snapshot: PathSnapshot) {
        let entry = Entry(snapshot: snapshot, at: .now)
        let ready: [Waiter] = state.withLock { s in
            s.entries.append(entry)
            let index = s.entries.count - 1
            let hits = s.waiters.filter { index >= $0.value.from && $0.value.predicate(snapshot) }
            for id in hits.keys { s.waiters[id] = nil }
            return Array(hits.values)
        }
        for waiter in ready { waiter.continuation.resume(returning: entry) }
    }

    private func end() {
        let all: [Waiter] = state.withLock { s in
            s.ended = true
            defer { s.waiters = [:] }
            return Array(s.waiters.values)
        }
        for waiter in all { waiter.continuation.resume(returning: nil) }
    }
}
