import Dispatch
import Foundation
import Glibc
import ReachabilityTestSupport
import Synchronization
import Testing

/// The built binary with `--config.file` and `check-config`: example files, start-up errors,
/// and live reloads (SIGHUP, POST /-/reload) with probes added and removed while scrapes run.
/// Every probe targets a TCP listener on 127.0.0.1; the example files are only ever checked.
@Suite(.serialized) struct ConfigEndToEndTests {
    static let packageRoot = RepositoryRoot.url

    /// A scratch directory for configuration files, removed by `cleanup()`.
    final class Scratch {
        let dir = NSTemporaryDirectory() + "rx-config-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        init() throws { try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) }
        var file: String { dir + "/rx.yml" }
        /// Replaces the file as deploy tools do (write aside, rename).
        func write(_ text: String) throws { try text.write(toFile: file, atomically: true, encoding: .utf8) }
        deinit { try? FileManager.default.removeItem(atPath: dir) }
    }

    static func value(_ m: String, _ series: String) -> Double? { ReachabilityEndToEndTests.value(m, series) }

    static func tcpConfig(_ probes: [(String, TCPTestListener)], extra: String = "") -> String {
        var text =
            "global:\n  interval: 400ms\n  timeout: 300ms\n  fast_recheck: 0\n  path_monitor: false\n  trust_local_targets: true\n\(extra)probes:\n"
        for (name, listener) in probes {
            text += "  - name: \(name)\n    type: tcp\n    target: \"127.0.0.1:\(listener.address.port)\"\n"
        }
        return text
    }

    /// One HTTP request with an empty body on a fresh connection.
    static func request(_ port: UInt16, _ method: String, _ path: String, headers: String = "") throws -> (
        status: Int, head: String, body: String
    ) {
        let client = try RawTCPClient(port: port, timeoutMS: 15_000)
        client.send(
            "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\(headers)Content-Length: 0\r\nConnection: close\r\n\r\n"
        )
        let text = client.read().text
        guard let split = text.range(ofBytes: "\r\n\r\n") else {
            throw TestFailure("no HTTP response: \(text.debugDescription)")
        }
        let head = String(text[..<split.lowerBound])
        return (Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0, head, String(text[split.upperBound...]))
    }

