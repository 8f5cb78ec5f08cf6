import CShim
import Glibc
import Testing

@testable import Reachability

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
