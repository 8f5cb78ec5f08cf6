import CShim
import Glibc
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

@Suite struct PosixTests {
    @Test func numericAddresses() throws {
        let v4 = try #require(SocketAddress(ip: "127.0.0.1", port: 8080))
        #expect(v4.description == "127.0.0.1:8080")
        #expect(v4.ipFamily == .ipv4)
        let v6 = try #require(SocketAddress(ip: "[::1]", port: 443))
        #expect(v6.description == "[::1]:443")
        #expect(v6.addressBytes.count == 16)
        #expect(SocketAddress(ip: "localhost") == nil)
        #expect(SocketAddress(ip: "1.2.3") == nil)
    }

    /// Found by a hostile review: a configuration path that is a FIFO blocked `open()` forever.
    @Test func aFIFOIsRefusedAtOnceNotWaitedOn() throws {
        let path = "/tmp/rx-fifo-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        #expect(mkfifo(path, 0o600) == 0)
        defer { unlink(path) }
        let clock = ContinuousClock()
        let start = clock.now
        #expect(throws: Errno(EINVAL)) { try FileContents.read(path, limit: 1 << 20) }
        #expect(throws: Errno(EINVAL)) { try FileIO.openRead(path) }
        do throws(ConfigError) {
            _ = try ConfigLoader.load(path: path)
            Issue.record("a FIFO loaded")
        } catch {
            #expect(error.description.contains("not a regular file"), "\(error)")
        }
        #expect(clock.now - start < .seconds(1))
    }

    /// Found by a hostile review: two exporters on one history directory, unnoticed.
    @Test func aHistoryDirectoryIsLockedForOneProcess() throws {
        let dir = "/tmp/rx-lock-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer {
            unlink(dir + "/.lock")
            rmdir(dir)
        }
        guard case .success = DirectoryLock.acquire(dir) else {
            Issue.record("first lock refused")
            return
        }
        // flock belongs to the open file: a second open, even in this process, is refused.
        guard case .failure(let failure) = DirectoryLock.acquire(dir) else {
            Issue.record("second lock granted")
            return
        }
        #expect(failure == .held(pid: Int(getpid())))
        // Something else at .lock (a directory, a symlink) fails closed, not open.
        let other = dir + "-x"
        #expect(mkdir(other, 0o700) == 0 && mkdir(other + "/.lock", 0o700) == 0)
        defer {
            rmdir(other + "/.lock")
            rmdir(other)
        }
        guard case .failure(.failed) = DirectoryLock.acquire(other) else {
            Issue.record("a directory at .lock was taken as a lock")
            return
        }
    }

    @Test func jsonEscapesEveryControlCharacter() {
        var w = JSONWriter()
        w.value("a\u{1B}b\u{7F}c\u{9B}d\u{A0}é\u{85}")
        #expect(String(decoding: w.bytes, as: UTF8.self) == #""a\u001bb\u007fc\u009bd\#u{A0}é\u0085""#)
        #expect(Logger.jsonString("\u{9B}x") == #""\u009bx""#)
        // Line separators too: editors, log viewers and JavaScript end a line there.
        #expect(Logger.jsonString("a\u{2028}b\u{2029}") == #""a\u2028b\u2029""#)
        #expect(Logger.logfmtValue(.string("a\u{2028}b")) == #""a\u2028b""#)
    }

    @Test func controlCharactersAreEscapedForTerminals() {
        #expect("plain – text".escapingControlCharacters == "plain – text")
        #expect(
            "302 Fo\u{1B}[31mund\u{0}\n\u{7F}\u{9B}".escapingControlCharacters
                == "302 Fo\\x1B[31mund\\x00\\x0A\\x7F\\x9B")
        #expect("a\u{1B}\nb\u{2028}".escapingControlCharactersButNewlines == "a\\x1B\nb\\x2028")
        #expect(
            UsageError("invalid value for flag '--x': \u{1B}[2J").message == "invalid value for flag '--x': \\x1B[2J")
        #expect(ProbeEndpoint.quoted("a\u{85}\u{2028}\u{1}") == #""a\u0085\u2028\x01""#)
    }

    @Test func reactorTimesOutAndSeesReadable() async throws {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        let clock = ContinuousClock()
        let start = clock.now
        let r1 = await Reactor.shared.waitReadable(fds[0], deadline: start + .milliseconds(50))
        #expect(r1 == .timedOut)
        #expect(clock.now - start >= .milliseconds(50))
        _ = write(fds[1], "x", 1)
        let r2 = await Reactor.shared.waitReadable(fds[0], deadline: clock.now + .seconds(5))
        guard case .ready(let ev) = r2 else {
            Issue.record("expected ready, got \(r2)")
            return
        }
        #expect(ev & epollInBits != 0)
    }

    @Test func reactorCancellation() async {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        let fd = fds[0]
        let task = Task { await Reactor.shared.waitReadable(fd, deadline: .now + .seconds(30)) }
        task.cancel()
        #expect(await task.value == .cancelled)
    }

    @Test func resolverNumericAndInvalid() async throws {
        let a = try await Resolver.resolve("::1", port: 53, deadline: .now + .seconds(1))
        #expect(a.map(\.description) == ["[::1]:53"])
        await #expect(throws: Resolver.Failure.self) {
            _ = try await Resolver.resolve("bad host!", deadline: .now + .seconds(1))
        }
        await #expect(throws: Resolver.Failure.self) {
            _ = try await Resolver.resolve("127.0.0.1", family: .ipv6, deadline: .now + .seconds(1))
        }
        let local = try await Resolver.resolve("localhost", port: 80, family: .ipv4, deadline: .now + .seconds(2))
        #expect(local.contains { $0.description == "127.0.0.1:80" })
    }
}

private let epollInBits: UInt32 = 1