    /// Scrapes until `condition` holds on the metrics text (bounded).
    static func waitFor(
        _ exporter: ExporterProcess, timeout: Double = 20, _ what: String, _ condition: (String) -> Bool
    ) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        var last = ""
        while Date() < deadline {
            last = try exporter.get("/metrics").body
            if condition(last) { return last }
            usleep(50_000)
        }
        throw TestFailure(
            "\(what) not seen within \(timeout) s; last scrape:\n\(last.split(separator: "\n").filter { $0.contains("tcp") || $0.contains("reload") }.joined(separator: "\n"))\nlog:\n\(exporter.stderr)"
        )
    }

    static func probesTotal(_ m: String, _ name: String) -> Double? {
        value(m, "reachability_probes_total{probe=\"tcp\",target=\"\(name)\"}")
    }

    /// Scrapes /metrics on a thread of its own until stopped, counting answers by status.
    final class Scraper: Sendable {
        let ok = Atomic<Int>(0), bad = Atomic<Int>(0)
        private let stopped = Atomic<Bool>(false)
        private let done = DispatchSemaphore(value: 0)

        init(port: UInt16) {
            Thread.detachNewThread { [self] in
                let start = Date()
                // Bounded in time even if stop() is never called.
                while !stopped.load(ordering: .acquiring) && Date().timeIntervalSince(start) < 60 {
                    let status = (try? ConfigEndToEndTests.request(port, "GET", "/metrics").status) ?? 0
                    if status == 200 { ok.add(1, ordering: .relaxed) } else { bad.add(1, ordering: .relaxed) }
                    usleep(5_000)
                }
                done.signal()
            }
        }

        func stop() {
            stopped.store(true, ordering: .releasing)
            done.wait()
        }
    }

    @Test func everyExampleFilePassesCheckConfig() throws {
        let dir = Self.packageRoot.appendingPathComponent("deploy/examples")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".yml") }
            .sorted()
        #expect(files == ["home-router.yml", "kubernetes-node.yml", "laptop-wifi.yml"])
        for name in files {
            let path = dir.appendingPathComponent(name).path
            // check-config only parses and builds configurations: it sends no traffic.
            let r = try ExporterProcess.run(["check-config", path])
            #expect(r.status == 0, "\(name): \(r.stderr)")
            #expect(r.stdout.hasPrefix("\(path): valid\n"), "\(r.stdout)")
            #expect(r.stdout.contains("probes: "), "\(r.stdout)")
        }
    }

    @Test func checkConfigExitCodes() throws {
        let scratch = try Scratch()
        try scratch.write(
            "global:\n  interval: 5s\nprobes:\n  - name: a\n    type: tcp\n    target: 127.0.0.1:9\n    intervall: 10s\n"
        )
        let bad = try ExporterProcess.run(["check-config", scratch.file])
        #expect(bad.status == 78)
        #expect(
            bad.stderr
                == "\(scratch.file):7:5: probes[0].intervall: expected one of the keys name, type, target, interval, timeout, family, labels, http, icmp, dns, tcp, mtu, doh, found an unknown key (did you mean \"interval\"?)\n"
        )
        #expect(bad.stdout.isEmpty)
        let missing = try ExporterProcess.run(["check-config", scratch.dir + "/absent.yml"])
        #expect(missing.status == 78)
        #expect(
            missing.stderr.hasPrefix(
                "\(scratch.dir)/absent.yml: expected a readable configuration file, found No such file or directory"))
        let usage = try ExporterProcess.run(["check-config"])
        #expect(usage.status == 64)
    }

    /// `check --config.file` runs the file's probes once (not the flags' defaults), and a bad
    /// file is exit 78 there too.
    @Test func checkRunsTheFilesProbes() throws {
        let open = try TCPTestListener()
        defer { open.stop() }
        let scratch = try Scratch()
        try scratch.write(Self.tcpConfig([("lab", open)]))
        let ok = try ExporterProcess.run(["check", "--config.file=\(scratch.file)"])
        #expect(ok.status == 0, "\(ok.stdout) \(ok.stderr)")
        #expect(ok.stdout.hasPrefix("full\n"), "\(ok.stdout)")
        #expect(ok.stdout.contains("tcp lab: success"), "\(ok.stdout)")
        open.stop()
        let down = try ExporterProcess.run(["check", "--config.file=\(scratch.file)", "--output=json"])
        #expect(down.status == 2, "\(down.stdout) \(down.stderr)")
        #expect(down.stdout.contains("\"name\":\"lab\""), "\(down.stdout)")
        try scratch.write("global:\n\tinterval: 5s\n")
        let bad = try ExporterProcess.run(["check", "--config.file=\(scratch.file)"])
        #expect(bad.status == 78)
        #expect(bad.stderr.contains("\(scratch.file):2:1: global: expected spaces for indentation"), "\(bad.stderr)")
    }

    @Test func aBadFileStopsTheStartWith78() throws {
        let scratch = try Scratch()
        try scratch.write("global:\n\tinterval: 5s\n")
        let r = try ExporterProcess.run(["--web.listen-address=127.0.0.1:0", "--config.file=\(scratch.file)"])
        #expect(r.status == 78)
        // A log record, as Prometheus logs a configuration it cannot load.
        #expect(
            r.stderr.contains(
                "level=ERROR source=ConfigWiring.swift:32 msg=\"error loading the configuration file\" file=\(scratch.file) "
                    + "err=\"\(scratch.file):2:1: global: expected spaces for indentation, found a tab"
            ), "\(r.stderr)")
        try scratch.write("probes:\n  - type: tcp\n    target: 127.0.0.1:9\n")
        let clash = try ExporterProcess.run([
            "--web.listen-address=127.0.0.1:0", "--config.file=\(scratch.file)", "--probe.tcp=127.0.0.1:9",
        ])
        #expect(clash.status == 78)
        #expect(clash.stderr.contains("probes[0].name: expected a name no probe flag gives"), "\(clash.stderr)")
    }

    @Test func reloadAddsAndRemovesProbesWhileScrapesRun() throws {
        let listeners = try (0..<3).map { _ in try TCPTestListener() }
        defer { for listener in listeners { listener.stop() } }
        let (l1, l2, l3) = (listeners[0], listeners[1], listeners[2])
        let scratch = try Scratch()
        try scratch.write(Self.tcpConfig([("a", l1), ("b", l2)]))
        let exporter = try ExporterProcess([
            "--web.listen-address=127.0.0.1:0", "--config.file=\(scratch.file)", "--web.enable-lifecycle",
        ])
        let port = try exporter.waitListening()
        let scraper = Scraper(port: port)
        var scraperStopped = false
        defer { if !scraperStopped { scraper.stop() } }

        let before = try Self.waitFor(exporter, "probes a and b") {
            (Self.probesTotal($0, "a") ?? 0) >= 1 && (Self.probesTotal($0, "b") ?? 0) >= 1
        }
        #expect(Self.value(before, "reachability_exporter_config_last_reload_successful") == 1)
        let bBefore = Self.probesTotal(before, "b") ?? 0

        // Remove a, keep b, add c.
        try scratch.write(Self.tcpConfig([("b", l2), ("c", l3)]))
        kill(exporter.process.processIdentifier, SIGHUP)
        let after = try Self.waitFor(exporter, "probe c after SIGHUP") { (Self.probesTotal($0, "c") ?? 0) >= 1 }
        try exporter.waitForLog("msg=\"configuration reloaded\"")
        #expect(!after.contains("target=\"a\""), "every series of the removed probe is gone")
        #expect(Self.value(after, "reachability_probe_success{probe=\"tcp\",target=\"c\"}") == 1)
        #expect((Self.probesTotal(after, "b") ?? 0) >= bBefore, "the kept probe's counters continue")
        #expect(Self.value(after, "reachability_exporter_config_last_reload_successful") == 1)
        #expect(exporter.stderr.contains("added=c removed=a"), "\(exporter.stderr)")

        // The removed probe sends nothing more: a few rounds later, its listener saw no new connection.
        let aConnections = l1.accepted
        let rounds = Self.value(after, "reachability_rounds_total") ?? 0
        _ = try Self.waitFor(exporter, "three more rounds") {
            (Self.value($0, "reachability_rounds_total") ?? 0) >= rounds + 3
        }
        #expect(l1.accepted == aConnections)
        #expect(l3.accepted >= 1)

        // POST /-/reload with constant labels.
        try scratch.write(
            Self.tcpConfig([("b", l2), ("c", l3)]).replacingOccurrences(
                of: "    target: \"127.0.0.1:\(l3.address.port)\"\n",
                with: "    target: \"127.0.0.1:\(l3.address.port)\"\n    labels:\n      site: lab\n"))
        let posted = try Self.request(port, "POST", "/-/reload")
        #expect(posted.status == 200, "\(posted)")
        #expect(posted.body == "configuration reloaded: 2 probes; added: none; removed: none; changed: c\n")
        let labelled = try exporter.get("/metrics").body
        #expect(labelled.contains("reachability_probe_labels_info{target=\"b\",site=\"\"} 1"))
        #expect(labelled.contains("reachability_probe_labels_info{target=\"c\",site=\"lab\"} 1"))
        try Promtool.checkMetrics(labelled)

        scraper.stop()
        scraperStopped = true
        #expect(scraper.bad.load(ordering: .relaxed) == 0, "every scrape during the reloads answered 200")
        #expect(scraper.ok.load(ordering: .relaxed) >= 10)
        #expect(try exporter.stop().status == 0)
    }

    @Test func aBrokenFileKeepsTheRunningConfiguration() throws {
        let listener = try TCPTestListener()
        defer { listener.stop() }
        let scratch = try Scratch()
        let good = Self.tcpConfig([("a", listener)])
        try scratch.write(good)
        let exporter = try ExporterProcess([
            "--web.listen-address=127.0.0.1:0", "--config.file=\(scratch.file)", "--web.enable-lifecycle",
        ])
        let port = try exporter.waitListening()
        _ = try Self.waitFor(exporter, "probe a") { (Self.probesTotal($0, "a") ?? 0) >= 1 }

        try scratch.write(
            good.replacingOccurrences(of: "  timeout: 300ms\n", with: "  timeout: 300ms\n  timeout: 200ms\n"))
        kill(exporter.process.processIdentifier, SIGHUP)
        let failed = try Self.waitFor(exporter, "last_reload_successful 0") {
            Self.value($0, "reachability_exporter_config_last_reload_successful") == 0
        }
        try exporter.waitForLog("configuration reload failed")
        #expect(
            exporter.stderr.contains("rx.yml:4:3: global.timeout: expected each key once per map"), "\(exporter.stderr)"
        )
        let stamp = Self.value(failed, "reachability_exporter_config_last_reload_success_timestamp_seconds") ?? 0
        #expect(stamp > 1_600_000_000, "the start-up load counts as a success")
        // The old probe keeps running.
        let count = Self.probesTotal(failed, "a") ?? 0
        _ = try Self.waitFor(exporter, "probe a still running") { (Self.probesTotal($0, "a") ?? 0) >= count + 2 }

        let posted = try Self.request(port, "POST", "/-/reload")
        #expect(posted.status == 500)
        #expect(
            posted.body.hasPrefix(
                "configuration reload failed; keeping the running configuration: \(scratch.file):4:3: global.timeout: expected each key once per map, found \"timeout\" again (first at line 3, column 3)"
            ), "\(posted.body)")
        let get = try Self.request(port, "GET", "/-/reload")
        #expect(get.status == 405)
        #expect(get.head.contains("Allow: POST"))

        try scratch.write(good)
        let fixed = try Self.request(port, "POST", "/-/reload")
        #expect(fixed.status == 200, "\(fixed)")
        let m = try exporter.get("/metrics").body
        #expect(Self.value(m, "reachability_exporter_config_last_reload_successful") == 1)
        #expect((Self.value(m, "reachability_exporter_config_last_reload_success_timestamp_seconds") ?? 0) >= stamp)
        #expect(try exporter.stop().status == 0)
    }

    @Test func theLifecycleEndpointIsOffByDefaultAndRefusesOtherSites() throws {
        let listener = try TCPTestListener()
        defer { listener.stop() }
        let scratch = try Scratch()
        try scratch.write(Self.tcpConfig([("a", listener)]))
        let off = try ExporterProcess(["--web.listen-address=127.0.0.1:0", "--config.file=\(scratch.file)"])
        let offPort = try off.waitListening()
        let refused = try Self.request(offPort, "POST", "/-/reload")
        #expect(refused.status == 403 && refused.body.contains("Lifecycle API is not enabled"), "\(refused)")
        #expect(try off.stop().status == 0)

        let on = try ExporterProcess([
            "--web.listen-address=127.0.0.1:0", "--config.file=\(scratch.file)", "--web.enable-lifecycle",
        ])
        let port = try on.waitListening()
        let evil = try Self.request(port, "POST", "/-/reload", headers: "Origin: http://evil.example\r\n")
        #expect(evil.status == 403, "\(evil)")
        let fetch = try Self.request(port, "POST", "/-/reload", headers: "Sec-Fetch-Site: cross-site\r\n")
        #expect(fetch.status == 403, "\(fetch)")
        let sameOrigin = try Self.request(port, "POST", "/-/reload", headers: "Origin: http://127.0.0.1:\(port)\r\n")
        #expect(sameOrigin.status == 200, "\(sameOrigin)")
        // An unchanged file runs no extra round: the reload says so and the round count holds.
        try on.waitForLog("configuration reloaded, unchanged")
        #expect(try on.stop().status == 0)
    }

    @Test func withoutAConfigFileThereIsNothingToReload() throws {
        let exporter = try ExporterProcess([
            "--web.listen-address=127.0.0.1:0", "--no-path.monitor", "--probe.tcp=127.0.0.1:9",
            "--web.enable-lifecycle",
        ])
        let port = try exporter.waitListening()
        let r = try Self.request(port, "POST", "/-/reload")
        #expect(r.status == 400)
        #expect(r.body == "nothing to reload: the exporter was started without --config.file and --modules.file\n")
        #expect(!(try exporter.get("/metrics").body.contains("config_last_reload")))
        #expect(try exporter.stop().status == 0)
    }
}
