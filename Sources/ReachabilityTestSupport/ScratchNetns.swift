import Foundation
import ReachabilityExporter
import ReachabilityVerdict
import Synchronization

/// A network namespace a test creates for itself (`ip netns add rx-<pid>-dt<n>`), configures
/// with `run(_:)` (commands under `ip netns exec`), and deletes with `remove()` — call it in a
/// `defer`; deinit removes it too. Nothing in it can reach the host's interfaces, so traffic
/// sent inside stays inside. Needs root.
package final class ScratchNetns: Sendable {
    private static let counter = Atomic<Int>(0)

    package let name: String
    private let removed = Atomic<Bool>(false)

    /// The bind-mounted namespace file, for `setns(2)` (see `NetnsExecutor`).
    package var path: String { "/var/run/netns/\(name)" }

    package init() throws {
        ignoreBrokenPipes()  // a child that exits early must fail the test, not kill the run
        let n = Self.counter.add(1, ordering: .relaxed).newValue
        name = "rx-\(getpid())-dt\(n)"
        try Self.command(["ip", "netns", "add", name])
    }

    deinit { remove() }

    /// Runs `arguments` inside the namespace and waits for it; throws with its output on failure.
    package func run(_ arguments: [String], input: String? = nil) throws {
        try Self.command(["ip", "netns", "exec", name] + arguments, input: input)
    }

    /// Deletes the namespace (idempotent).
    package func remove() {
        guard !removed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        try? Self.command(["ip", "netns", "del", name])
    }

    private static func command(_ arguments: [String], input: String? = nil) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        let stdin = Pipe()
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestSupportError("\(arguments.joined(separator: " ")) exited \(process.terminationStatus): \(text)")
        }
    }
}
