import Foundation
import Synchronization

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// A network namespace made for one test (`rx-icmp-<pid>-<n>`, loopback up), deleted by
/// `withICMPNamespace` even when the test fails. Only loopback exists inside, so nothing a test
/// sends there can leave the machine.
struct ICMPTestNamespace {
    let name: String
    var path: String { NetworkNamespace.path(named: name) }

    private static let counter = Atomic<Int>(0)

    /// Runs a command to completion and returns its exit status and combined output.
    @discardableResult
    static func run(_ arguments: [String], input: String? = nil) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        let stdin = Pipe()
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// Runs a command inside the namespace; throws when it fails.
    func exec(_ arguments: [String], input: String? = nil) throws {
        let (status, output) = try Self.run(["ip", "netns", "exec", name] + arguments, input: input)
        if status != 0 { throw Failure(message: "\(arguments.joined(separator: " ")): \(output)") }
    }

    /// Adds an nft rule set (a table `t` of family inet) inside the namespace. The script goes
    /// through standard input: CI once saw `nft -f` read a temporary file (written with
    /// `write(to:atomically:)`) with bytes after the script's end.
    func nft(_ script: String) throws {
        try exec(["nft", "-f", "-"], input: script + "\n")
    }

    struct Failure: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    static func create(allowPingSockets: Bool) throws -> ICMPTestNamespace {
        ignoreBrokenPipes()  // a child that exits early must fail the test, not kill the run
        let n = counter.add(1, ordering: .relaxed).newValue
        let ns = ICMPTestNamespace(name: "rx-icmp-\(getpid())-\(n)")
        let (status, output) = try run(["ip", "netns", "add", ns.name])
        if status != 0 { throw Failure(message: "ip netns add: \(output)") }
        do {
            try ns.exec(["ip", "link", "set", "lo", "up"])
            if allowPingSockets { try ns.exec(["sysctl", "-q", "-w", "net.ipv4.ping_group_range=0 2147483647"]) }
        } catch {
            ns.delete()
            throw error
        }
        return ns
    }

    func delete() {
        _ = try? Self.run(["ip", "netns", "del", name])
    }
}

/// Creates a namespace, runs `body`, and deletes the namespace however `body` ends.
func withICMPNamespace<T>(
    allowPingSockets: Bool = false, _ body: (ICMPTestNamespace) async throws -> T
) async throws -> T {
    let ns = try ICMPTestNamespace.create(allowPingSockets: allowPingSockets)
    defer { ns.delete() }
    return try await body(ns)
}
