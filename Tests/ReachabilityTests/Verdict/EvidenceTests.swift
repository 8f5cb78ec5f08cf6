import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// The evidence model (docs/evidence.md): which results can make a round `full`,
/// which can only degrade it, and how the scopes agree.
@Suite struct EvidenceTests {
    static func ok(_ type: ProbeType, _ evidence: Evidence, _ name: String = "") -> RoundEntry {
        RoundEntry(
            name: name.isEmpty ? type.rawValue : name, type: type,
            result: ProbeResult(status: .success, duration: .milliseconds(5)), evidence: evidence)
    }
    static func fail(_ type: ProbeType, _ reason: FailureReason, _ evidence: Evidence? = nil, _ name: String = "")
        -> RoundEntry
    {
        RoundEntry(
            name: name.isEmpty ? type.rawValue : name, type: type, result: .failure(reason, "x", duration: .seconds(1)),
            evidence: evidence)
    }
    static func portal(_ type: ProbeType, _ reason: FailureReason) -> RoundEntry {
        RoundEntry(
            name: type.rawValue, type: type,
            result: ProbeResult(status: .portal, reason: reason, duration: .milliseconds(5)))
    }

    struct Row: Sendable, CustomTestStringConvertible {
        let name: String
        let entries: [RoundEntry]
        var policy: VerdictPolicy = .parallel
        var familyScope = false
        let expected: Verdict
        var testDescription: String { name }
    }

    static let quorum2 = VerdictPolicy.quorum(minimum: 2, fraction: nil)

    static let rows: [Row] = [
        // The two findings of the router lab.
        Row(
            name: "router's DNS cache answers, every other probe times out (WAN down, blackhole)",
            entries: [
                fail(.http, .timeout), fail(.https, .timeout), fail(.icmp, .timeout),
                fail(.icmp, .unreachable, nil, "v6"), ok(.dns, .local),
            ],
            expected: Verdict(.limited, reason: .probe(.timeout))),
        Row(
            name: "a portal's 511 beats the local DNS answer",
            entries: [portal(.http, .networkAuthenticationRequired), fail(.https, .timeout), ok(.dns, .local)],
            expected: Verdict(.portal, reason: .probe(.networkAuthenticationRequired))),
        // What cannot prove.
        Row(
            name: "DNS-only configuration, every lookup answered", entries: [ok(.dns, .local), ok(.dns, .local, "b")],
            expected: Verdict(.limited, reason: .unproven)),
        Row(
            name: "the gateway answers ICMP, nothing beyond does", entries: [ok(.icmp, .local), fail(.http, .timeout)],
            expected: Verdict(.limited, reason: .probe(.timeout))),
        Row(
            name: "an interceptor completes TCP to port 443", entries: [ok(.tcp, .local)],
            expected: Verdict(.limited, reason: .unproven)),
        Row(
            name: "a portal page answers a plain-HTTP web check", entries: [ok(.http, .local), fail(.icmp, .timeout)],
            expected: Verdict(.limited, reason: .probe(.timeout))),
        Row(
            name: "only local targets, refused: the failure, not 'unproven'", entries: [fail(.tcp, .refused, .local)],
            expected: Verdict(.limited, reason: .probe(.refused))),
        // What the path answered in the target's place names the round (issue: on-path evidence).
        Row(
            name: "the gateway forges echo replies while HTTP(S) time out (uplink down)",
            entries: [
                fail(.http, .timeout), fail(.https, .timeout), fail(.icmp, .forgedReply),
                fail(.icmp, .forgedReply, nil, "v6"),
                ok(.dns, .local),
            ],
            expected: Verdict(.limited, reason: .probe(.forgedReply))),
        Row(
            name: "a middlebox completes every handshake, the DNS query fails",
            entries: [fail(.tcp, .intercepted), fail(.tcp, .intercepted, nil, "b"), fail(.dns, .timeout)],
            expected: Verdict(.limited, reason: .probe(.intercepted))),
        Row(
            name: "an intercepted TCP probe beside a verified HTTPS answer: full",
            entries: [ok(.https, .internet), fail(.tcp, .intercepted)],
            expected: Verdict(.full)),
        // What can.
        Row(
            name: "ICMP from beyond the gateway with a local DNS answer",
            entries: [ok(.icmp, .internet), ok(.dns, .local)],
            expected: Verdict(.full)),
        Row(
            name: "captive HTTP check beyond the gateway", entries: [ok(.http, .internet), fail(.icmp, .timeout)],
            expected: Verdict(.full)),
        // Local evidence still degrades and counts toward a quorum.
        Row(
            name: "DNS fails while a local ICMP succeeds", entries: [ok(.icmp, .local), fail(.dns, .timeout)],
            expected: Verdict(.limited, reason: .probe(.dns))),
        Row(
            name: "quorum 2: one internet and one local success",
            entries: [ok(.icmp, .internet), ok(.dns, .local), fail(.http, .timeout)],
            policy: quorum2, expected: Verdict(.full)),
        Row(
            name: "quorum 2: two local successes, the internet probe fails",
            entries: [ok(.dns, .local), ok(.tcp, .local), fail(.http, .refused)],
            policy: quorum2, expected: Verdict(.limited, reason: .probe(.refused))),
        Row(
            name: "quorum 2: the internet probe succeeds, too few in all",
            entries: [ok(.http, .internet), fail(.dns, .servfail), fail(.tcp, .reset, .local)],
            policy: quorum2, expected: Verdict(.limited, reason: .probe(.dns))),
        // A family's scope caps quorum:N at its own probe count.
        Row(
            name: "quorum 2 in a family with one probe", entries: [ok(.icmp, .internet)], policy: quorum2,
            familyScope: true, expected: Verdict(.full)),
        Row(
            name: "quorum 2 overall with one probe", entries: [ok(.icmp, .internet)], policy: quorum2,
            expected: Verdict(.limited, reason: .quorum)),
    ]

