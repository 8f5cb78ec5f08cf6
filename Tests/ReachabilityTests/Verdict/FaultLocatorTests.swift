import ReachabilityTestSupport
import Synchronization
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// Where it breaks: the locator's rules, the scheduler checking gateways only while a scope is
/// limited with nothing proving the internet, and the fault in metrics, history and `check`.
@Suite struct FaultLocatorTests {
    static let v4 = GatewayRoute(family: .ipv4, gateway: "192.0.2.1", interface: "eth0")
    static let v6 = GatewayRoute(family: .ipv6, gateway: "2001:db8::1", interface: "eth0")

    static func entry(
        _ name: String, _ type: ProbeType, _ status: ProbeStatus, _ reason: FailureReason? = nil, detail: String = "",
        evidence: Evidence? = nil
    ) -> RoundEntry {
        RoundEntry(
            name: name, type: type,
            result: ProbeResult(status: status, reason: reason, detail: detail, duration: .milliseconds(1)),
            evidence: evidence)
    }

    static let allFail = [
        entry("198.51.100.1", .icmp, .failure, .timeout), entry("http://198.51.100.1/", .http, .failure, .timeout),
    ]

    @Test func theVerdictNamesLinkPortalDNSAndMTU() {
        #expect(FaultLocator.locate(Verdict(.unknown), entries: [], route: nil, check: nil) == nil)
        #expect(
            FaultLocator.locate(
                Verdict(.none, reason: .path(.noCarrier)), entries: Self.allFail, route: Self.v4, check: nil)
                == Fault(.link, "no usable path: no_carrier"))
        let portal = FaultLocator.locate(
            Verdict(.portal, reason: .probe(.redirect)),
            entries: [Self.entry("http://x/", .http, .portal, .redirect, detail: "302 to http://login/")],
            route: Self.v4, check: nil)
        #expect(portal == Fault(.portal, "the network intercepts (redirect): http://x/ 302 to http://login/"))
        let dns = FaultLocator.locate(
            Verdict(.limited, reason: .probe(.dns)),
            entries: [
                Self.entry("198.51.100.1", .icmp, .success),
                Self.entry("example.com", .dns, .failure, .timeout, detail: "no answer"),
            ], route: Self.v4, check: nil)
        #expect(dns == Fault(.dns, "addresses answer, name resolution fails: example.com timeout (no answer)"))
        let mtu = FaultLocator.locate(
            Verdict(.limited, reason: .probe(.mtu)),
            entries: [Self.entry("mtu:x", .mtu, .failure, .mtu, detail: "path MTU 1400 bytes to x")], route: Self.v4,
            check: nil)
        #expect(mtu == Fault(.upstream, "small packets pass, large ones vanish: path MTU 1400 bytes to x"))
        for v in [
            Verdict(.none, reason: .unrecognized("x")), Verdict(.portal), Verdict(.limited, reason: .probe(.dns)),
            Verdict(.limited, reason: .probe(.mtu)), Verdict(.full),
        ] {
            #expect(!FaultLocator.needsGateway(v, entries: Self.allFail), "\(v)")
        }
        #expect(FaultLocator.needsGateway(Verdict(.limited, reason: .probe(.timeout)), entries: Self.allFail))
        // Configurations that cannot prove the internet are not failures: no gateway echo every round.
        let provesNothing = [Self.entry("example.com", .dns, .success)]
        for reason: VerdictReason in [.unproven, .quorum, .noProbes, .partial] {
            #expect(!FaultLocator.needsGateway(Verdict(.limited, reason: reason), entries: Self.allFail), "\(reason)")
        }
        #expect(!FaultLocator.needsGateway(Verdict(.limited, reason: .probe(.timeout)), entries: provesNothing))
        #expect(
            FaultLocator.locate(
                Verdict(.limited, reason: .unproven), entries: provesNothing, route: Self.v4, check: nil)
                == Fault(.none, "nothing failed; the probes cannot prove the internet (unproven)"))
        #expect(
            FaultLocator.locate(
                Verdict(.limited, reason: .partial), entries: Self.allFail, route: Self.v4, check: nil)?
                .location == .upstream)
    }

    @Test func fullIsNoneOrTarget() {
        let ok = [Self.entry("a", .icmp, .success), Self.entry("b", .https, .success)]
        #expect(FaultLocator.locate(Verdict(.full), entries: ok, route: Self.v4, check: nil) == Fault(.none))
        let some = [Self.entry("a", .icmp, .success), Self.entry("b", .https, .failure, .timeout)]
        #expect(
            FaultLocator.locate(Verdict(.full), entries: some, route: Self.v4, check: nil)
                == Fault(.target, "1 of 2 targets fail: b (timeout)"))
        // Every probe failing while still full is hysteresis, not yet a fault.
        #expect(FaultLocator.locate(Verdict(.full), entries: Self.allFail, route: Self.v4, check: nil) == Fault(.none))
        // Limited with internet evidence (a quorum not met): the targets, no gateway check.
        #expect(!FaultLocator.needsGateway(Verdict(.limited, reason: .quorum), entries: some))
        #expect(
            FaultLocator.locate(Verdict(.limited, reason: .probe(.timeout)), entries: some, route: Self.v4, check: nil)?
                .location
                == .target)
        // Every probe succeeding while recover_after holds the verdict: no new location (the
        // scheduler keeps the one it had).
        #expect(
            FaultLocator.locate(Verdict(.limited, reason: .probe(.timeout)), entries: ok, route: Self.v4, check: nil)
                == nil)
    }

    @Test func theGatewayCheckDecidesGatewayOrUpstream() {
        let limited = Verdict(.limited, reason: .probe(.timeout))
        func locate(_ check: GatewayCheck?, route: GatewayRoute? = Self.v4) -> Fault? {
            FaultLocator.locate(limited, entries: Self.allFail, route: route, check: check)
        }
        #expect(
            locate(GatewayCheck(route: Self.v4, echo: .reply(.microseconds(420))))
                == Fault(.upstream, "gateway 192.0.2.1 on eth0 answers (0.420 ms); nothing beyond it does"))
        #expect(
            locate(GatewayCheck(route: Self.v4, echo: .silent("no reply before the deadline"), neighbour: .incomplete))
                == Fault(.gateway, "gateway 192.0.2.1 on eth0: no ARP reply (neighbour incomplete)"))
        #expect(
            locate(
                GatewayCheck(route: Self.v6, echo: .error("host unreachable from 2001:db8::2"), neighbour: .failed),
                route: Self.v6)
                == Fault(.gateway, "gateway 2001:db8::1 on eth0: no neighbour discovery reply (neighbour failed)"))
        #expect(
            locate(GatewayCheck(route: Self.v4, echo: .silent("no reply before the deadline"), neighbour: .stale))
                == Fault(
                    .gateway, "gateway 192.0.2.1 on eth0: no echo reply (neighbour stale): no reply before the deadline"
                ))
        #expect(
            locate(nil) == Fault(.upstream, "nothing beyond the host answers; gateway 192.0.2.1 on eth0 not checked"))
        #expect(locate(nil, route: nil)?.location == .upstream)
        // An echo that could not be sent proves nothing about the gateway; an ICMP error from a
        // gateway that resolves is the gateway answering.
        #expect(
            locate(GatewayCheck(route: Self.v4, echo: .notSent("Operation not permitted"), neighbour: .stale))
                == Fault(
                    .upstream,
                    "nothing beyond the host answers; gateway 192.0.2.1 on eth0 not checked: Operation not permitted"))
        #expect(
            locate(GatewayCheck(route: Self.v4, echo: .notSent("Operation not permitted"), neighbour: .failed))?
                .location == .gateway)
        #expect(
            locate(
                GatewayCheck(
                    route: Self.v4,
                    echo: .error("destination unreachable (administratively prohibited) from 192.0.2.1"),
                    neighbour: .reachable))?.location == .upstream)
        let tun = GatewayRoute(family: .ipv4, gateway: nil, interface: "wg0")
        #expect(
            locate(nil, route: tun)
                == Fault(.upstream, "wg0 has no gateway (point-to-point); nothing beyond it answers"))
    }

    /// A cut two routers past the gateway, as the trace sees it: hops 1-3 say time exceeded, 4-16 are silent.
    static func trace(silent: Set<Int> = [], last: Int = 3, toward destination: String = "198.51.100.1") -> LastHopTrace
    {
        LastHopTrace(
            destination: destination,
            answers: (1...16).map { hop in
                hop > last || silent.contains(hop)
                    ? .silent : .timeExceeded(hop == 1 ? "192.0.2.1" : "203.0.113.\(hop)")
            })
    }

    @Test func theTraceNamesTheLastHopThatAnswers() {
        let limited = Verdict(.limited, reason: .probe(.timeout))
        let answering = GatewayCheck(route: Self.v4, echo: .reply(.microseconds(420)))
        let fault = FaultLocator.locate(
            limited, entries: Self.allFail, route: Self.v4, check: answering, trace: Self.trace())
        #expect(
            fault?.detail
                == "gateway 192.0.2.1 on eth0 answers (0.420 ms); nothing beyond it does; breaks after hop 3 (203.0.113.3), 2 hops past the gateway, toward 198.51.100.1"
        )
        #expect(
            fault?.lastHop
                == LastHop(hop: 3, address: "203.0.113.3", destination: "198.51.100.1", gateway: "192.0.2.1"))
        #expect(fault?.lastHop?.pastGateway == 2)
        // A router that sends no time-exceeded is a gap, named; the break is after the last answer.
        let gap = FaultLocator.locate(
            limited, entries: Self.allFail, route: Self.v4, check: answering, trace: Self.trace(silent: [2], last: 4))
        #expect(
            gap?.detail.hasSuffix(
                "breaks after hop 4 (203.0.113.4), 3 hops past the gateway, toward 198.51.100.1 (hop 2 silent)")
                == true, "\(gap!)")
        // Only the gateway answers: it is where it breaks.
        let first = FaultLocator.locate(
            limited, entries: Self.allFail, route: Self.v4, check: answering, trace: Self.trace(last: 1))
        #expect(first?.detail.hasSuffix("breaks after hop 1 (192.0.2.1), the gateway, toward 198.51.100.1") == true)
        // A router's "unreachable" is what it says; the destination's own reply is not a break.
        var said = Self.trace(last: 2)
        said.answers[2] = .error("203.0.113.3", text: "destination unreachable (net unreachable)")
        #expect(
            FaultLocator.locate(limited, entries: Self.allFail, route: Self.v4, check: answering, trace: said)?
                .detail.hasSuffix(
                    "hop 3 (203.0.113.3) answers destination unreachable (net unreachable), 2 hops past the gateway, toward 198.51.100.1"
                ) == true)
        var reached = Self.trace(last: 2)
        reached.answers[2] = .reached("198.51.100.1")
        let through = FaultLocator.locate(
            limited, entries: Self.allFail, route: Self.v4, check: answering, trace: reached)
        #expect(through?.lastHop?.reached == true && through?.lastHop?.pastGateway == nil)
        #expect(
            through?.detail.hasSuffix(
                "yet 198.51.100.1 answers echoes at hop 3: its path carries ICMP, another protocol or port fails")
                == true
        )
        // A router with no route on answers "unreachable" to every echo that reaches it: its
        // distance is the nearest such answer, whatever answered beyond (rate limits vary).
        var unreachable = Self.trace(last: 1)
        for i in [1, 3, 5] {
            unreachable.answers[i] = .error("203.0.113.2", text: "destination unreachable (host unreachable)")
        }
        #expect(unreachable.lastHop(gateway: "192.0.2.1")?.hop == 2)
        // A loop answers every hop past it with the same routers: where it begins is named.
        var loop = Self.trace(last: 2)
        for i in 2..<16 { loop.answers[i] = .timeExceeded(i % 2 == 0 ? "203.0.113.3" : "203.0.113.2") }
        let looped = loop.lastHop(gateway: "192.0.2.1")
        #expect(looped?.hop == 2 && looped?.error?.contains("routing loop") == true, "\(String(describing: looped))")
        // Nothing answers at all: said so, no last hop.
        let none = FaultLocator.locate(
            limited, entries: Self.allFail, route: Self.v4, check: answering, trace: Self.trace(last: 0))
        #expect(none?.lastHop == nil && none?.detail.hasSuffix("no hop within 16 answers toward 198.51.100.1") == true)
        // A gateway silent to echoes whose next hops answer forwards: upstream, not gateway.
        let silentGateway = GatewayCheck(route: Self.v4, echo: .silent("no reply"), neighbour: .reachable)
        let forwards = FaultLocator.locate(
            limited, entries: Self.allFail, route: Self.v4, check: silentGateway, trace: Self.trace(silent: [1]))
        #expect(forwards?.location == .upstream && forwards?.lastHop?.hop == 3, "\(forwards!)")
        #expect(
            forwards?.detail.hasPrefix(
                "gateway 192.0.2.1 does not answer echoes but routes (the trace's hop 3 answers)") == true)
        // A gateway that drops echoes but answers the trace's hop 1 routes too.
        var hopOne = Self.trace(last: 1)
        hopOne.answers[0] = .timeExceeded("192.0.2.1")
        #expect(
            FaultLocator.locate(limited, entries: Self.allFail, route: Self.v4, check: silentGateway, trace: hopOne)?
                .location == .upstream)
        // …but a gateway nobody resolves stays the gateway, and other locations ignore the trace.
        let unresolved = GatewayCheck(route: Self.v4, echo: .silent("no reply"), neighbour: .incomplete)
        #expect(
            FaultLocator.locate(
                limited, entries: Self.allFail, route: Self.v4, check: unresolved, trace: Self.trace(last: 1))?.location
                == .gateway)
        let dns = FaultLocator.locate(
            Verdict(.limited, reason: .probe(.dns)), entries: Self.allFail, route: Self.v4, check: answering,
            trace: Self.trace())
        #expect(dns?.location == .dns && dns?.lastHop == nil)
    }

    /// What the path answered in a target's place is never the target's fault, and needs no
    /// gateway check (the gateway is what answered).
    @Test func thePathAnsweringIsUpstreamNeverTheTarget() {
        let forged = [
            Self.entry("198.51.100.1", .icmp, .failure, .forgedReply, detail: "3/3 replies, ttl 64 (0 hops)"),
            Self.entry("http://198.51.100.1/", .http, .failure, .timeout),
        ]
        let limited = Verdict(.limited, reason: .probe(.forgedReply))
        #expect(!FaultLocator.needsGateway(limited, entries: forged))
        #expect(
            FaultLocator.locate(limited, entries: forged, route: Self.v4, check: nil)
                == Fault(
                    .upstream,
                    "something on the path answers in place of the internet (forged_reply): 198.51.100.1 3/3 replies, ttl 64 (0 hops)"
                ))
        let full = [
            Self.entry("https://198.51.100.1/", .https, .success, evidence: .internet),
            Self.entry("198.51.100.1:22", .tcp, .failure, .intercepted, detail: "connected, canary too"),
        ]
        // A full scope: the internet answers; the intercepted probe is a note, never a target's fault.
        #expect(
            FaultLocator.locate(Verdict(.full), entries: full, route: Self.v4, check: nil)
                == Fault(.none, "the internet answers; the path answers in place of 198.51.100.1:22"))
    }

    @Test func neighbourStatesFromKernelBits() {
        #expect(NeighbourTable.state(0x01) == .incomplete)
        #expect(NeighbourTable.state(0x02) == .reachable)
        #expect(NeighbourTable.state(0x04) == .stale)
        #expect(NeighbourTable.state(0x20) == .failed)
        #expect(NeighbourTable.state(0x80) == .permanent)
        #expect(NeighbourTable.state(0) == .absent)
        #expect(NeighbourState.failed.isUnresolved && NeighbourState.incomplete.isUnresolved)
        #expect(!NeighbourState.stale.isUnresolved && !NeighbourState.reachable.isUnresolved)
    }

    // MARK: the scheduler

    final class FakeGateways: GatewayProber {
        let calls = Mutex<[GatewayRoute]>([])
        let traced = Mutex<[String]>([])
        let answer: @Sendable (GatewayRoute) -> GatewayCheck
        init(_ answer: @escaping @Sendable (GatewayRoute) -> GatewayCheck) { self.answer = answer }
        func check(_ route: GatewayRoute, deadline: ContinuousClock.Instant) async -> GatewayCheck {
            calls.withLock { $0.append(route) }
            return answer(route)
        }
        func trace(toward destination: String, route: GatewayRoute, deadline: ContinuousClock.Instant) async
            -> LastHopTrace?
        {
            traced.withLock { $0.append("\(destination) via \(route.interface)") }
            return FaultLocatorTests.trace(toward: destination)
        }
    }

    @Test func gatewaysAreCheckedOnlyWhileLimitedAndOncePerGateway() async {
        let prober = ScriptedProber(type: .icmp, clock: ContinuousClock())
        var failed = ProbeResult.failure(.timeout, "no reply", duration: .milliseconds(1))
        failed.family = .ipv4
        failed.address = "198.51.100.1"
        prober.set(failed)
        let spec = ProbeSpec(name: "198.51.100.1", type: .icmp, target: "198.51.100.1", family: .ipv4) { _ in prober }
        var settings = MonitorSettings()
        settings.verdict = VerdictSettings(failAfter: 1, recoverAfter: 2)
        let gateways = FakeGateways {
            GatewayCheck(route: $0, echo: .silent("no reply before the deadline"), neighbour: .incomplete)
        }
        let monitor = ReachabilityMonitor(
            probes: [spec], settings: settings, path: SnapshotPathGate(FakePathSource()), gateways: gateways)
        let down = await monitor.check()
        #expect(down.state == .limited)
        #expect(down.fault == Fault(.gateway, "gateway 192.0.2.1 on eth0: no ARP reply (neighbour incomplete)"))
        #expect(down.faults[.family(.ipv4)]?.location == .gateway)
        #expect(down.faults[.family(.ipv6)] == nil, "ipv6 has no probe of its own: unknown, no fault")
        // overall and ipv4 share the gateway: one check.
        #expect(gateways.calls.withLock { $0 } == [Self.v4])
        var ok = ProbeResult(status: .success, duration: .milliseconds(1), address: "198.51.100.1", family: .ipv4)
        ok.phases[.rtt] = .milliseconds(1)
        prober.set(ok)
        // recover_after 2: the first good round is still limited, and keeps the gateway fault.
        let recovering = await monitor.check()
        #expect(recovering.state == .limited && recovering.fault?.location == .gateway)
        let up = await monitor.check()
        #expect(up.state == .full && up.fault == Fault(.none))
        #expect(gateways.calls.withLock { $0.count } == 1, "a healthy round checks no gateway")
        // The trace went with the gateway check (the gateway fault ignores it), once, toward the failing target.
        #expect(gateways.traced.withLock { $0 } == ["198.51.100.1 via eth0"])
    }

    @Test func tracesGoOnlyWhereRoutersAre() {
        func destination(_ address: String, _ family: IPFamily = .ipv4) -> String? {
            var r = ProbeResult.failure(.timeout, "x", duration: .milliseconds(1))
            r.address = address
            return LastHopTrace.destination(in: [RoundEntry(name: "t", type: .tcp, result: r)], family: family)
        }
        #expect(destination("198.51.100.1") == "198.51.100.1")
        #expect(destination("10.1.2.3") == "10.1.2.3", "a private target is still behind routers")
        #expect(destination("2001:db8::5", .ipv6) == "2001:db8::5")
        for local in ["127.0.0.1", "0.0.0.0", "169.254.1.1", "224.0.0.1"] { #expect(destination(local) == nil) }
        for local in ["::1", "::", "fe80::1", "ff02::1", "::ffff:127.0.0.1"] {
            #expect(destination(local, .ipv6) == nil)
        }
        #expect(destination("198.51.100.1", .ipv6) == nil, "the route's family only")
    }

    @Test func anUpstreamFaultCarriesTheLastHopIntoTheMetrics() async {
        let prober = ScriptedProber(type: .icmp, clock: ContinuousClock())
        var failed = ProbeResult.failure(.timeout, "no reply", duration: .milliseconds(1))
        failed.family = .ipv4
        failed.address = "198.51.100.1"
        prober.set(failed)
        let spec = ProbeSpec(name: "198.51.100.1", type: .icmp, target: "198.51.100.1", family: .ipv4) { _ in prober }
        var settings = MonitorSettings()
        settings.verdict = VerdictSettings(failAfter: 1, recoverAfter: 1)
        let gateways = FakeGateways { GatewayCheck(route: $0, echo: .reply(.microseconds(300))) }
        let monitor = ReachabilityMonitor(
            probes: [spec], settings: settings, path: SnapshotPathGate(FakePathSource()), gateways: gateways)
        let down = await monitor.check()
        #expect(down.fault?.location == .upstream && down.fault?.lastHop?.hop == 3, "\(String(describing: down.fault))")
        // Still limited: the trace of a minute ago stands (16 echoes a minute per route at most).
        let again = await monitor.check()
        #expect(again.fault?.lastHop?.hop == 3)
        #expect(gateways.traced.withLock { $0 }.count == 1, "\(gateways.traced.withLock { $0 })")
        let registry = MetricsRegistry()
        let recorder = MetricsRecorder(registry: registry, probes: [], uplinks: [])
        recorder.roundCompleted(down)
        #expect(
            RecorderReloadTests.lines(registry, "reachability_fault_last_hop{") == [
                "reachability_fault_last_hop{scope=\"ipv4\"} 3",
                "reachability_fault_last_hop{scope=\"overall\"} 3",
            ])
        var ok = ProbeResult(status: .success, duration: .milliseconds(1), address: "198.51.100.1", family: .ipv4)
        ok.phases[.rtt] = .milliseconds(1)
        prober.set(ok)
        recorder.roundCompleted(await monitor.check())
        #expect(RecorderReloadTests.lines(registry, "reachability_fault_last_hop{").isEmpty, "healthy: no series")
        let json = CheckCommand.renderJSON(down)
        #expect(
            json.contains(
                #""last_hop":{"hop":3,"address":"203.0.113.3","destination":"198.51.100.1","reached":false,"past_gateway":2"#
            ), "\(json)")
        let traced = CheckCommand.renderTraces([
            .init(probe: "198.51.100.1", route: Self.v4, trace: Self.trace(silent: [2]))
        ])
        #expect(
            traced.hasPrefix(
                "trace toward 198.51.100.1 (198.51.100.1) via eth0 (gateway 192.0.2.1):\n   1  192.0.2.1\n   2  *\n   3  203.0.113.3\n   4  *\n"
            ), "\(traced)")
        #expect(
            traced.hasSuffix(
                "  → breaks after hop 3 (203.0.113.3), 2 hops past the gateway, toward 198.51.100.1 (hop 2 silent)\n"))
    }

    /// Found by the uplink lab: a trace made while the gateway answered stood for a minute after
    /// the gateway fell silent too, and named it `upstream` (it routes). A gateway that stops
    /// answering is traced afresh, once.
    @Test func aGatewayThatFallsSilentIsTracedAfresh() async {
        let prober = ScriptedProber(type: .icmp, clock: ContinuousClock())
        var failed = ProbeResult.failure(.timeout, "no reply", duration: .milliseconds(1))
        failed.family = .ipv4
        failed.address = "198.51.100.1"
        prober.set(failed)
        let spec = ProbeSpec(name: "198.51.100.1", type: .icmp, target: "198.51.100.1", family: .ipv4) { _ in prober }
        var settings = MonitorSettings()
        settings.verdict = VerdictSettings(failAfter: 1, recoverAfter: 1)
        let silent = Mutex(false)
        let gateways = FakeGateways { route in
            silent.withLock { $0 }
                ? GatewayCheck(route: route, echo: .silent("no reply before the deadline"), neighbour: .reachable)
                : GatewayCheck(route: route, echo: .reply(.microseconds(300)))
        }
        let monitor = ReachabilityMonitor(
            probes: [spec], settings: settings, path: SnapshotPathGate(FakePathSource()), gateways: gateways)
        #expect(await monitor.check().fault?.location == .upstream)
        #expect(gateways.traced.withLock { $0.count } == 1)
        silent.withLock { $0 = true }
        _ = await monitor.check()
        #expect(gateways.traced.withLock { $0.count } == 2, "the silent gateway is traced again")
        _ = await monitor.check()
        #expect(gateways.traced.withLock { $0.count } == 2, "and that trace stands while it stays silent")
    }

    // MARK: where the fault shows

    static func status(_ fault: Fault?, state: ConnectivityState = .limited, mtu: Int? = nil) -> ReachabilityStatus {
        let v = ScopedVerdict(verdict: Verdict(state, reason: state == .full ? nil : .probe(.timeout)), since: 1)
        var result = ProbeResult(status: .success, duration: .milliseconds(2))
        result.mtu = mtu
        var s = ReachabilityStatus(
            overall: v, families: [.ipv4: v], uplinks: [:],
            probes: [ProbeOutcome(name: "mtu:x", type: .mtu, target: "x", result: result, at: 10)],
            roundStarted: 10, roundDuration: .milliseconds(5),
            transitions: [ScopeTransition(.overall, Transition(from: Verdict(.full), to: v.verdict, at: 10))],
            round: 1)
        if let fault { s.faults = [.overall: fault, .family(.ipv4): fault] }
        return s
    }

    @Test func metricsCarryOneLocationPerScopeAndTheMTU() {
        let registry = MetricsRegistry()
        let recorder = MetricsRecorder(registry: registry, probes: [], uplinks: [])
        recorder.roundCompleted(Self.status(Fault(.gateway, "gateway 192.0.2.1 on eth0: no ARP reply"), mtu: 1400))
        #expect(
            RecorderReloadTests.lines(registry, "reachability_fault_info{") == [
                "reachability_fault_info{scope=\"ipv4\",location=\"gateway\"} 1",
                "reachability_fault_info{scope=\"overall\",location=\"gateway\"} 1",
            ])
        #expect(
            RecorderReloadTests.lines(registry, "reachability_path_mtu_bytes{") == [
                "reachability_path_mtu_bytes{target=\"mtu:x\"} 1400"
            ])
        recorder.roundCompleted(Self.status(Fault(.none), state: .full, mtu: nil))
        #expect(
            RecorderReloadTests.lines(registry, "reachability_fault_info{") == [
                "reachability_fault_info{scope=\"ipv4\",location=\"none\"} 1",
                "reachability_fault_info{scope=\"overall\",location=\"none\"} 1",
            ])
        #expect(
            RecorderReloadTests.lines(registry, "reachability_path_mtu_bytes{").isEmpty, "no measurement: no series")
        recorder.roundCompleted(Self.status(nil, state: .unknown))
        #expect(RecorderReloadTests.lines(registry, "reachability_fault_info{").isEmpty)
    }

    @Test func checkAndHistoryCarryTheFault() throws {
        let fault = Fault(.gateway, "gateway 192.0.2.1 on eth0: no ARP reply")
        let s = Self.status(fault, mtu: 1400)
        let text = CheckCommand.renderText(s)
        #expect(text.contains("  breaks at: gateway: gateway 192.0.2.1 on eth0: no ARP reply\n"), "\(text)")
        #expect(text.contains("  ipv4: limited (timeout) — breaks at: gateway: "), "\(text)")
        let json = try #require(JSONValue.parse(Array(CheckCommand.renderJSON(s).utf8.dropLast())))
        #expect(json["fault"]?["location"]?.string == "gateway")
        #expect(json["fault"]?["detail"]?.string == fault.detail)
        #expect(json["families"]?["ipv4"]?["fault"]?["location"]?.string == "gateway")
        guard case .array(let probes)? = json["probes"] else {
            Issue.record("no probes array")
            return
        }
        #expect(probes.first?["path_mtu_bytes"]?.number == 1400)
        // The transition record round-trips location and detail; older records have neither.
        let record = TransitionRecord(
            time: 10, scope: .overall, from: Verdict(.full), to: Verdict(.limited, reason: .probe(.timeout)),
            fault: fault)
        let line = HistoryRecord.transition(record).encoded()
        #expect(
            String(decoding: line, as: UTF8.self).contains(
                #""reason":"timeout","location":"gateway","fault":"gateway 192.0.2.1"#))
        #expect(try HistoryRecord.decode(line.dropLast()) == .transition(record))
        let old =
            #"{"v":1,"type":"transition","time":10,"scope":"overall","from":"full","to":"limited","reason":"timeout"}"#
        #expect(
            try HistoryRecord.decode(Array(old.utf8))
                == .transition(
                    TransitionRecord(
                        time: 10, scope: .overall, from: Verdict(.full), to: Verdict(.limited, reason: .probe(.timeout))
                    )))
        let later =
            #"{"v":1,"type":"transition","time":10,"scope":"overall","from":"full","to":"limited","location":"satellite"}"#
        if case .transition(let t) = try HistoryRecord.decode(Array(later.utf8)) {
            #expect(t.fault == nil)
        } else {
            Issue.record("not a transition")
        }
        let bad = #"{"v":1,"type":"transition","time":10,"scope":"overall","from":"full","to":"limited","location":7}"#
        #expect(throws: HistoryDecodeError.self) { try HistoryRecord.decode(Array(bad.utf8)) }
    }

    @Test func theStatusPageSaysWhereItBreaks() {
        let fault = Fault(.gateway, "gateway 192.0.2.1 on eth0: no ARP reply <script>")
        let page = StatusPage(status: { Self.status(fault) }).render()
        #expect(
            page.contains(
                "breaks at: <strong>gateway</strong> — gateway 192.0.2.1 on eth0: no ARP reply &lt;script&gt;"),
            "\(page)")
        #expect(!page.contains("<script>"))
        let healthy = StatusPage(status: { Self.status(Fault(.none), state: .full) }).render()
        #expect(!healthy.contains("breaks at"))
    }
}
