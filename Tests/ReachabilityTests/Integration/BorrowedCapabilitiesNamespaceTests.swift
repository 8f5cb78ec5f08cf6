import Foundation
import Glibc
import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// The file capability end to end (#41): a copy of the built binary given `cap_net_raw+ep`, run
/// as `nobody` in a namespace whose only route is `default dev up0` (a veth whose peer stays
/// inside), with an nftables counter of packets that carry mark 0x1234. A user may not lend
/// themselves the mark (refused at load, nothing marked); root still marks (the control); the
/// capability still opens raw ICMP sockets for the user (ping sockets are off in there).
/// Documentation addresses only; nothing leaves the namespace. Root only: setcap and setpriv.
@Suite(.serialized, .enabled(if: getuid() == 0, "needs root (setcap, setpriv, ip netns)"))
struct BorrowedCapabilitiesNamespaceTests {
    static let config = """
        uplinks: [up0]
        uplink_settings:
          up0: {mark: 0x1234}
        probes:
          - {type: tcp, target: "198.51.100.7:443"}
        """
    static let rules = """
        table inet t {
          chain out { type filter hook output priority 0; meta mark 0x1234 counter; }
        }
        """

    struct Lab {
        let ns: ScratchNetns
        let dir: URL
        var binary: String { dir.appendingPathComponent("rx").path }
        var configPath: String { dir.appendingPathComponent("marked.yml").path }

        init() throws {
            dir = FileManager.default.temporaryDirectory.appendingPathComponent("rx-caps-\(getpid())-\(UUID())")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: false)
            ns = try ScratchNetns()
            do {
                try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir.path)
                try FileManager.default.copyItem(atPath: ExporterProcess.binaryPath, toPath: binary)
                try BorrowedCapabilitiesNamespaceTests.config.write(
                    toFile: configPath, atomically: true, encoding: .utf8)
                try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: configPath)
                try ns.run(["setcap", "cap_net_raw+ep", binary])
                try ns.run(["ip", "link", "set", "lo", "up"])
                try ns.run(["ip", "link", "add", "up0", "type", "veth", "peer", "name", "up0p"])
                try ns.run(["ip", "addr", "add", "192.0.2.1/24", "dev", "up0"])
                try ns.run(["ip", "link", "set", "up0", "up"])
                try ns.run(["ip", "link", "set", "up0p", "up"])
                try ns.run(["ip", "route", "add", "default", "dev", "up0"])
                try ns.run(["sysctl", "-q", "-w", "net.ipv4.ping_group_range=1 0"])
                try ns.run(["nft", "-f", "-"], input: BorrowedCapabilitiesNamespaceTests.rules)
            } catch {
                remove()
                throw error
            }
        }

        func remove() {
            ns.remove()
            try? FileManager.default.removeItem(at: dir)
        }

        /// The binary's `check` in the namespace, as `nobody` unless `asRoot`.
        func check(_ args: [String], asRoot: Bool = false) throws -> (status: Int32, stdout: String, stderr: String) {
            let user = asRoot ? [] : ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
            return try ExporterProcess.run(
                ["check", "--no-path.monitor", "--probe.interval=2s", "--probe.timeout=1s"] + args,
                executable: "/usr/bin/env", prefix: ["ip", "netns", "exec", ns.name] + user + [binary])
        }

        /// Packets the output chain has seen with mark 0x1234 since the namespace was made.
        func markedPackets() throws -> Int {
            let listed = try ExporterProcess.run(
                ["netns", "exec", ns.name, "nft", "list", "chain", "inet", "t", "out"],
                executable: "/usr/bin/env", prefix: ["ip"])
            let match = listed.stdout.firstMatch(of: /counter packets (\d+)/)
            return try #require(match.flatMap { Int($0.1) }, "nft said: \(listed.stdout) \(listed.stderr)")
        }
    }

    @Test func aUserCannotLendThemselvesAMarkRootStillMarks() throws {
        let lab = try Lab()
        defer { lab.remove() }
        let refused = try lab.check(["--config.file=\(lab.configPath)"])
        #expect(refused.status == 78, "\(refused.stderr)")
        #expect(refused.stderr.contains("uplink_settings.up0.mark: expected no firewall mark"))
        #expect(try lab.markedPackets() == 0)
        let control = try lab.check(["--config.file=\(lab.configPath)"], asRoot: true)
        #expect(control.status == 2, "\(control.stderr)")  // limited: the connect times out
        #expect(try lab.markedPackets() > 0)  // SO_MARK works here: the zero above is the refusal's
    }

    @Test func aUserStillGetsRawICMPThroughTheFileCapability() throws {
        let lab = try Lab()
        defer { lab.remove() }
        let ping = try lab.check(["--probe.icmp=127.0.0.1", "--probe.trust-local-targets"])
        #expect(ping.status == 0, "\(ping.stdout) \(ping.stderr)")
        #expect(ping.stdout.contains("icmp 127.0.0.1: success"))
    }
}