    @Test(arguments: rows)
    func classification(_ row: Row) {
        let verdict = RoundClassifier.classify(
            pathUnsatisfiedReason: nil, entries: row.entries, policy: row.policy, familyScope: row.familyScope)
        #expect(verdict == row.expected)
    }

    // MARK: - What each probe kind can prove

    static func flagSpecs(_ args: [String]) throws -> [ProbeSpec] {
        let flags = try FlagParser(ProbeFlags.specs).parse(args)
        return try ProbeFlags.probes(flags, environment: [ProbeFlags.refuseDefaultsVariable: "1"])
    }

    @Test(arguments: [
        ("--probe.dns=example.com", Evidence.local),
        ("--probe.dns=example.com@192.0.2.53", .local),
        ("--probe.dns=example.com@tcp://192.0.2.53", .local),
        ("--probe.dns=example.com@udp://192.0.2.53:5353", .local),
        ("--probe.dns=example.com@tls://192.0.2.53", .internet),
        ("--probe.http=http://192.0.2.1/generate_204", .internet),
        ("--probe.http=https://192.0.2.1/generate_204", .internet),
        ("--probe.tcp=192.0.2.1:80", .local),
        ("--probe.tcp=192.0.2.1:443", .local),
        ("--probe.tcp=192.0.2.1:53", .local),
        ("--probe.tcp=192.0.2.1:22", .internet),
        ("--probe.icmp=192.0.2.1", .internet),
    ])
    func flagProbes(_ flag: String, _ evidence: Evidence) throws {
        #expect(try Self.flagSpecs([flag]).first?.evidence == evidence)
    }

    @Test func webChecksProveOnlyOverVerifiedHTTPS() throws {
        #expect(try HTTPProbeConfig(url: "http://192.0.2.1/", mode: .web).evidence == .local)
        #expect(try HTTPProbeConfig(url: "https://192.0.2.1/", mode: .web).evidence == .internet)
        #expect(try HTTPProbeConfig(url: "https://192.0.2.1/", mode: .web, insecureSkipVerify: true).evidence == .local)
        #expect(try HTTPProbeConfig(url: "http://192.0.2.1/generate_204").evidence == .internet)
    }

