import Glibc
import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// Issue #43: the RFC 8908 API read as RFC 8908 says, learned where RFC 8910 puts it, and what
/// a hostile API can change: nothing but its own error counter.
@Suite(.serialized) struct CaptivePortalAPITests {
    static let captive =
        #"{"captive": true, "user-portal-url": "https://portal.example/login", "seconds-remaining": 60}"#

    static func answer(_ body: String, type: String = "application/captive+json", status: Int = 200)
        -> LoopbackHTTPBehavior
    {
        .status(
            status, status == 200 ? "OK" : "X", headers: [("Content-Type", type), ("Cache-Control", "max-age=30")],
            body: body)
    }

    static func fetch(_ server: LoopbackHTTPServer, path: String = "/api", caFile: String?) async
        -> Result<(answer: CaptivePortalAnswer, maxAge: Double?), CaptivePortalProblem>
    {
        let url = try! ProbeURL(server.url(path).replacingOccurrences(of: "127.0.0.1", with: "localhost"))
        return await CaptivePortalClient.fetch(url, interface: nil, caFile: caFile, deadline: .now + .seconds(3))
    }

    @Test func aTrustedAPIAnswers() async throws {
        let certs = try TestCertificates.shared()
        let server = try LoopbackHTTPServer(tls: try certs.valid.identity(), behavior: Self.answer(Self.captive))
        defer { server.stop() }
        let (answer, maxAge) = try await Self.fetch(server, caFile: certs.caFile).get()
        #expect(answer.captive && answer.userPortalURL == "https://portal.example/login" && maxAge == 30)
        #expect(server.requests.first?.lowercased().contains("accept: application/captive+json") == true)
    }

