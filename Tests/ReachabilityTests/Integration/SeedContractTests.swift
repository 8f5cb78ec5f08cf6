import ReachabilityTestSupport
import Synchronization
import Testing

@testable import ReachabilityVerdict

/// The seed-shaped entry point (`Configuration(httpProbeURL:icmpHost:)`) with a caller's URL:
/// 200–399 is an answer, as the seed libraries say, and what the evidence model knows of portals
/// still holds. Loopback servers, no path monitor, local targets trusted (the "internet" is here).
@Suite struct SeedContractTests {
    /// One round of the seed's configuration with only its HTTP check (the ICMP echo is left out:
    /// the verdict is the caller's URL's).
    func check(_ url: String) async -> ReachabilityStatus {
        let seed = Reachability.Configuration(httpProbeURL: url, icmpHost: "127.0.0.1", pathMonitoring: false)
        var c = Reachability.Configuration(
            probes: Array(seed.probes.prefix(1)), timeout: .seconds(2), pathMonitoring: false)
        c.trustsLocalTargets = true
        return await Reachability(configuration: c).check()
    }

    @Test(arguments: [200, 204, 301, 302, 399])
    func anyAnswerOf200To399Counts(status: Int) async throws {
        let location = (300...399).contains(status) ? [("Location", "/elsewhere")] : []
        let server = try LoopbackHTTPServer(behavior: .status(status, headers: location, body: "hello"))
        defer { server.stop() }
        let s = await check(server.url("/api/health"))
        #expect(s.probes.first?.result.status == .success, "\(status): \(s.probes.map(\.result.detail))")
        // An answer, but over plain HTTP not proof of the internet (aPlainHTTPAnswerAloneProvesNothing).
        #expect(s.state == .limited && s.reason == .unproven)
    }

    @Test func aRedirectToAnotherHostIsAPortal() async throws {
        let server = try LoopbackHTTPServer(
            behavior: .status(302, headers: [("Location", "http://login.portal.example/splash")]))
        defer { server.stop() }
        let s = await check(server.url("/api/health"))
        #expect(s.state == .portal)
        #expect(s.reason == .probe(.redirect))
        #expect(
            s.probes.first?.result.detail.contains("login.portal.example") == true, "\(s.probes.map(\.result.detail))")
        // Without a Location there is nowhere on the host it leads.
        let bare = try LoopbackHTTPServer(behavior: .status(302))
        defer { bare.stop() }
        #expect(await check(bare.url("/")).state == .portal)
    }

    /// Where a redirect leads is judged on the resolved URL, not on how `Location` spells it.
    @Test func aRedirectsHostIsTheResolvedOne() throws {
        let url = try ProbeURL("http://Health.Example:8080/api")
        #expect(HTTPProber.leavesHost(url, "/login") == nil)
        #expect(HTTPProber.leavesHost(url, "https://HEALTH.example/login") == nil)
        #expect(HTTPProber.leavesHost(url, "//portal.example/splash") == "//portal.example/splash")
        #expect(HTTPProber.leavesHost(url, "http://health.example@portal.example/") != nil)
        #expect(HTTPProber.leavesHost(url, nil) == "(no Location)")
        #expect(HTTPProber.leavesHost(url, "http://[::1") != nil)  // unreadable: not the same host
        // A hostile target's Location: control characters (not a URL reference: refused, so a
        // portal signal), a 64 KiB one, a NUL: never the host.
        #expect(HTTPProber.leavesHost(url, "/\u{1b}[2J\r\nSet-Cookie: x") != nil)
        #expect(HTTPProber.leavesHost(url, "http://" + String(repeating: "a", count: 65_536) + "/") != nil)
        #expect(HTTPProber.leavesHost(url, "http://health.example\u{0}.portal.example/") != nil)
    }

    /// A portal's DNS sends every name to itself: a public name answered from a private address
    /// is a portal signal; an address literal or a local name is the caller's own business.
    @Test func aPublicNameAnsweredFromPrivateSpaceIsAPortal() throws {
        let name = try ProbeURL("http://health.example.org/ok")
        #expect(HTTPProber.privateAnswer(name, "10.20.30.40")?.contains("private address 10.20.30.40") == true)
        #expect(HTTPProber.privateAnswer(name, "192.168.1.1") != nil)
        #expect(HTTPProber.privateAnswer(name, "fd00::1") != nil)
        #expect(HTTPProber.privateAnswer(name, "93.184.216.34") == nil)
        #expect(HTTPProber.privateAnswer(name, nil) == nil)
        #expect(HTTPProber.privateAnswer(try ProbeURL("http://10.0.0.1/ok"), "10.0.0.1") == nil)
        #expect(HTTPProber.privateAnswer(try ProbeURL("http://nas.local/ok"), "192.168.1.5") == nil)
        #expect(HTTPProber.privateAnswer(try ProbeURL("http://router/ok"), "192.168.1.1") == nil)
        #expect(HTTPExpectation.callersAnswer.privateAnswerIsPortal)
        #expect(!HTTPExpectation.noContent.privateAnswerIsPortal)  // Probe.http keeps its contract
    }

    @Test func statusesOutsideTheRangeAreNotAnswers() async throws {
        let portal = try LoopbackHTTPServer(behavior: .status(511, body: "log in"))
        defer { portal.stop() }
        let s = await check(portal.url("/api/health"))
        #expect(s.state == .portal)
        #expect(s.reason == .probe(.networkAuthenticationRequired))
        let missing = try LoopbackHTTPServer(behavior: .status(404))
        defer { missing.stop() }
        #expect(await check(missing.url("/")).state != .full)
    }

    /// A check URL keeps its check's answer: a login page (200) in its place is a portal.
    @Test func aCheckURLStillWantsItsAnswer() async throws {
        let page = try LoopbackHTTPServer(behavior: .status(200, body: "<html>Welcome, log in</html>"))
        defer { page.stop() }
        let s = await check(page.url("/generate_204"))
        #expect(s.state == .portal, "\(s.probes.map(\.result.detail))")
        // The table's own entries (no host written here: these are only parsed, never reached),
        // the host in any case.
        #expect(HTTPExpectation.forCallersURL(Probe.defaultHTTPURL) == .noContent)
        for (place, expectation) in HTTPExpectation.knownChecks {
            let slash = place.firstIndex(of: "/") ?? place.endIndex
            let url = "http://" + place[..<slash].uppercased() + place[slash...]
            #expect(HTTPExpectation.forCallersURL(url) == expectation, "\(url)")
        }
        #expect(HTTPExpectation.forCallersURL("https://example.org/") == .callersAnswer)
        #expect(HTTPExpectation.forCallersURL("not a url") == .callersAnswer)
    }

    /// Over plain HTTP a 200–399 answer is local evidence (a portal's page answers so too): it
    /// cannot make the round full unless local targets are trusted.
    @Test func aPlainHTTPAnswerAloneProvesNothing() async throws {
        let server = try LoopbackHTTPServer(behavior: .status(200, body: "ok"))
        defer { server.stop() }
        let seed = Reachability.Configuration(httpProbeURL: server.url("/"), pathMonitoring: false)
        #expect(seed.probes.first?.spec.evidence == .local)
        let verified = Reachability.Configuration(httpProbeURL: "https://example.org/", pathMonitoring: false)
        #expect(verified.probes.first?.spec.evidence == .internet)
    }
}

