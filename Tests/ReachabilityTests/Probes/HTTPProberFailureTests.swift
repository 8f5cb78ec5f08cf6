import CShim
import Glibc
import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// Hostile and broken servers: every case must end by its deadline with the right reason.
@Suite struct HTTPProberFailureTests {
    @Test func silentServerTimesOut() async throws {
        let timeout = Duration.milliseconds(400)
        let (r, elapsed, _) = try await probeLoopback(.silent, timeout: timeout)
        #expect(r.status == .failure)
        #expect(r.reason == .timeout, "\(r.detail)")
        #expect(elapsed >= timeout && elapsed < timeout + deadlineSlack)
        #expect(r.phases[.processing] != nil && r.phases[.transfer] == nil)  // waited, no byte came
    }

    @Test func slowDripTimesOut() async throws {
        let timeout = Duration.milliseconds(500)
        let drip = LoopbackHTTPBehavior.drip("HTTP/1.1 204 No Content\r\nServer: drip\r\n\r\n", intervalMS: 50)
        let (r, elapsed, _) = try await probeLoopback(drip, timeout: timeout)
        #expect(r.reason == .timeout, "\(r.detail)")
        #expect(elapsed >= timeout && elapsed < timeout + deadlineSlack)
    }

    @Test func endlessBodyEndsAtTheBoundNotTheDeadline() async throws {
        let timeout = Duration.seconds(8)
        let (web, elapsed, _) = try await probeLoopback(.endlessBody, timeout: timeout) {
            try HTTPProbeConfig(url: $0, method: .get, mode: .web)
        }
        #expect(web.status == .success, "\(web.detail)")
        #expect(web.http?.bodyBytes == 65_536)
        #expect(elapsed < .seconds(4))
        let (captive, elapsed2, _) = try await probeLoopback(.endlessBody, timeout: timeout) {
            try HTTPProbeConfig(url: $0, mode: .captive(.bodyContains("Success")), bodyLimit: 4096)
        }
        #expect(captive.status == .portal)
        #expect(captive.reason == .bodyMismatch)
        #expect(captive.detail.contains("4096 bytes (truncated)"))
        #expect(elapsed2 < .seconds(4))
    }

    @Test(arguments: [(400, 80, "more than 100 header fields"), (40, 2000, "exceeds 16384 bytes")])
    func hugeHeadIsTooLarge(fields: Int, valueBytes: Int, text: String) async throws {
        let (r, elapsed, _) = try await probeLoopback(.hugeHead(fields: fields, valueBytes: valueBytes))
        #expect(r.status == .failure)
        #expect(r.reason == .tooLarge)
        #expect(r.detail.contains(text), "\(r.detail)")
        #expect(elapsed < .seconds(5))
    }

    @Test func garbageIsProtocolError() async throws {
        let (r, _, _) = try await probeLoopback(.raw("SSH-2.0-OpenSSH_9.2p1 Debian\r\n"))
        #expect(r.reason == .protocolError, "\(r.detail)")
        let (empty, _, _) = try await probeLoopback(.raw(""))
        #expect(empty.reason == .protocolError)
        #expect(empty.detail.contains("before any response"))
    }

    @Test func resetIsReset() async throws {
        let (r, _, _) = try await probeLoopback(.reset)
        #expect(r.status == .failure)
        #expect(r.reason == .reset, "\(r.detail)")
    }

    @Test func closedPortIsRefused() async throws {
        let port = try closedPort()
        let prober = HTTPProber(try HTTPProbeConfig(url: "http://127.0.0.1:\(port)/"))
        let r = await prober.probe(deadline: .now + .seconds(5))
        #expect(r.reason == .refused, "\(r.detail)")
        #expect(r.address == "127.0.0.1")
        #expect(r.phases[.connect] != nil)
    }

    /// A full accept queue drops further SYNs, so the connect itself must time out.
    @Test func connectTimesOutOnAFullBacklog() async throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        let address = try #require(SocketAddress(ip: "127.0.0.1", port: 0))
        #expect(address.withSockAddr { bind(listener, $0, $1) } == 0)
        #expect(listen(listener, 0) == 0)
        let port = try boundPort(listener)
        // Fill the queue (backlog 0 admits one) with connections nobody accepts.
        var fillers: [Int32] = []
        defer { for fd in fillers { close(fd) } }
        for _ in 0..<2 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            fillers.append(fd)
            _ = try #require(SocketAddress(ip: "127.0.0.1", port: port)).withSockAddr { connect(fd, $0, $1) }
        }
        let timeout = Duration.milliseconds(500)
        let prober = HTTPProber(try HTTPProbeConfig(url: "http://127.0.0.1:\(port)/"))
        let clock = ContinuousClock()
        let start = clock.now
        let r = await prober.probe(deadline: start + timeout)
        let elapsed = start.duration(to: clock.now)
        #expect(r.reason == .timeout, "\(r.detail)")
        #expect(r.phases[.processing] == nil)
        #expect((r.phases[.connect] ?? .zero) >= .milliseconds(400))
        #expect(elapsed < timeout + deadlineSlack)
    }

    @Test func familyMismatchIsDNSFailure() async throws {
        let (r, _, _) = try await probeLoopback(.status(204)) { try HTTPProbeConfig(url: $0, family: .ipv6) }
        #expect(r.reason == .dns, "\(r.detail)")
    }

    private func closedPort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        let address = try #require(SocketAddress(ip: "127.0.0.1", port: 0))
        #expect(address.withSockAddr { bind(fd, $0, $1) } == 0)
        return try boundPort(fd)
    }

    private func boundPort(_ fd: Int32) throws -> UInt16 {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        #expect(rc == 0)
        return withUnsafePointer(to: &storage) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress($0, length: length).port }
        }
    }
}