    /// Over plain HTTP a captive check proves only with an answer no portal gives by itself.
    @Test(arguments: [
        (["--probe.http.expect-status=204"], Evidence.internet),
        (["--probe.http.expect-status=200-399"], .local),
        (["--probe.http.expect-status=2xx"], .local),
        (["--probe.http.expect-status=200"], .local),
        (["--probe.http.expect-status=204,302"], .local),
        (["--probe.http.expect-status=201-299"], .internet),
        (["--probe.http.expect-status=200-399", "--probe.http.expect-body=Success"], .internet),
    ])
    func captiveStatusSetsProveOnlyWhatAPortalCannotAnswer(_ flags: [String], _ evidence: Evidence) throws {
        #expect(try Self.flagSpecs(["--probe.http=http://192.0.2.1/generate_204"] + flags).first?.evidence == evidence)
        // Over verified HTTPS, the certificate proves whatever the status set.
        #expect(
            try Self.flagSpecs(["--probe.http=https://192.0.2.1/generate_204"] + flags).first?.evidence == .internet)
    }

    @Test func configFileProbesCarryTheirEvidence() throws {
        let block =
            "probes:\n  - name: web\n    type: http\n    target: \"http://192.0.2.1/\"\n    http:\n      mode: web\n"
            + "  - name: dns\n    type: dns\n    target: example.com\n  - name: ssh\n    type: tcp\n    target: \"192.0.2.1:22\"\n"
        let config = try ConfigLoader.parse(block, file: "t.yml")
        let specs = try config.probes.map { try ConfigProbeBuilder.spec($0, file: "t.yml") }
        #expect(specs.map(\.evidence) == [.local, .local, .internet])
    }

    @Test func aConfigurationThatCannotProveIsWarnedAbout() throws {
        let dnsOnly = try Self.flagSpecs(["--probe.dns=example.com", "--probe.tcp=192.0.2.1:443"])
        let warning = try #require(ProbeSpec.evidenceWarning(dnsOnly, policy: .parallel))
        #expect(warning.contains("the verdict will never be full"))
        let mixed = try Self.flagSpecs(["--probe.dns=example.com", "--probe.icmp=192.0.2.1"])
        #expect(ProbeSpec.evidenceWarning(mixed, policy: .parallel) == nil)
        // Only the probes the policy counts matter: under `http` the ICMP probe cannot help.
        let dnsAndICMP = try Self.flagSpecs(["--probe.dns=example.com", "--probe.tcp=192.0.2.1:22"])
        #expect(ProbeSpec.evidenceWarning(dnsAndICMP, policy: .parallel) == nil)
    }

    // MARK: - Where the answer came from

    @Test(arguments: [
        ("127.0.0.1", true), ("127.8.9.10", true), ("0.0.0.0", true), ("169.254.1.1", true), ("::1", true),
        ("::", true),
        ("fe80::1", true), ("::ffff:127.0.0.1", true), ("::ffff:169.254.0.9", true),
        ("192.0.2.1", false), ("10.0.0.1", false), ("2001:db8::1", false), ("not an address", false),
    ])
    func intrinsicLocality(_ address: String, _ local: Bool) {
        #expect(AddressLocality.isIntrinsicallyLocal(address) == local)
    }

    @Test(arguments: [
        ("192.0.2.2", true),  // the host's own
        ("192.0.2.77", true),  // on-link (192.0.2.0/24)
        ("192.0.2.1", true),  // the gateway
        ("198.51.100.1", false),  // beyond the gateway
        ("2001:db8::99", true),  // on-link (2001:db8::/64)
        ("2001:db8:1::1", false),
        ("fe80::1", true),  // the IPv6 gateway, link-local
        ("203.0.113.9", true),  // an on-link gateway outside every prefix (`onlink` route)
        ("10.1.2.3", false),  // private but routed: beyond the gateway
    ])
    func snapshotLocality(_ address: String, _ local: Bool) {
        var snapshot = FakePathSource.snapshot()
        snapshot.defaultRoutes.append(
            DefaultRoute(family: .ipv4, gateway: "203.0.113.9", interfaceIndex: 2, interfaceName: "eth0", metric: 200))
        #expect(snapshot.isLocal(address: address) == local)
    }

    @Test func prefixComparisonStopsAtTheLength() {
        #expect(AddressLocality.samePrefix([192, 0, 2, 130], [192, 0, 2, 129], length: 25))
        #expect(!AddressLocality.samePrefix([192, 0, 2, 130], [192, 0, 2, 1], length: 25))
        #expect(AddressLocality.samePrefix([10, 0, 0, 0], [10, 255, 1, 1], length: 8))
        #expect(!AddressLocality.samePrefix([10, 0, 0, 0], [10, 0, 0], length: 8))
    }
}

