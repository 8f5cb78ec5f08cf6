import Foundation
import Glibc
import ReachabilityExporter
import ReachabilityVerdict

/// The built `reachability_exporter` binary run as a child process, for end-to-end tests.
///
/// Traffic rule: every launch sets `REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS=1`, so an
/// exporter started without explicit loopback probe targets fails instead of probing the public
/// default endpoints.
package final class ExporterProcess {
    package let process = Process()
    package let stderrPath: String
    package private(set) var port: UInt16 = 0

    /// The binary beside the test bundle in the build directory.
    package static var binaryPath: String {
        let exe =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        // Inside an .xctest bundle the executable sits one or more levels down.
        while dir.path != "/"
            && !FileManager.default.fileExists(atPath: dir.appendingPathComponent("reachability_exporter").path)
        {
            dir = dir.deletingLastPathComponent()
        }
        return dir.appendingPathComponent("reachability_exporter").path
    }

    package init(_ args: [String], environment: [String: String] = [:]) throws {
        ignoreBrokenPipes()  // a child that exits early must fail the test, not kill the run
        stderrPath = NSTemporaryDirectory() + "rx-stderr-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).log"
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: Self.binaryPath)
        process.arguments = args
        var env = ProcessInfo.processInfo.environment
        env["REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS"] = "1"
        for (k, v) in environment { env[k] = v }
        process.environment = env
        process.standardError = FileHandle(forWritingAtPath: stderrPath)
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
    }

    /// Runs the binary to completion (bounded by `timeout`) and returns exit status, stdout and stderr.
    package static func run(
        _ args: [String], timeout: Double = 30, environment: [String: String] = [:],
        executable: String? = nil, prefix: [String] = []
    ) throws -> (status: Int32, stdout: String, stderr: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable ?? binaryPath)
        p.arguments = prefix + args
        var env = ProcessInfo.processInfo.environment
        env["REACHABILITY_EXPORTER_REFUSE_DEFAULT_TARGETS"] = "1"
        for (k, v) in environment { env[k] = v }
        p.environment = env
        let out = Pipe()
        let err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let deadline = Date().addingTimeInterval(timeout)
        while p.isRunning && Date() < deadline { usleep(10_000) }
        if p.isRunning {
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            throw TestFailure("\(args) did not finish in \(timeout) s")
        }
        let o = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let e = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (p.terminationStatus, o, e)
    }

    package var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    /// Waits for the "listening" log line and remembers the bound port.
    @discardableResult
    package func waitListening(timeout: Double = 20) throws -> UInt16 {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            // Both log formats: `msg=listening address=H:P` and `"msg":"listening","address":"H:P"`.
            for line in stderr.split(separator: "\n")
            where line.contains("msg=listening") || line.contains("\"msg\":\"listening\"") {
                let fields = line.split(whereSeparator: { $0 == " " || $0 == "," })
                if let field = fields.first(where: { $0.hasPrefix("address=") || $0.hasPrefix("\"address\":") }),
                    let p = field.split(separator: ":").last.flatMap({ UInt16($0.filter { $0 != "\"" }) })
                {
                    port = p
                    return p
                }
            }
            if !process.isRunning { throw TestFailure("exporter exited with \(process.terminationStatus): \(stderr)") }
            usleep(20_000)
        }
        throw TestFailure("exporter did not log 'listening' within \(timeout) s: \(stderr)")
    }

    /// Waits until a line containing `text` is logged.
    package func waitForLog(_ text: String, timeout: Double = 20) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if stderr.range(ofBytes: text) != nil { return }
            if !process.isRunning { throw TestFailure("exporter exited before logging \(text): \(stderr)") }
            usleep(20_000)
        }
        throw TestFailure("no log line with \(text) within \(timeout) s: \(stderr)")
    }

    /// Sends a signal and waits for exit; returns the exit status and how long it took.
    package func stop(signal: Int32 = SIGTERM, timeout: Double = 10) throws -> (status: Int32, seconds: Double) {
        let start = Date()
        kill(process.processIdentifier, signal)
        while process.isRunning && Date().timeIntervalSince(start) < timeout { usleep(5_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw TestFailure("exporter ignored signal \(signal) for \(timeout) s")
        }
        return (process.terminationStatus, Date().timeIntervalSince(start))
    }

    /// GETs a path from the running exporter with a bounded wait.
    package func get(_ path: String, headers: [String: String] = [:]) throws -> (
        status: Int, headers: String, body: String
    ) {
        let client = try RawTCPClient(port: port)
        var req = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        for (k, v) in headers { req += "\(k): \(v)\r\n" }
        client.send(req + "\r\n")
        let text = client.read().text
        guard let split = text.range(ofBytes: "\r\n\r\n") else {
            throw TestFailure("no HTTP response: \(text.debugDescription)")
        }
        let head = String(text[..<split.lowerBound])
        let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
        return (status, head, String(text[split.upperBound...]))
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: stderrPath)
    }
}
