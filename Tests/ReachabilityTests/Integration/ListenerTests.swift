import CShim
import Foundation
import Glibc
import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// How the exporter gets its sockets and tells systemd it is ready: repeated
/// `--web.listen-address`, `--web.systemd-socket` under the real `systemd-socket-activate`, and
/// the sd_notify datagrams `Type=notify` waits for. Loopback probes only.
@Suite struct ListenerTests {
    static let probe = ["--no-path.monitor", "--probe.tcp=127.0.0.1:9", "--probe.trust-local-targets"]

    /// The `address=` of every `listening` line logged so far.
    static func listening(_ exporter: ExporterProcess) -> [String] {
        exporter.stderr.split(separator: "\n").filter { $0.contains("msg=listening") }.compactMap { line in
            line.split(separator: " ").first { $0.hasPrefix("address=") }.map { String($0.dropFirst(8)) }
        }
    }

    @Test func everyListenAddressGivenServes() throws {
        let exporter = try ExporterProcess(
            ["--web.listen-address=127.0.0.1:0", "--web.listen-address=[::1]:0"] + Self.probe)
        _ = try exporter.waitListening()
        try exporter.waitForLog("address=[::1]:")
        let addresses = Self.listening(exporter)
        #expect(addresses.count == 2, "\(addresses)")
        for address in addresses {
            let colon = try #require(address.lastIndex(of: ":"))
            let host = String(address[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            let port = try #require(UInt16(address[address.index(after: colon)...]))
            let client = try RawTCPClient(port: port, host: host)
            client.send("GET /-/healthy HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(client.read().text.hasPrefix("HTTP/1.1 200"), "\(address)")
        }
        #expect(try exporter.stop().status == 0)
    }

    @Test func aBadOrConflictingListenerIsAUsageError() throws {
        let bad = try ExporterProcess.run(
            ["--web.listen-address=127.0.0.1:0", "--web.listen-address=nowhere"] + Self.probe)
        #expect(bad.status == 64 && bad.stderr.contains("needs a port"), "\(bad.stderr)")
        let both = try ExporterProcess.run(["--web.systemd-socket", "--web.listen-address=127.0.0.1:0"] + Self.probe)
        #expect(both.status == 64 && both.stderr.contains("exclude each other"), "\(both.stderr)")
        let none = try ExporterProcess.run(["--web.systemd-socket"] + Self.probe)
        #expect(none.status == 64 && none.stderr.contains("systemd passed no socket"), "\(none.stderr)")
    }

    /// A unix datagram socket standing in for systemd's notification socket.
    final class NotifySocket {
        let path = "/tmp/rx-notify-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        let fd: Int32

        init() throws {
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (i, b) in path.utf8.enumerated() { raw[i] = b }
            }
            let rc = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            guard fd >= 0, rc == 0 else { throw TestFailure("cannot bind \(path): \(Errno.current)") }
        }

        /// The next datagram, waiting at most `timeoutMS`.
        func receive(timeoutMS: Int32 = 10_000) -> String? {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, timeoutMS) == 1 else { return nil }
            var buffer = [UInt8](repeating: 0, count: 512)
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            return n > 0 ? String(decoding: buffer[0..<n], as: UTF8.self) : nil
        }

        deinit {
            close(fd)
            unlink(path)
        }
    }

    @Test func readyAndStoppingAreToldToSystemd() throws {
        let notify = try NotifySocket()
        let exporter = try ExporterProcess(
            ["--web.listen-address=127.0.0.1:0"] + Self.probe, environment: ["NOTIFY_SOCKET": notify.path])
        #expect(notify.receive() == "READY=1")
        let port = try exporter.waitListening()
        let client = try RawTCPClient(port: port)
        client.send("GET /-/healthy HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(client.read().text.hasPrefix("HTTP/1.1 200"), "listening before READY=1")
        kill(exporter.process.processIdentifier, SIGTERM)
        #expect(notify.receive() == "STOPPING=1")
        #expect(try exporter.stop().status == 0)
    }

    /// systemd's own socket activation tool binds the port, waits for a connection, then starts
    /// the exporter with the socket (LISTEN_FDS): that first connection is served.
    @Test func servesTheSocketSystemdPasses() throws {
        let tool = "/usr/bin/systemd-socket-activate"
        guard FileManager.default.isExecutableFile(atPath: tool) else {
            throw TestFailure("\(tool) is missing (Debian's systemd package); .ci/run installs it")
        }
        let listener = try TCPTestListener()
        let port = listener.address.port
        listener.stop()  // a free port for the tool to bind
        let activator = Process()
        activator.executableURL = URL(fileURLWithPath: tool)
        activator.arguments =
            [
                "--listen=127.0.0.1:\(port)", "--setenv=REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1",
                ExporterProcess.binaryPath, "--web.systemd-socket",
            ] + Self.probe
        activator.standardError = FileHandle(forWritingAtPath: "/dev/null")
        activator.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        try activator.run()
        defer {
            if activator.isRunning { kill(activator.processIdentifier, SIGKILL) }
            activator.waitUntilExit()
        }
        var answer = ""
        for _ in 0..<100 where answer.isEmpty {
            if let client = try? RawTCPClient(port: port, timeoutMS: 5000) {
                client.send("GET /-/healthy HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                answer = client.read().text
            } else {
                usleep(50_000)
            }
        }
        #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer)")
        kill(activator.processIdentifier, SIGTERM)  // the tool exec'd the exporter: same pid
        for _ in 0..<200 where activator.isRunning { usleep(50_000) }
        #expect(!activator.isRunning && activator.terminationStatus == 0)
    }
}
