import Foundation
import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// `uplinks: auto` end to end: the built binary's `check`, inside a namespace this test makes
/// with two interfaces that hold default routes (veth pairs whose far ends stay in the same
/// namespace: nothing leaves it), adopts both as uplinks through the real netlink path monitor,
/// with no path read while the options are resolved.
@Suite(.serialized) struct AutoUplinksNamespaceTests {
    @Test func checkAdoptsEveryInterfaceHoldingADefaultRoute() throws {
        let netns = try ScratchNetns()
        defer { netns.remove() }
        try netns.run(["ip", "link", "set", "lo", "up"])
        for (i, name) in ["upa", "upb"].enumerated() {
            try netns.run(["ip", "link", "add", "\(name)0", "type", "veth", "peer", "name", "\(name)1"])
            try netns.run(["ip", "addr", "add", "10.77.\(i).1/24", "dev", "\(name)0"])
            try netns.run(["ip", "link", "set", "\(name)0", "up"])
            try netns.run(["ip", "link", "set", "\(name)1", "up"])
            try netns.run([
                "ip", "route", "add", "default", "via", "10.77.\(i).2", "dev", "\(name)0", "metric", "\(100 + i)",
            ])
        }
        let dir = NSTemporaryDirectory() + "rx-auto-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/rx.yml"
        try "uplinks: auto\nprobes:\n  - type: tcp\n    target: 127.0.0.1:9\n".write(
            toFile: file, atomically: true, encoding: .utf8)
        let run = try ExporterProcess.run(
            ["check", "--config.file=\(file)", "--output=json", "--probe.timeout=300ms"], timeout: 30,
            executable: "/usr/bin/env", prefix: ["ip", "netns", "exec", netns.name, ExporterProcess.binaryPath])
        #expect(run.stdout.contains("\"uplinks\":{\"upa0\":"), "\(run.stdout) \(run.stderr)")
        #expect(run.stdout.contains("\"upb0\":"), "\(run.stdout) \(run.stderr)")
        #expect(run.stdout.contains("\"interface\":\"upb0\""), "the probe ran bound to the adopted uplink")
    }
}
