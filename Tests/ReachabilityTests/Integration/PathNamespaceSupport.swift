import CShim
import Dispatch
import Glibc
import Synchronization

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

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

    /// Runs `body` on a new thread that first entered this namespace (descriptors it opens
    /// stay in the namespace afterwards) and returns its result.
    func insideNamespace<T: Sendable>(_ body: @escaping @Sendable () -> Result<T, Errno>) throws -> T {
        let result = Mutex<Result<T, Errno>>(.failure(Errno(ETIMEDOUT)))
        let done = DispatchSemaphore(value: 0)
        let path = self.path
        startThread(name: "netns-helper") {
            let ns = open(path, O_RDONLY | O_CLOEXEC)
            if ns < 0 {
                result.withLock { $0 = .failure(.current) }
            } else if cshim_setns_net(ns) != 0 {
                result.withLock { $0 = .failure(.current) }
                Glibc.close(ns)
            } else {
                Glibc.close(ns)
                let value = body()
                result.withLock { $0 = value }
            }
            done.signal()
        }
        guard done.wait(timeout: .now() + 5) == .success else { throw Errno(ETIMEDOUT) }
        return try result.withLock { $0 }.get()
    }

    /// Opens `/dev/net/tun` inside the namespace and attaches to the persistent tun device
    /// `device`, which gives it a carrier (as a VPN client does). Close the returned
    /// descriptor to drop the carrier.
    func attachTun(_ device: String) throws -> Int32 {
        try insideNamespace {
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

    /// A blocking NETLINK_ROUTE socket inside the namespace, for changes made without spawning
    /// a process (so measured latencies are the kernel's and the monitor's alone).
    func routeClient() throws -> PathTestRouteClient {
        let fd = try insideNamespace { () -> Result<Int32, Errno> in
            let fd = socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), NETLINK_ROUTE)
            return fd >= 0 ? .success(fd) : .failure(.current)
        }
        return PathTestRouteClient(fd: fd)
    }
}

/// Adds and deletes IPv4 addresses with raw rtnetlink requests and waits for the kernel's ack.
final class PathTestRouteClient {
    private let fd: Int32
    private var sequence: UInt32 = 1000

    init(fd: Int32) { self.fd = fd }
    deinit { Glibc.close(fd) }

    func setAddress(_ address: [UInt8], prefixLength: UInt8, interfaceIndex: Int, present: Bool) throws {
        sequence += 1
        var body: [UInt8] = [UInt8(AF_INET), prefixLength, 0, 0]
        withUnsafeBytes(of: UInt32(interfaceIndex)) { body += $0 }
        for type: UInt16 in [2, 1] {  // IFA_LOCAL, IFA_ADDRESS
            withUnsafeBytes(of: UInt16(8)) { body += $0 }
            withUnsafeBytes(of: type) { body += $0 }
            body += address
        }
        let flags: UInt16 = present ? 0x1 | 0x4 | 0x400 | 0x200 : 0x1 | 0x4  // REQUEST|ACK(|CREATE|EXCL)
        var message: [UInt8] = []
        withUnsafeBytes(of: UInt32(16 + body.count)) { message += $0 }
        withUnsafeBytes(of: UInt16(present ? 20 : 21)) { message += $0 }  // RTM_NEWADDR / RTM_DELADDR
        withUnsafeBytes(of: flags) { message += $0 }
        withUnsafeBytes(of: sequence) { message += $0 }
        withUnsafeBytes(of: UInt32(0)) { message += $0 }
        message += body
        guard message.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, 0) }) == message.count else {
            throw Errno.current
        }
        var reply = [UInt8](repeating: 0, count: 4096)
        let n = reply.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { throw Errno.current }
        let ack = NetlinkDecoder.decode(Array(reply[0..<n])).first { $0.header.sequence == sequence }
        guard case .error(let code)? = ack?.payload else { throw Errno(EPROTO) }
        if code != 0 { throw Errno(code) }
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
    func first(
        from: Int = 0, timeout: Duration = .seconds(5),
        where predicate: @escaping @Sendable (PathSnapshot) -> Bool
    ) async -> Entry? {
        await withCheckedContinuation { (continuation: CheckedContinuation<Entry?, Never>) in
            enum Now {
                case found(Entry?)
                case waiting(Int)
            }
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
