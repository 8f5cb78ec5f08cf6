import ReachabilityTestSupport
import Synchronization
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// Issue #42: no false `full` from passive evidence that is local or stale, and no verdict bent
/// by rounds a scope did not run (a longer interval, a spent budget, a restart, no path).
@Suite struct PassiveTruthTests {
    static let settings = PassiveEvidence.Settings(
        freshness: .seconds(10), stallRetransmits: 2, vouchWindow: .milliseconds(1250))

    @Test func theHostsOwnAddressesAndOnLinkNeighboursNeverVouch() {
        let own: [UInt8] = [203, 0, 113, 5]
        let neighbour: [UInt8] = [0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x42]
        let snapshot = PathSnapshot(
            interfaces: [],
            addresses: [
                InterfaceAddress(
                    family: .ipv4, address: "203.0.113.5", prefixLength: 32, interfaceIndex: 2, interfaceName: "eth0"),
                InterfaceAddress(
                    family: .ipv6, address: "2001:db8:1::7", prefixLength: 64, interfaceIndex: 2, interfaceName: "eth0"),
            ])
        let local = AddressLocality.Matcher(snapshot)
        let mapped: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF] + own
        for peer in [own, neighbour, mapped] {
            let s = PassiveEvidenceTests.socket(to: peer, lastReceived: 10)
            let board = PassiveEvidence.summarize(
                [s], settings: Self.settings, uplinks: [], interfaceOfAddress: [:], interfaceOfIndex: [:],
                isLocalPeer: { local.isLocal(bytes: $0) })
            #expect(board[.overall]?.receiving == 0, "\(peer) is the host's own or on-link")
            #expect(board[.overall]?.vouches == false)
        }
        // A peer beyond the gateway still counts, and vouches while its data is fresh.
        let far = PassiveEvidenceTests.socket(to: [198, 51, 100, 80], lastReceived: 10)
        let board = PassiveEvidence.summarize(
            [far], settings: Self.settings, uplinks: [], interfaceOfAddress: [:], interfaceOfIndex: [:],
            isLocalPeer: { local.isLocal(bytes: $0) })
        #expect(board[.overall]?.receiving == 1 && board[.overall]?.vouches == true)
    }

    @Test func dataOlderThanAReadIntervalReceivesButNoLongerVouches() {
        let stopped = PassiveEvidenceTests.socket(lastReceived: 2_000)
        let board = PassiveEvidence.summarize(
            [stopped], settings: Self.settings, uplinks: [], interfaceOfAddress: [:], interfaceOfIndex: [:])
        #expect(board[.overall]?.receiving == 1, "still receiving within --passive.freshness")
        #expect(board[.overall]?.fresh == 0 && board[.overall]?.vouches == false, "but not since the last read")
    }

    @Test func aStaleOrEmptyBoardVouchesForNothing() {
        let t0 = ContinuousClock.now
        let now = Mutex(t0)
        let board = PassiveBoard(prefer: true, maxAge: .seconds(3), now: { now.withLock { $0 } })
        board.update([.overall: PassiveSummary(receiving: 2)])
        #expect(board.vouches(for: .overall))
        now.withLock { $0 = t0 + .seconds(4) }
        #expect(!board.vouches(for: .overall), "a reading older than maxAge")
        board.update([:])
        #expect(!board.vouches(for: .overall), "a read that failed or came late")
    }

    @Test func preferPausesAtMostTwoIntervalsAndNeverADoubtedScope() {
        let spec = ProbeSpec(name: "p", type: .tcp, target: "p", evidence: .internet) { _ in
            ScriptedProber(type: .tcp, clock: ManualClock())
        }
        let board = PassiveBoard()
        board.update([.overall: PassiveSummary(receiving: 1)])
        let t0 = ContinuousClock.now
        var status = ReachabilityStatus(
            overall: ScopedVerdict(verdict: Verdict(.full), since: 0), families: [:], uplinks: [:], probes: [],
            roundStarted: 0, roundDuration: .zero, transitions: [], round: 1)
        func due(after seconds: Int) -> Int {
            DueJobs.select(
                [(spec, nil)], lastRun: [ProbeKey("p", nil): t0], now: t0 + .seconds(seconds), periodic: true,
                paces: [:], last: status, passive: board,
                maxPause: { _ in PassiveBoard.maxPause(interval: .seconds(5)) }
            ).count
        }
        #expect(due(after: 5) == 0, "vouched for: paused")
        #expect(due(after: 10) == 1, "two intervals: the probes open new connections")
        status.doubted = [.overall]
        #expect(due(after: 5) == 1, "the latest round was not full: the probes decide")
        // Found by review: IPv4 downloads vouch for overall while IPv6 is broken.
        status.doubted = []
        status.families = [.ipv4: ScopedVerdict(verdict: Verdict(.full), since: 0)]
        #expect(due(after: 5) == 0, "IPv4 full, IPv6 unknown: paused")
        status.families[.ipv6] = ScopedVerdict(verdict: Verdict(.limited, reason: .probe(.timeout)), since: 0)
        #expect(due(after: 5) == 1, "a family worse than full: the routing table's probes run")
        status.families[.ipv6] = ScopedVerdict(verdict: Verdict(.full), since: 0)
        status.doubted = [.family(.ipv6)]
        #expect(due(after: 5) == 1, "a doubted family: they run")
    }
}

@Suite struct RoundsNotRunTests {
    static func outcome(_ status: ProbeStatus, at: Double, interface: String? = nil, ran: Bool = true) -> ProbeOutcome {
        var o = VerdictEngineTests.outcome("p", status, "198.51.100.1", .ipv4, interface: interface)
        o.at = at
        o.ran = ran
        return o
    }