    @Test func hostileAPIsGiveOnlyAProblem() async throws {
        let certs = try TestCertificates.shared()
        let cases: [(LoopbackHTTPBehavior, TestCertificates.Pair, CaptivePortalProblem.Kind)] = [
            (Self.answer(Self.captive, type: "text/html"), certs.valid, .contentType),
            (Self.answer(Self.captive), certs.wrongHost, .tls),
            (Self.answer(Self.captive), certs.selfSigned, .tls),
            (.status(302, "Found", headers: [("Location", "https://elsewhere.example/")]), certs.valid, .redirect),
            (Self.answer(Self.captive, status: 500), certs.valid, .status),
            (Self.answer(String(repeating: " ", count: 70_000) + Self.captive), certs.valid, .tooLarge),
            (Self.answer(#"{"captive": "yes"}"#), certs.valid, .invalid),
            (Self.answer(#"{"captive": true, "captive": false}"#), certs.valid, .invalid),
            (Self.answer(#"{"user-portal-url": "https://x/"}"#), certs.valid, .invalid),
            (Self.answer(#"{"captive": true, "user-portal-url": "https://x/\u0007"}"#), certs.valid, .invalid),
            (Self.answer(#"{"captive": true, "bytes-remaining": 1e300}"#), certs.valid, .invalid),
            (
                Self.answer(
                    #"{"captive": true, "user-portal-url": "https://x/"# + String(repeating: "a", count: 100_000)
                        + "\"}"),
                certs.valid, .tooLarge
            ),
        ]
        for (behavior, pair, kind) in cases {
            let server = try LoopbackHTTPServer(tls: try pair.identity(), behavior: behavior)
            defer { server.stop() }
            let result = await Self.fetch(server, caFile: certs.caFile)
            guard case .failure(let problem) = result else {
                Issue.record("expected \(kind), got an answer")
                continue
            }
            #expect(problem.kind == kind, "\(problem)")
        }
    }

    @Test func aSlowAPIEndsAtTheDeadline() async throws {
        let certs = try TestCertificates.shared()
        let server = try LoopbackHTTPServer(
            tls: try certs.valid.identity(),
            behavior: .drip("HTTP/1.1 200 OK\r\nContent-Type: application/captive+json\r\n", intervalMS: 400))
        defer { server.stop() }
        let url = try ProbeURL(server.url("/api").replacingOccurrences(of: "127.0.0.1", with: "localhost"))
        let started = ContinuousClock.now
        let result = await CaptivePortalClient.fetch(
            url, interface: nil, caFile: certs.caFile, deadline: .now + .seconds(1))
        #expect(ContinuousClock.now - started < .seconds(3))
        guard case .failure(let problem) = result else {
            Issue.record("a slow API answered")
            return
        }
        #expect(problem.kind == .timeout)
    }

    @Test func onlyHTTPSURIsAreRead() {
        #expect((try? CaptivePortalSources.check("https://portal.example/api").get())?.host == "portal.example")
        for bad in ["http://portal.example/api", "https://a b/", "https://user:pw@portal.example/", "ftp://x/", ""] {
            guard case .failure(let p) = CaptivePortalSources.check(bad) else {
                Issue.record("accepted \(bad)")
                continue
            }
            #expect(p.kind == .uri)
        }
        #expect((try? CaptivePortalSources.check("https://x/" + String(repeating: "a", count: 3000)).get()) == nil)
    }

    @Test func howLongAnAnswerIsKept() {
        var a = CaptivePortalAnswer(captive: true)
        #expect(CaptivePortalWatch.hold(a, maxAge: 3600) == .seconds(5), "captive: read again every round")
        a.captive = false
        #expect(CaptivePortalWatch.hold(a, maxAge: nil) == .seconds(300))
        #expect(CaptivePortalWatch.hold(a, maxAge: 0) == .seconds(5), "never more often than 5 s")
        a.secondsRemaining = 42
        #expect(CaptivePortalWatch.hold(a, maxAge: 3600) == .seconds(42), "re-read when the session ends")
        #expect(CaptivePortalWatch.hold(a, maxAge: 7) == .seconds(7))
        #expect(CaptivePortalClient.maxAge("public, max-age=120") == 120)
        #expect(CaptivePortalClient.maxAge("no-store") == 0)
        #expect(CaptivePortalClient.maxAge("max-age=-1") == nil)
    }

    /// A scratch directory of the hook-file contract, mode 0755.
    static func scratch() -> String {
        var template = Array("/tmp/rx-captive-XXXXXX".utf8CString)
        let dir = String(cString: mkdtemp(&template)!)
        chmod(dir, 0o755)
        return dir
    }

    static func write(_ path: String, _ text: String, mode: mode_t = 0o644) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode)
        _ = text.withCString { Glibc.write(fd, $0, strlen($0)) }
        close(fd)
        chmod(path, mode)
    }

    @Test func sourcesInTheirOrderAndOnlyTrustedHookFiles() throws {
        let dir = Self.scratch()
        defer { _ = system("rm -rf '\(dir)'") }
        var settings = CaptivePortalSettings()
        settings.directory = dir + "/hooks"
        settings.networkdDirectory = dir + "/links"
        mkdir(dir + "/hooks", 0o755)
        mkdir(dir + "/links", 0o755)
        let ra = RouterAnnouncement(
            interfaceIndex: 2, interfaceName: "wlan0", captivePortalAPI: "https://ra.example/api")
        var ignored: [String] = []
        func find() -> (CaptivePortalSource, String)? {
            ignored = []
            return CaptivePortalSources.find(
                interface: "wlan0", index: 2, announced: ra, settings: settings, ignored: &ignored
            ).map { ($0.source, (try? $0.uri.get().description) ?? "refused") }
        }
        #expect(find()?.0 == .ra)
        Self.write(
            dir + "/links/2",
            "# This is private data. Do not parse.\nADMIN_STATE=configured\nCAPTIVE_PORTAL=https://networkd.example/api\n"
        )
        #expect(find()?.0 == .networkd && find()?.1 == "https://networkd.example/api")
        Self.write(dir + "/hooks/wlan0.dhcp6", "https://six.example/api\n")
        #expect(find()?.0 == .dhcp6)
        Self.write(dir + "/hooks/wlan0.dhcp4", "https://four.example/api\n", mode: 0o666)
        #expect(find()?.0 == .dhcp6, "a world-writable hook file is not believed")
        #expect(ignored == [dir + "/hooks/wlan0.dhcp4"], "and it is said")
        Self.write(dir + "/hooks/wlan0.dhcp4", "https://four.example/api\n")
        #expect(find()?.0 == .dhcp4)
        unlink(dir + "/hooks/wlan0.dhcp4")
        symlink(dir + "/links/2", dir + "/hooks/wlan0.dhcp4")
        #expect(find()?.0 == .dhcp6, "a symbolic link is not followed")
        chmod(dir + "/hooks", 0o777)
        #expect(find()?.0 == .networkd, "nothing in a world-writable directory is believed")
        Self.write(dir + "/hooks/wlan0.dhcp4", "http://plain.example/\n")
        chmod(dir + "/hooks", 0o755)
        unlink(dir + "/hooks/wlan0.dhcp4")
        Self.write(dir + "/hooks/wlan0.dhcp4", "http://plain.example/\n")
        #expect(find()?.0 == .dhcp4 && find()?.1 == "refused", "an http URI is the dhcp4 source's, refused")
        settings.api["wlan0"] = "https://operator.example/api"
        #expect(find()?.0 == .config)
    }

    @Test func theWatchCountsFailuresAndForgetsWhatAFailureFollows() async throws {
        let certs = try TestCertificates.shared()
        let server = try LoopbackHTTPServer(tls: try certs.valid.identity(), behavior: Self.answer(Self.captive))
        defer { server.stop() }
        let watch = CaptivePortalWatch()
        var settings = CaptivePortalSettings()
        settings.caFile = certs.caFile
        settings.directory = "/nonexistent"
        settings.api["eth0"] = server.url("/api").replacingOccurrences(of: "127.0.0.1", with: "localhost")
        let eth0 = CaptivePortalWatch.Interface(name: "eth0", index: 2, bound: false)
        let first = await watch.refresh([eth0], announcements: [], settings: settings, timeout: .seconds(2), now: 100)
        #expect(first.map(\.captive) == [true] && first.first?.source == .config)
        #expect(first.first?.secondsRemaining(at: 130) == 30)
        settings.api["eth0"] = "https://127.0.0.1:1/api"
        let second = await watch.refresh([eth0], announcements: [], settings: settings, timeout: .seconds(2), now: 101)
        #expect(second.first?.answer == nil && second.first?.problem?.kind == .connect)
        #expect(watch.errors[.connect] == 1)
        settings.enabled = false
        #expect(
            await watch.refresh([eth0], announcements: [], settings: settings, timeout: .seconds(2), now: 102).isEmpty)
    }
}

/// What the network wrote, shown: bounded, escaped, one series per interface.
@Suite struct CaptivePortalOutputTests {
    static func status() -> ReachabilityStatus {
        var answer = CaptivePortalAnswer(captive: true)
        answer.userPortalURL = "https://portal.example/login?a=1&b=\"<x>\""
        answer.secondsRemaining = 300
        answer.bytesRemaining = 1e15
        var s = StatusPageTests.status(.portal, reason: .captivePortalAPI)
        s.captivePortals = [
            CaptivePortalState(
                interface: "wlan0", source: .dhcp4, api: "https://portal.example/api", answer: answer, answeredAt: 990),
            CaptivePortalState(
                interface: "wwan0", source: .ra, api: "", problem: CaptivePortalProblem(.uri, "not https")),
        ]
        s.captivePortalErrors = [.uri: 1]
        return s
    }

    @Test func checkSaysWhereToLogIn() {
        let s = Self.status()
        let text = CheckCommand.renderText(s)
        #expect(
            text.contains(
                "  captive portal on wlan0 (dhcp4, https://portal.example/api): captive, log in at https://portal.example/login?a=1&b=\"<x>\"; 300 s left"
            ))
        #expect(text.contains("  captive portal on wwan0 (ra): no answer: not https"))
        let json = CheckCommand.renderJSON(s, traces: nil)
        #expect(
            json.contains(
                #""captive_portals":[{"interface":"wlan0","source":"dhcp4","api":"https://portal.example/api","captive":true,"user_portal_url":"https://portal.example/login?a=1&b=\"<x>\"","venue_info_url":null,"seconds_remaining":300,"bytes_remaining":1000000000000000,"can_extend_session":null,"error":null,"error_reason":null}"#
            ))
        #expect(json.contains(#""error":"not https","error_reason":"uri"}]"#))
    }

    @Test func theStatusPageLinksToTheLoginEscaped() {
        let html = StatusPage(status: { Self.status() }, now: { 1000 }).render()
        #expect(
            html.contains(
                #"<a href="https://portal.example/login?a=1&amp;b=&quot;&lt;x&gt;&quot;" rel="noopener noreferrer">log in at"#
            ))
        #expect(!html.contains("<x>"))
        #expect(html.contains(#"id="captive-portal-wlan0" data-captive="true""#))
    }

    @Test func metricsAreReplacedNotAdded() {
        let registry = MetricsRegistry()
        let metrics = CaptivePortalMetrics(registry: registry)
        var s = Self.status()
        metrics.roundCompleted(s)
        var text = registry.renderString()
        #expect(text.contains(#"reachability_captive_portal_captive{interface="wlan0"} 1"#))
        #expect(text.contains(#"reachability_captive_portal_seconds_remaining{interface="wlan0"} 300"#))
        #expect(text.contains(#"reachability_captive_portal_api_errors_total{reason="uri"} 1"#))
        #expect(text.contains(#"reachability_captive_portal_api_errors_total{reason="tls"} 0"#))
        s.captivePortals[0].answer?.userPortalURL = "https://portal.example/" + String(repeating: "é", count: 400)
        metrics.roundCompleted(s)
        text = registry.renderString()
        let infos = text.split(separator: "\n").filter {
            $0.hasPrefix("reachability_captive_portal_info{interface=\"wlan0\"")
        }
        #expect(infos.count == 1, "one series per interface")
        #expect(infos.first.map { $0.utf8.count < 1200 } == true, "labels cut at 512 bytes")
        s.captivePortals = []
        metrics.roundCompleted(s)
        #expect(!registry.renderString().contains("reachability_captive_portal_info{"))
    }
}

/// The independent lab's finds: an ignored file counted once, an empty untrusted directory
/// silent, an oversized hook file a `uri` problem, a missing `ca_file` a configuration error.
@Suite struct CaptivePortalHookFileTests {
    @Test func ignoredOnceAndOnlyWhatExists() async throws {
        let dir = CaptivePortalAPITests.scratch()
        defer { _ = system("rm -rf '\(dir)'") }
        var settings = CaptivePortalSettings()
        settings.directory = dir
        settings.networkdDirectory = dir + "/none"
        let watch = CaptivePortalWatch()
        let eth0 = CaptivePortalWatch.Interface(name: "eth0", index: 2, bound: false)
        chmod(dir, 0o777)
        _ = await watch.refresh(
            [eth0, eth0, eth0], announcements: [], settings: settings, timeout: .seconds(1), now: 1)
        #expect(watch.ignoredHookFiles.isEmpty && (watch.errors[.untrusted] ?? 0) == 0, "no file, nothing to say")
        CaptivePortalAPITests.write(dir + "/eth0.dhcp4", "https://x.example/api\n")
        for _ in 0..<3 {
            _ = await watch.refresh(
                [eth0, eth0, eth0], announcements: [], settings: settings, timeout: .seconds(1), now: 2)
        }
        #expect(watch.ignoredHookFiles == [dir + "/eth0.dhcp4"])
        #expect(watch.errors[.untrusted] == 1, "once, when it appears")
    }

    @Test func anOversizedFirstLineIsAURIProblem() throws {
        let dir = CaptivePortalAPITests.scratch()
        defer { _ = system("rm -rf '\(dir)'") }
        var settings = CaptivePortalSettings()
        settings.directory = dir
        var ignored: [String] = []
        CaptivePortalAPITests.write(
            dir + "/eth0.dhcp4", "https://x.example/?u=" + String(repeating: "q", count: 5000) + "\n")
        let long = CaptivePortalSources.find(
            interface: "eth0", index: nil, announced: nil, settings: settings, ignored: &ignored)
        guard case .failure(let problem) = long?.uri else { return #expect(Bool(false), "not refused") }
        #expect(problem.kind == .uri && ignored.isEmpty)
        CaptivePortalAPITests.write(
            dir + "/eth0.dhcp4", "https://x.example/api\n" + String(repeating: "q", count: 10_000))
        let firstLine = CaptivePortalSources.find(
            interface: "eth0", index: nil, announced: nil, settings: settings, ignored: &ignored)
        #expect((try? firstLine?.uri.get())?.description == "https://x.example/api")
    }

    @Test func aMissingCAFileIsAConfigurationError() throws {
        let text = "captive_portal:\n  ca_file: /nonexistent/ca.pem\n"
        #expect(throws: ConfigError.self) { try ConfigLoader.parse(text, file: "t.yml") }
    }
}
