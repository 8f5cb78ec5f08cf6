import Foundation
import Glibc
import ReachabilityTestSupport
import Testing

/// `/probe` in the built binary: the module file at start, a bad one refused with its line,
/// reloads by SIGHUP and `POST /-/reload` that keep the running modules when the file is broken,
/// and the endpoint under the route prefix.
@Suite(.serialized) struct ProbeEndpointEndToEndTests {
    typealias Scratch = ConfigEndToEndTests.Scratch

    static let modules = "modules:\n  tcp_connect:\n    prober: tcp\n"

    @Test func aBrokenModuleFileIsExit78ARefusedModuleIsNot() throws {
        let scratch = try Scratch()
        try scratch.write("modules:\n  - http_2xx\n")
        let r = try ExporterProcess.run([
            "--web.listen-address=127.0.0.1:0", "--probe.tcp=127.0.0.1:9", "--modules.file=\(scratch.file)",
        ])
        #expect(r.status == 78)
        #expect(
            r.stderr.contains(
                "msg=\"error loading the module file\" file=\(scratch.file) err=\"\(scratch.file):2:3: modules:"),
            "\(r.stderr)")
        let usage = try ExporterProcess.run(["--probe.tcp=127.0.0.1:9", "--modules.allow-target=10.0.0.0/8"])
        #expect(usage.status == 64 && usage.stderr.contains("flag '--modules.allow-target' needs --modules.file"))
        // A module asking for what the probers cannot do is refused alone, loudly.
        try scratch.write(Self.modules + "  trace:\n    prober: http\n    http:\n      method: TRACE\n")
        let exporter = try ExporterProcess([
            "--web.listen-address=127.0.0.1:0", "--no-path.monitor", "--probe.tcp=127.0.0.1:9",
            "--modules.file=\(scratch.file)",
        ])
        try exporter.waitListening()
        #expect(
            exporter.stderr.contains("msg=\"module refused: /probe answers 400 for it\" module=trace"),
            "\(exporter.stderr)")
        let trace = try exporter.get("/probe?module=trace&target=127.0.0.1")
        #expect(
            trace.status == 400 && trace.body.contains("Module \"trace\" was refused at load: \(scratch.file):7:15"))
        #expect(try exporter.stop().status == 0)
    }

    @Test func probesReloadsAndKeepsTheLastGoodModules() throws {
        let listener = try TCPTestListener()
        defer { listener.stop() }
        let scratch = try Scratch()
        try scratch.write(Self.modules)
        let exporter = try ExporterProcess([
            "--web.listen-address=127.0.0.1:0", "--no-path.monitor", "--probe.tcp=127.0.0.1:9",
            "--modules.file=\(scratch.file)", "--web.enable-lifecycle", "--web.route-prefix=/rx",
        ])
        let port = try exporter.waitListening()
        let target = "target=\(listener.address)"
        let first = try exporter.get("/rx/probe?module=tcp_connect&\(target)")
        #expect(first.status == 200 && first.body.contains("\nprobe_success 1\n"), "\(first.body)")
        #expect(try exporter.get("/probe?module=tcp_connect&\(target)").status == 404, "outside the prefix")
        // A broken file: SIGHUP keeps the running modules and logs why.
        try scratch.write("modules:\n  tcp_connect: [\n")
        kill(exporter.process.processIdentifier, SIGHUP)
        try exporter.waitForLog("modules reload failed; keeping the running modules")
        #expect(try exporter.get("/rx/probe?module=tcp_connect&\(target)").body.contains("\nprobe_success 1\n"))
        let refused = try ConfigEndToEndTests.request(port, "POST", "/rx/-/reload")
        #expect(
            refused.status == 500 && refused.body.contains("modules reload failed; keeping the running modules"),
            "\(refused)")
        // A good file with another module: POST /-/reload applies it.
        try scratch.write(Self.modules + "  icmp:\n    prober: icmp\n    icmp: {preferred_ip_protocol: ip4}\n")
        let ok = try ConfigEndToEndTests.request(port, "POST", "/rx/-/reload")
        #expect(ok.status == 200 && ok.body == "modules reloaded: 2 modules\n", "\(ok)")
        let icmp = try exporter.get("/rx/probe?module=icmp&target=127.0.0.1")
        #expect(icmp.body.contains("\nprobe_success 1\n") && icmp.body.contains("probe_icmp_duration_seconds"))
        #expect(try exporter.stop().status == 0)
    }
}