/// The monitor decides evidence from the path and keeps the scopes in agreement.
@Suite struct EvidenceMonitorTests {
    static func result(_ status: ProbeStatus, _ address: String?, _ family: IPFamily?) -> ProbeResult {
        var r =
            status == .success
            ? ProbeResult(status: .success, duration: .milliseconds(2)) : .failure(.timeout, "x", duration: .seconds(1))
        r.address = address
        r.family = family
        return r
    }

    func monitor(
        _ probes: [(String, ProbeType, ProbeResult)], path: FakePathSource = FakePathSource(),
        policy: VerdictPolicy = .parallel, trustLocal: Bool = false
    ) -> ReachabilityMonitor<ManualClock> {
        let clock = ManualClock()
        let specs = probes.map { name, type, result -> ProbeSpec in
            let prober = ScriptedProber(type: type, clock: clock)
            prober.set(result)
            return ProbeSpec(name: name, type: type, target: name) { _ in prober }
        }
        var s = MonitorSettings()
        s.verdict = VerdictSettings(policy: policy, failAfter: 2, recoverAfter: 2, trustLocalTargets: trustLocal)
        return ReachabilityMonitor(
            probes: specs, settings: s, path: SnapshotPathGate(path), clock: clock, wallClock: { 0 })
    }

    @Test func anAnswerFromTheGatewayOrAnOnLinkHostIsNoEvidence() async {
        for address in ["192.0.2.1", "192.0.2.50", "127.0.0.1"] {
            let m = monitor([("icmp", .icmp, Self.result(.success, address, .ipv4))])
            let status = await m.check()
            #expect(status.overall.verdict == Verdict(.limited, reason: .unproven), "\(address)")
            #expect(status.families[.ipv4]?.verdict == Verdict(.limited, reason: .unproven), "\(address)")
        }
        let beyond = await monitor([("icmp", .icmp, Self.result(.success, "198.51.100.1", .ipv4))]).check()
        #expect(beyond.overall.verdict == Verdict(.full))
    }

    @Test func trustingLocalTargetsLetsThemProveButNotDNS() async {
        let m = monitor([("icmp", .icmp, Self.result(.success, "127.0.0.1", .ipv4))], trustLocal: true)
        #expect(await m.check().overall.verdict == Verdict(.full))
        let dns = monitor([("dns", .dns, Self.result(.success, nil, nil))], trustLocal: true)
        #expect(await dns.check().overall.verdict == Verdict(.limited, reason: .unproven))
    }

    /// The finding: the system resolver (no family) answered, every family's probes
    /// failed, and overall said full while no family was.
    @Test func overallIsNeverFullWhileEveryFamilyIsWorse() async {
        let m = monitor([
            ("dns", .dns, Self.result(.success, nil, nil)),
            ("http", .http, Self.result(.failure, "198.51.100.1", .ipv4)),
            ("icmp6", .icmp, Self.result(.failure, "2001:db8:100::1", .ipv6)),
        ])
        let status = await m.check()
        #expect(status.overall.verdict.state == .limited)
        #expect(status.families[.ipv4]?.verdict.state == .limited)
    }

