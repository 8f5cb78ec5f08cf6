import CShim
import Foundation
import Glibc
import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// A unix datagram socket in the abstract namespace that nobody reads: `fill()` queues datagrams
/// until the kernel says there is no room, as a hung systemd (or a hostile `NOTIFY_SOCKET`) would.
final class UnreadNotifySocket: Sendable {
    let fd: Int32
    let name = "rx-notify-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    var environment: [String: String] { ["NOTIFY_SOCKET": "@" + name] }

    init() throws {
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: \(errno)") }
        var (address, length) = Self.address(name)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else { throw TestFailure("bind: \(errno)") }
    }

    static func address(_ name: String) -> (sockaddr_un, socklen_t) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = [0] + Array(name.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        return (address, socklen_t(MemoryLayout<sa_family_t>.size + bytes.count))
    }

    /// Queues datagrams (a bounded number) until a send would block; how many went in.
    @discardableResult
    func fill() throws -> Int {
        let sender = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(sender) }
        var (address, length) = Self.address(name)
        let payload = [UInt8](repeating: 0x41, count: 1024)
        for count in 0..<100_000 {
            let sent = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                    payload.withUnsafeBytes {
                        sendto(sender, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT), sa, length)
                    }
                }
            }
            if sent < 0 {
                guard errno == EAGAIN else { throw TestFailure("filling: errno \(errno)") }
                return count
            }
        }
        throw TestFailure("the socket never filled")
    }

    /// The next datagram queued, if any.
    func receive() -> String? {
        var buffer = [UInt8](repeating: 0, count: 2048)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        return n < 0 ? nil : String(decoding: buffer[0..<n], as: UTF8.self)
    }

    deinit { close(fd) }
}

@Suite struct SystemdNotifyTests {
    @Test func aMessageReachesASocketWithRoom() throws {
        let listener = try UnreadNotifySocket()
        #expect(SystemdNotify.send("READY=1", environment: listener.environment))
        #expect(listener.receive() == "READY=1")
        #expect(!SystemdNotify.send("READY=1", environment: [:]))
    }

    /// Found by a hostile review (#41): `STOPPING=1` to a socket nobody reads blocked forever.
    @Test func aSocketNobodyReadsCostsAtMostThePatience() throws {
        let listener = try UnreadNotifySocket()
        #expect(try listener.fill() > 0)
        let clock = ContinuousClock()
        for state in ["READY=1", "RELOADING=1", "STOPPING=1", "STATUS=stuck"] {
            let start = clock.now
            #expect(!SystemdNotify.send(state, environment: listener.environment, patience: .milliseconds(50)))
            #expect(clock.now - start < .seconds(1), "\(state)")
        }
    }

    /// A reader that drains within the patience gets the message: a full queue is waited on, briefly.
    @Test func roomMadeWithinThePatienceIsUsed() throws {
        let listener = try UnreadNotifySocket()
        let queued = try listener.fill()
        let drain = Thread {
            usleep(20_000)
            for _ in 0..<queued { _ = listener.receive() }
        }
        drain.start()
        #expect(SystemdNotify.send("STOPPING=1", environment: listener.environment, patience: .seconds(5)))
    }
}

/// The built binary with a `NOTIFY_SOCKET` that nobody reads: SIGTERM still ends it promptly.
@Suite(.serialized) struct SystemdNotifyEndToEndTests {
    @Test func sigtermEndsTheExporterWhenTheNotifySocketIsFull() throws {
        let listener = try UnreadNotifySocket()
        try listener.fill()
        let exporter = try ExporterProcess(
            ["--web.listen-address=127.0.0.1:0", "--probe.tcp=127.0.0.1:9"], environment: listener.environment)
        try exporter.waitListening()
        #expect(try exporter.get("/-/healthy").status == 200)
        let (status, seconds) = try exporter.stop(signal: SIGTERM, timeout: 10)
        #expect(status == 0)
        #expect(seconds < 3)
    }
}
