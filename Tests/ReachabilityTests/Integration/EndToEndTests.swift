import Foundation
import Glibc
import ReachabilityTestSupport
import Testing

/// The built binary, run as users run it.
@Suite(.serialized) struct EndToEndTests {
    @Test func serveScrapeLintAndStop() throws {
        let exporter = try ExporterProcess([
            "--web.listen-address=127.0.0.1:0", "--log.level=debug", "--probe.tcp=127.0.0.1:9",
        ])
        try exporter.waitListening()
        let metrics = try exporter.get("/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.body.contains("reachability_exporter_build_info{version=\"1.0.0\""))
        #expect(metrics.body.contains("process_resident_memory_bytes "))
        try Promtool.checkMetrics(metrics.body)
        let om = try exporter.get("/metrics", headers: ["Accept": "application/openmetrics-text; version=1.0.0"])
        #expect(om.body.hasSuffix("# EOF\n"))
        #expect(try exporter.get("/-/healthy").status == 200)
        #expect(try exporter.get("/-/ready").status == 200)
        let (status, seconds) = try exporter.stop(signal: SIGTERM)
        #expect(status == 0)
        #expect(seconds < 2)
        #expect(exporter.stderr.contains("msg=\"shutting down\" signal=SIGTERM"))
    }

    @Test func sigintAndSighup() throws {
        let exporter = try ExporterProcess([
            "--web.listen-address=127.0.0.1:0", "--log.format=json", "--probe.tcp=127.0.0.1:9",
        ])
        try exporter.waitListening()
        kill(exporter.process.processIdentifier, SIGHUP)
        try exporter.waitForLog("SIGHUP received")
        #expect(exporter.process.isRunning)
        let (status, _) = try exporter.stop(signal: SIGINT)
        #expect(status == 0)
        #expect(exporter.stderr.contains("\"level\":\"INFO\",\"source\":\"Exporter.swift:"))
    }

    @Test(arguments: [
        (["--bogus"], "reachability_exporter: error: unknown long flag '--bogus', try --help\n"),
        (
            ["--log.level=loud"],
            "reachability_exporter: error: invalid value \"loud\" for flag '--log.level': expected one of debug, info, warn, error, try --help\n"
        ),
        (
            ["--web.listen-address=nowhere"],
            "reachability_exporter: error: invalid value for flag '--web.listen-address': listen address \"nowhere\" needs a port, as in :10361 or 127.0.0.1:10361, try --help\n"
        ),
        (
            ["--web.telemetry-path=/-/ready"],
            "reachability_exporter: error: invalid value \"/-/ready\" for flag '--web.telemetry-path': it must name a path of its own, not one of /, /-/healthy, /-/ready, /-/reload, /debug/probe, /probe, try --help\n"
        ),
        (
            ["--web.external-url=https://u:secret@proxy.example/rx/"],
            "reachability_exporter: error: invalid value \"https://<credentials>@proxy.example/rx/\" for flag '--web.external-url': it needs a host and no user, query or fragment, try --help\n"
        ),
    ])
    func usageErrorsExit64(args: [String], message: String) throws {
        let r = try ExporterProcess.run(args)
        #expect(r.status == 64)
        #expect(r.stderr == message)
    }

    @Test func helpAndVersion() throws {
        let help = try ExporterProcess.run(["--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("--web.listen-address=ADDRESS"))
        let version = try ExporterProcess.run(["--version"])
        #expect(version.status == 0 && version.stdout.hasPrefix("reachability_exporter, version 1.0.0"))
    }

    @Test func portInUseIsARuntimeError() throws {
        let first = try ExporterProcess(["--web.listen-address=127.0.0.1:0", "--probe.tcp=127.0.0.1:9"])
        let port = try first.waitListening()
        let second = try ExporterProcess.run(["--web.listen-address=127.0.0.1:\(port)", "--probe.tcp=127.0.0.1:9"])
        #expect(second.status == 1)
        #expect(second.stderr.contains("msg=\"cannot listen\""))
        _ = try first.stop()
    }
}

/// `promtool check metrics`, the ecosystem's own linter. CI installs it; its absence fails the test.
enum Promtool {
    static func checkMetrics(_ text: String) throws {
        let path = "/usr/bin/promtool"
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw TestFailure("promtool is not installed (apt-get install prometheus); .ci/run installs it")
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = ["check", "metrics"]
        let input = Pipe()
        let output = Pipe()
        p.standardInput = input
        p.standardOutput = output
        p.standardError = output
        try p.run()
        input.fileHandleForWriting.write(Data(text.utf8))
        try input.fileHandleForWriting.close()
        p.waitUntilExit()
        let said = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        if p.terminationStatus != 0 || !said.isEmpty {
            throw TestFailure("promtool check metrics: status \(p.terminationStatus): \(said)")
        }
    }
}