/// The log hook: the library writes nothing by itself; with a hook, the app gets each record.
@Suite struct ReachabilityLogHookTests {
    final class Sink: Sendable {
        let records = Mutex<[ReachabilityLogRecord]>([])
        var hook: @Sendable (ReachabilityLogRecord) -> Void { { r in self.records.withLock { $0.append(r) } } }
        var all: [ReachabilityLogRecord] { records.withLock { $0 } }
    }

    @Test func problemsAtStartAndEveryCheckReachTheHook() async throws {
        let sink = Sink()
        var c = Reachability.Configuration(
            probes: [.http("ftp://nowhere/")], timeout: .seconds(1), pathMonitoring: false)
        c.log = sink.hook
        c.logLevel = .debug
        let r = Reachability(configuration: c)
        let start = sink.all
        #expect(start.contains { $0.level == .warn && $0.message == "cannot check as configured" })
        // The probe set cannot prove the internet (it has no usable probe): said once, as a warning.
        _ = await r.check()
        let checked = sink.all.filter { $0.message == "checked" }
        #expect(checked.count == 1)
        #expect(checked.first?.level == .debug)
        #expect(checked.first?.fields.first { $0.key == "state" }?.value == "limited")
        #expect(checked.first?.logfmt.hasPrefix("level=DEBUG source=Reachability.swift:") == true)
        #expect(checked.first?.logfmt.contains(" msg=checked state=limited reason=error") == true)
    }

    /// A URL's user information never reaches the app's log (the exporter's rule for secrets).
    @Test func credentialsInAProblemAreRedacted() throws {
        let sink = Sink()
        var c = Reachability.Configuration(probes: [.http("gopher://user:s3cret@example.org/")], pathMonitoring: false)
        c.log = sink.hook
        _ = Reachability(configuration: c)
        let warned = sink.all.filter { $0.message == "cannot check as configured" }
        #expect(warned.count == 1)
        #expect(!warned.contains { $0.logfmt.contains("s3cret") || $0.fields.contains { $0.value.contains("s3cret") } })
        #expect(warned.first?.fields.first?.value.contains(Redaction.credentials) == true, "\(warned.map(\.logfmt))")
    }

    @Test func theLevelFiltersAndNoHookMeansNoLog() async throws {
        let sink = Sink()
        var c = Reachability.Configuration(probes: [.http("ftp://nowhere/")], pathMonitoring: false)
        c.log = sink.hook
        c.logLevel = .error
        _ = await Reachability(configuration: c).check()
        #expect(sink.all.isEmpty, "\(sink.all.map(\.logfmt))")
        #expect(Reachability.Configuration(probes: []).log == nil)
    }

    @Test func monitoringLogsEachChangeOnce() async throws {
        let listener = try TCPTestListener()
        defer { listener.stop() }
        let sink = Sink()
        var c = Reachability.Configuration(
            probes: [.tcp("127.0.0.1", port: listener.address.port)], timeout: .seconds(2),
            interval: .milliseconds(200), pathMonitoring: false)
        c.trustsLocalTargets = true
        c.log = sink.hook
        let r = Reachability(configuration: c)
        var rounds = 0
        for await _ in r.statusStream {
            rounds += 1
            if rounds == 3 { break }
        }
        // Bounded wait for the logging task to see the rounds (not a timing claim).
        for _ in 0..<200 where !sink.all.contains(where: { $0.message == "reachability changed" }) {
            try await Task.sleep(for: .milliseconds(10))
        }
        let changes = sink.all.filter { $0.message == "reachability changed" }
        #expect(changes.count == 1, "\(changes.map(\.logfmt))")
        #expect(changes.first?.fields.map(\.key) == ["state", "reason", "connection"])
        #expect(changes.first?.fields.first?.value == "full")
    }
}