    @Test func anUplinkIsDecidedOnlyInItsOwnRounds() {
        var engine = VerdictEngine(settings: VerdictSettings(failAfter: 3, recoverAfter: 2), uplinks: ["lte"], now: 0)
        let path = VerdictEngineTests.openPath
        let routed = { (t: Double) in Self.outcome(.success, at: t) }
        _ = engine.decide(
            [routed(0), Self.outcome(.success, at: 0, interface: "lte")], specs: [:], path: path, now: 0, roundStart: 0)
        #expect(engine.uplinkVerdicts["lte"]?.verdict.state == .full)
        // The backup's own round fails once, then five global rounds re-read that failure.
        _ = engine.decide(
            [routed(10), Self.outcome(.failure, at: 10, interface: "lte")], specs: [:], path: path, now: 10,
            roundStart: 10)
        for t in stride(from: 20.0, through: 60, by: 10) {
            _ = engine.decide(
                [routed(t), Self.outcome(.failure, at: 10, interface: "lte")], specs: [:], path: path, now: t,
                roundStart: t)
        }
        #expect(engine.uplinkVerdicts["lte"]?.verdict.state == .full, "one lost round of its own is one")
        #expect(engine.doubted == [.uplink("lte")])
        for t in [300.0, 600] {
            _ = engine.decide(
                [routed(t), Self.outcome(.failure, at: t, interface: "lte")], specs: [:], path: path, now: t,
                roundStart: t)
        }
        #expect(engine.uplinkVerdicts["lte"]?.verdict.state == .limited, "three of its own rounds")
    }

    @Test func anUplinkThatHasNotRunSinceARestartKeepsItsRestoredVerdict() {
        var engine = VerdictEngine(settings: VerdictSettings(), uplinks: ["lte"], now: 0)
        engine.restore(
            overall: Verdict(.full), since: 0, families: [:],
            uplinks: ["lte": ScopedVerdict(verdict: Verdict(.full), since: 0)])
        for t in [1.0, 2, 3, 4] {
            _ = engine.decide(
                [Self.outcome(.success, at: t)], specs: [:], path: VerdictEngineTests.openPath, now: t, roundStart: t,
                pending: [.uplink("lte")])
        }
        #expect(engine.uplinkVerdicts["lte"]?.verdict == Verdict(.full), "never limited (no_probes)")
    }

    /// An uplink whose probes were due but found no path for their family still decides (as
    /// before): not run is no failure of the probe, but the scope cannot reach what it probes.
    @Test func aDueProbeWithNoPathStillDecidesItsScope() {
        var engine = VerdictEngine(settings: VerdictSettings(failAfter: 1), uplinks: ["lte"], now: 0)
        let path = VerdictEngineTests.openPath
        _ = engine.decide(
            [Self.outcome(.success, at: 0, interface: "lte")], specs: [:], path: path, now: 0, roundStart: 0)
        _ = engine.decide(
            [Self.outcome(.failure, at: 5, interface: "lte", ran: false)], specs: [:], path: path, now: 5,
            roundStart: 5)
        #expect(engine.uplinkVerdicts["lte"]?.verdict.state == .limited)
    }

    @Test func aProbeWithNoPathIsNoRunAndNoLoss() {
        var recent = ProbeRecent()
        recent.record(Self.outcome(.success, at: 1))
        for t in 2...12 { recent.record(Self.outcome(.failure, at: Double(t), ran: false)) }
        let o = recent.annotate(Self.outcome(.failure, at: 12, ran: false))
        #expect(o.recentRuns == 1 && o.recentFailures == 0)
        let registry = MetricsRegistry()
        let spec = ProbeSpec(name: "p", type: .icmp, target: "p") { _ in
            ScriptedProber(type: .icmp, clock: ManualClock())
        }
        let recorder = MetricsRecorder(registry: registry, probes: [spec], uplinks: [])
        var status = ReachabilityStatus(
            overall: ScopedVerdict(verdict: Verdict(.none, reason: .path(.noDefaultRoute)), since: 0), families: [:],
            uplinks: [:], probes: [Self.outcome(.failure, at: 2, ran: false)], roundStarted: 2,
            roundDuration: .zero, transitions: [], round: 1)
        recorder.roundCompleted(status)
        status.round = 2
        recorder.roundCompleted(status)
        let text = registry.renderString()
        #expect(!text.contains("reachability_probe_failures_total{"), "\(text)")
        #expect(text.contains("reachability_probe_success{probe=\"icmp\",target=\"p\"} 0"))
    }
}

/// `--probe.http.each-family`: one captive check per family, pinned, in the default shape too.
@Suite struct EachFamilyFlagTests {
    static func probes(_ args: [String]) throws -> [ProbeSpec] {
        let flags = try FlagParser(ProbeFlags.specs).parse(args)
        return try ProbeFlags.probes(flags, environment: [ProbeFlags.refuseDefaultsVariable: "1"])
    }

    @Test func eachFamilyGivesTwoPinnedChecks() throws {
        let specs = try Self.probes(["--probe.http.each-family=http://portal.test/generate_204"])
        #expect(specs.map(\.name) == ["ipv4:http://portal.test/generate_204", "ipv6:http://portal.test/generate_204"])
        #expect(specs.map(\.family) == [.ipv4, .ipv6])
        #expect(specs.allSatisfy { $0.target == "http://portal.test/generate_204" })
        #expect(ProbeFlags.defaultArguments.first == "--probe.http.each-family=\(Probe.defaultHTTPURL)")
    }

    @Test func anIPLiteralHasOneFamilyAndIsRefused() {
        #expect(throws: UsageError.self) { try Self.probes(["--probe.http.each-family=http://192.0.2.1/"]) }
        #expect(throws: UsageError.self) { try Self.probes(["--probe.http.each-family=http://[2001:db8::1]/"]) }
    }
}
