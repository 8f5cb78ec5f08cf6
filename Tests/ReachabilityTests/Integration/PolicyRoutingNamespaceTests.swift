import Foundation
import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// Policy routing end to end, with the built binary's `check` in a host namespace H:
///
///     H a0 198.18.1.2 ── GA 198.18.1.1   (main table: default via GA; GA routes nowhere)
///     H b0 198.18.2.2 ── GB 198.18.2.1   (table 100 only: default via GB; GB holds 203.0.113.1)
///
/// `ip rule fwmark 2 lookup 100`. The uplink b0's probes reach 203.0.113.1 only with the mark;
/// its default route is in no other table, yet it gets a gateway check and a fault location.
/// Documentation and benchmark addresses; nothing routes out of the namespaces.
@Suite(.serialized) struct PolicyRoutingNamespaceTests {
    struct Net {
        let h: ScratchNetns
        let ga: ScratchNetns
        let gb: ScratchNetns

        init() throws {
            h = try ScratchNetns()
            ga = try ScratchNetns()
            gb = try ScratchNetns()
            do {
                for ns in [h, ga, gb] {
                    try ns.run(["ip", "link", "set", "lo", "up"])
                    try ns.run(["sysctl", "-q", "-w", "net.ipv4.ping_group_range=0 2147483647"])
                }
                for (i, (dev, peer)) in [("a0", ga), ("b0", gb)].enumerated() {
                    try h.run(["ip", "link", "add", dev, "type", "veth", "peer", "name", "p0", "netns", peer.name])
                    try h.run(["ip", "addr", "add", "198.18.\(i + 1).2/24", "dev", dev])
                    try h.run(["ip", "link", "set", dev, "up"])
                    try peer.run(["ip", "addr", "add", "198.18.\(i + 1).1/24", "dev", "p0"])
                    try peer.run(["ip", "link", "set", "p0", "up"])
                    // Answer ARP only for the address on the asking interface: no "on-link" shortcut.
                    try peer.run(["sysctl", "-q", "-w", "net.ipv4.conf.all.arp_ignore=1"])
                }
                try gb.run(["ip", "addr", "add", "203.0.113.1/32", "dev", "lo"])
                try h.run(["ip", "route", "add", "default", "via", "198.18.1.1", "dev", "a0"])
                try h.run(["ip", "route", "add", "default", "via", "198.18.2.1", "dev", "b0", "table", "100"])
                try h.run(["ip", "rule", "add", "fwmark", "2", "lookup", "100"])
            } catch {
                remove()
                throw error
            }
        }

        func remove() { for ns in [h, ga, gb] { ns.remove() } }

        func check(_ config: String) throws -> (json: JSONValue?, text: String) {
            let dir = NSTemporaryDirectory() + "rx-policy-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            try config.write(toFile: dir + "/rx.yml", atomically: true, encoding: .utf8)
            let run = try ExporterProcess.run(
                [
                    "check", "--config.file=\(dir)/rx.yml", "--output=json", "--probe.timeout=500ms",
                    "--probe.trust-local-targets",
                ], timeout: 30, executable: "/usr/bin/env",
                prefix: ["ip", "netns", "exec", h.name, ExporterProcess.binaryPath])
            return (JSONValue.parse(Array(run.stdout.utf8.dropLast())), run.stdout + run.stderr)
        }
    }

    static let probes = """
        probes:
          - name: echo
            type: icmp
            target: 203.0.113.1
            icmp: {count: 1}
        """

    @Test func theMarkCarriesTheUplinksProbesThroughItsTable() async throws {
        let net = try await runOffCooperativePool { Result { try Net() } }.get()
        defer { net.remove() }
        let marked = try net.check("uplinks: [b0]\nuplink_settings:\n  b0: {mark: 0x2}\n" + Self.probes)
        func probe(_ json: JSONValue?, _ interface: String) -> JSONValue? {
            guard case .array(let probes)? = json?["probes"] else { return nil }
            return probes.first { $0["interface"]?.string == interface }
        }
        #expect(probe(marked.json, "b0")?["status"]?.string == "success", "\(marked.text)")
        #expect(marked.json?["uplinks"]?["b0"]?["state"]?.string == "full", "\(marked.text)")
        // Unbound, the host's main table goes through GA, which routes nowhere.
        // Without the mark the bound probe finds no way through b0.
        let unmarked = try net.check("uplinks: [b0]\n" + Self.probes)
        #expect(probe(unmarked.json, "b0")?["status"]?.string == "failure", "\(unmarked.text)")
        // Its gateway lives only in table 100, and is still checked: upstream, not "no default route".
        let detail = unmarked.json?["uplinks"]?["b0"]?["fault"]?["detail"]?.string ?? ""
        #expect(detail.hasPrefix("gateway 198.18.2.1 on b0 answers"), "\(unmarked.text)")
        // A mark and a source are refused when the file is wrong, with the key path.
        let bad = try net.check("uplinks: [b0]\nuplink_settings:\n  b0: {mark: 0}\n" + Self.probes)
        #expect(bad.text.contains("uplink_settings.b0.mark"), "\(bad.text)")
    }
}