    /// quorum:2 with one probe per family: each family is full on its own probe, and so overall.
    @Test func aQuorumOverTwoFamiliesIsFullInEach() async {
        let m = monitor(
            [
                ("v4", .icmp, Self.result(.success, "198.51.100.1", .ipv4)),
                ("v6", .icmp, Self.result(.success, "2001:db8:100::1", .ipv6)),
            ], policy: .quorum(minimum: 2, fraction: nil))
        let status = await m.check()
        #expect(status.overall.verdict == Verdict(.full))
        #expect(status.families[.ipv4]?.verdict == Verdict(.full))
        #expect(status.families[.ipv6]?.verdict == Verdict(.full))
    }

    /// After hysteresis too: restored full overall, families limited ⇒ the first round caps overall.
    @Test func theTrackedOverallLeavesFullWhenEveryFamilyHas() async {
        let m = monitor(
            [("v4", .icmp, Self.result(.success, "198.51.100.1", .ipv4))], policy: .quorum(minimum: 2, fraction: nil))
        m.restore(
            overall: Verdict(.full), since: 0,
            families: [.ipv4: ScopedVerdict(verdict: Verdict(.limited, reason: .probe(.timeout)), since: 0)])
        // The family is full on its one probe after recover_after rounds; the overall round is
        // limited (quorum 2 of 1) and, while the family is still limited, capped at once.
        let first = await m.check()
        #expect(first.families[.ipv4]?.verdict == Verdict(.limited, reason: .probe(.timeout)))
        #expect(first.overall.verdict.state != .full)
        #expect(first.transitions.contains { $0.scope == .overall && $0.transition.to.state != .full })
    }

    /// The hop-distance cross-check: an echo reply from beyond the gateway that arrives with a
    /// full initial TTL was made on the local network; local targets are 0 hops away by nature.
    @Test func echoRepliesZeroHopsAwayFromBeyondTheGatewayAreForged() {
        #expect(
            [64, 63, 61, 128, 117, 255, 250, 1, 0, 256].map(ICMPDetail.hops(ttl:)) == [
                0, 1, 3, 0, 11, 0, 5, 63, nil, nil,
            ])
        func outcome(_ ttl: Int?, address: String = "198.51.100.1", phantom: String? = "203.0.113.254") -> ProbeOutcome
        {
            var icmp = ICMPDetail(sent: 3, received: 3, rtts: [.milliseconds(1)], ttl: ttl)
            icmp.phantomReply = phantom
            return ProbeOutcome(
                name: "ping", type: .icmp, target: address, interface: nil,
                result: ProbeResult(
                    status: .success, detail: "3/3 replies", duration: .milliseconds(1), address: address,
                    family: .ipv4, icmp: icmp),
                at: 0)
        }
        let isLocal = { (a: String) in a.hasPrefix("192.168.1.") }
        let forged = OnPathCheck.review(outcome(64), isLocal: isLocal)
        #expect(forged.result.status == .failure && forged.result.reason == .forgedReply)
        #expect(
            forged.result.detail.hasSuffix("a box on the local network answers in its place"), "\(forged.result.detail)"
        )
        #expect(OnPathCheck.review(outcome(63), isLocal: isLocal).result.succeeded)
        // 0 hops but the address nobody holds stayed silent: a path that lowers no TTL (a PPP
        // peer, a rootless container's user-mode network), not a forger.
        #expect(OnPathCheck.review(outcome(255, phantom: nil), isLocal: isLocal).result.succeeded)
        // Found by the fault lab: a LAN numbered in a documentation range holds the phantom
        // address itself; its answer is real and proves nothing.
        #expect(OnPathCheck.review(outcome(64, phantom: "192.168.1.254"), isLocal: isLocal).result.succeeded)
        #expect(OnPathCheck.review(outcome(nil), isLocal: isLocal).result.succeeded, "no TTL: nothing to judge")
        #expect(OnPathCheck.review(outcome(64, address: "192.168.1.1"), isLocal: isLocal).result.succeeded)
        var tcp = outcome(64)
        tcp.type = .tcp
        #expect(OnPathCheck.review(tcp, isLocal: isLocal).result.succeeded, "only echo replies carry the TTL here")
    }
}
