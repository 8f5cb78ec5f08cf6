import Foundation
import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// Passive evidence against the kernel: a client namespace A (198.51.100.2, "public") talks TCP to
/// a server namespace B (203.0.113.1) over a veth pair; both sides stream to each other. The
/// dump is read in A. Then B drops everything: A's connection keeps retransmitting with nothing
/// received and is seen stalled. Documentation addresses; nothing routes out of the namespaces.
@Suite(.serialized) struct PassiveNamespaceTests {
    /// Streams forever: the server writes and reads, the client too (one Python each).
    static let server = """
        import socket, threading, time
        s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("203.0.113.1", 8443)); s.listen(4)
        c, _ = s.accept()
        threading.Thread(target=lambda: [c.recv(65536) for _ in iter(int, 1)], daemon=True).start()
        while True:
            c.send(b"x" * 1000); time.sleep(0.05)
        """
    static let client = """
        import socket, threading, time
        c = socket.create_connection(("203.0.113.1", 8443), timeout=5); c.settimeout(None)
        threading.Thread(target=lambda: [c.recv(65536) for _ in iter(int, 1)], daemon=True).start()
        while True:
            c.send(b"y" * 1000); time.sleep(0.05)
        """

    @Test func receivingThenStalledWhenThePeerGoesSilent() async throws {
        let a = try ScratchNetns()
        let b = try ScratchNetns()
        defer {
            a.remove()
            b.remove()
        }
        for ns in [a, b] { try ns.run(["ip", "link", "set", "lo", "up"]) }
        try a.run(["ip", "link", "add", "a0", "type", "veth", "peer", "name", "b0", "netns", b.name])
        try a.run(["ip", "addr", "add", "198.51.100.2/24", "dev", "a0"])
        try b.run(["ip", "addr", "add", "203.0.113.1/24", "dev", "b0"])
        for (ns, dev) in [(a, "a0"), (b, "b0")] { try ns.run(["ip", "link", "set", dev, "up"]) }
        try a.run(["ip", "route", "add", "default", "dev", "a0"])
        try b.run(["ip", "route", "add", "default", "dev", "b0"])
        let server = try Self.spawn(b, Self.server)
        defer { Self.stop(server) }
        try await Task.sleep(for: .milliseconds(300))
        let client = try Self.spawn(a, Self.client)
        defer { Self.stop(client) }
        let settings = PassiveEvidence.Settings(freshness: .seconds(1), stallRetransmits: 2)
        func summary() throws -> PassiveSummary? {
            let sockets = try NetworkNamespace.run(inNamespaceAt: a.path) { () -> [TCPSocketInfo]? in
                try? SockDiag.tcpSockets()
            }
            let mine = (sockets ?? []).filter { $0.destinationPort == 8443 }
            #expect(mine.allSatisfy { $0.family == .ipv4 && $0.destination == [203, 0, 113, 1] })
            return PassiveEvidence.summarize(
                mine, settings: settings, uplinks: ["a0"], interfaceOfAddress: [[198, 51, 100, 2]: "a0"],
                interfaceOfIndex: [:])[.uplink("a0")]
        }
        var receiving: PassiveSummary?
        for _ in 0..<30 {
            receiving = try summary()
            if receiving?.receiving == 1 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(receiving?.receiving == 1 && receiving?.stalled == 0, "\(String(describing: receiving))")
        #expect((receiving?.freshestReceive ?? .seconds(9)) < .seconds(1))
        // The server's side goes silent: nothing in, nothing out.
        try b.run(
            ["nft", "-f", "-"],
            input: "table inet rxsilent { chain in { type filter hook input priority 0; tcp dport 8443 drop; }; }")
        var stalled: PassiveSummary?
        let clock = ContinuousClock()
        let cut = clock.now
        for _ in 0..<60 {
            stalled = try summary()
            if stalled?.isStalling == true { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(stalled?.stalled == 1 && stalled?.receiving == 0, "\(String(describing: stalled))")
        #expect(stalled?.isStalling == true)
        #expect(cut.duration(to: clock.now) < .seconds(6), "stalled within the retransmission timeouts")
    }

    static func stop(_ p: Process) {
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
    }

    static func spawn(_ ns: ScratchNetns, _ script: String) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // Debian's interpreter, exec'd by `ip netns exec`: the process is Python itself, so
        // killing it (`stop`) leaves nothing behind (a pyenv shim would fork).
        p.arguments = ["ip", "netns", "exec", ns.name, "/usr/bin/python3", "-c", script]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        return p
    }
}
