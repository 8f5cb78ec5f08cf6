import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

@Suite struct StatusPageTests {
    static func status(_ state: ConnectivityState, reason: VerdictReason? = nil) -> ReachabilityStatus {
        let ok = ProbeOutcome(
            name: "http://192.0.2.1/generate_204", type: .http, target: "http://192.0.2.1/generate_204", interface: nil,
            result: ProbeResult(
                status: .success, duration: .milliseconds(12),
                phases: [.connect: .milliseconds(2), .processing: .milliseconds(9)]), at: 990,
            lastSuccess: 990, recentRuns: 20, recentFailures: 1)
        let bad = ProbeOutcome(
            name: "<script>alert(1)</script>", type: .tcp, target: "x\"y", interface: "wan1",
            result: .failure(.refused, "connect: <refused>", duration: .milliseconds(1)), at: 990,
            recentRuns: 3, recentFailures: 3)
        return ReachabilityStatus(
            overall: ScopedVerdict(verdict: Verdict(state, reason: reason), since: 1000 - 3725),
            families: [
                .ipv4: ScopedVerdict(verdict: Verdict(.full), since: 900),
                .ipv6: ScopedVerdict(verdict: Verdict(.limited, reason: .probe(.timeout)), since: 950),
            ],
            uplinks: ["wan1": ScopedVerdict(verdict: Verdict(.limited, reason: .probe(.refused)), since: 980)],
            probes: [ok, bad], roundStarted: 990, roundDuration: .milliseconds(15), transitions: [], round: 7)
    }

    func page(_ s: ReachabilityStatus?) -> StatusPage {
        StatusPage(status: { s }, now: { 1000 })
    }

    @Test func showsTheVerdictWithReasonAndAge() {
        let html = page(Self.status(.limited, reason: .probe(.dns))).render()
        #expect(html.contains("<div class=\"verdict\" id=\"verdict\" data-state=\"limited\""))
        #expect(html.contains("<div class=\"state\">Limited</div><div class=\"why\">reason: dns · for 1h 2m</div>"))
        #expect(html.contains("id=\"scope-ipv4\" data-state=\"full\""))
        #expect(html.contains("id=\"scope-ipv6\" data-state=\"limited\""))
        #expect(html.contains("id=\"scope-uplink-wan1\" data-state=\"limited\""))
        #expect(html.contains("<meta http-equiv=\"refresh\""))
        #expect(!html.contains("<script>"), "probe names are escaped")
        #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;@wan1"))
        #expect(html.occurrences(of: "<tr class=\"probe\"") == 2)
        #expect(html.contains("data-status=\"failure\""))
        #expect(html.contains("<th title=\"runs that did not succeed, of the last 20\">Loss</th><th>Last success</th>"))
        #expect(
            html.contains("<td class=\"num\">5% <small>(1/20)</small></td><td>10s ago</td>"),
            "ok: one failure in 20, last success 10 s ago")
        #expect(html.contains("<td class=\"num\">100% <small>(3/3)</small></td><td>never</td>"), "bad: never succeeded")
        #expect(!html.contains("http://") || !html.contains("src=\"http"), "no external assets")
    }

    @Test(arguments: ConnectivityState.allCases)
    func everyStateHasTextNotJustColour(state: ConnectivityState) {
        let html = page(Self.status(state)).render()
        let style = HTML.style(state)
        #expect(html.contains("<div class=\"state\">\(style.label)</div>"))
    }

    @Test func beforeTheFirstRound() {
        let html = page(nil).render()
        #expect(html.contains("data-state=\"unknown\""))
        #expect(html.contains("Waiting for the first probe round."))
    }

    @Test func debugViewShowsOneProbe() throws {
        let p = page(Self.status(.full))
        let html = try #require(p.renderDebug(name: "<script>alert(1)</script>@wan1"))
        #expect(html.contains("reason: refused"))
        #expect(html.contains("detail: connect: &lt;refused&gt;"))
        #expect(html.contains("last success: never (since the exporter started)"))
        #expect(html.contains("recent runs failed: 3 of 3"))
        let ok = try #require(p.renderDebug(name: "http://192.0.2.1/generate_204"))
        #expect(ok.contains("last success: 1970-01-01T00:16:30"), "\(ok)")
        #expect(p.renderDebug(name: "nope") == nil)
    }

    @Test func routes() async {
        var routes = WebRoutes(registry: MetricsRegistry())
        routes.statusPage = page(Self.status(.full))
        #expect(
            await routes.handle(
                HTTPRequest(method: "GET", target: "/debug/probe?name=http%3A%2F%2F192.0.2.1%2Fgenerate_204")
            ).status == 200)
        #expect(await routes.handle(HTTPRequest(method: "GET", target: "/debug/probe?name=missing")).status == 404)
        #expect(await routes.handle(HTTPRequest(method: "GET", target: "/debug/probe")).status == 400)
        #expect(await routes.handle(HTTPRequest(method: "POST", target: "/")).status == 405)
        #expect(
            await routes.handle(HTTPRequest(method: "GET", target: "/")).headers.contains { $0.name == "Cache-Control" }
        )
    }

    @Test func ages() {
        #expect(HTML.age(0.25) == "250ms")
        #expect(HTML.age(59) == "59s")
        #expect(HTML.age(3725) == "1h 2m")
        #expect(HTML.age(90_000) == "1d 1h")
    }
}

extension String {
    func occurrences(of needle: String) -> Int {
        var count = 0
        var rest = self[...]
        while let r = rest.firstRange(of: needle) {
            count += 1
            rest = rest[r.upperBound...]
        }
        return count
    }
}
