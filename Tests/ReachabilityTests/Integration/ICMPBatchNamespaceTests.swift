import Synchronization
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// A slot's single-echo ICMP rounds sent together (`ICMPProber.batchRounds`, one `sendmmsg`)
/// must end exactly as the same rounds run one by one: replies, ICMP errors, drops, sends the
/// kernel refuses, a socket that cannot be opened, each with its own duration and traffic.
@Suite struct ICMPBatchNamespaceTests {
    /// 127.0.0.0/24 answers, 127.0.1.0/24 is rejected with host-unreachable, 127.0.2.0/24 is
    /// dropped; 192.0.2.1 has no route (the namespace holds only loopback).
    static let rules = """
        table inet t {
          chain in { type filter hook input priority 0; policy accept;
            ip daddr 127.0.1.0/24 icmp type echo-request reject with icmp type host-unreachable
            ip daddr 127.0.2.0/24 icmp type echo-request drop
          }
        }
        """

    static func hosts() -> [(host: String, payload: Int, interface: String?)] {
        var all: [(String, Int, String?)] = []
        for i in 1...40 { all.append(("127.0.0.\(i)", 56, nil)) }
        for i in 1...5 { all.append(("127.0.1.\(i)", 56, nil)) }
        for i in 1...5 { all.append(("127.0.2.\(i)", 56, nil)) }
        all += [
            ("192.0.2.1", 56, nil), ("::1", 56, nil), ("127.0.0.200", 0, nil), ("127.0.0.201", 1400, nil),
            ("127.0.0.202", 56, "rxnosuch0"),
        ]
        return all
    }

    @Test(arguments: [ICMPSocketMode.raw, .datagram])
    func aBatchEndsEachRoundAsItsOwnRoundWould(mode: ICMPSocketMode) async throws {
        try await withICMPNamespace(allowPingSockets: true) { ns async throws in
            try ns.nft(Self.rules)
            let engine = ICMPEngine(networkNamespace: ns.path)
            defer { engine.close() }
            let probers = Self.hosts().map {
                ICMPProber(
                    .init(host: $0.host, count: 1, payloadSize: $0.payload, interface: $0.interface, mode: mode),
                    engine: engine)
            }
            #expect(probers.allSatisfy { $0.batchAddress != nil })
            let meters = probers.map { _ in TrafficMeter() }
            let start = ContinuousClock.now
            let deadline = start + .milliseconds(700)
            let ended = Mutex<[Int]>([])
            let batched = await ICMPProber.batchRounds(
                probers.map { .init(prober: $0, deadline: deadline) }, meters: meters
            ) { i in ended.withLock { $0.append(i) } }
            #expect(ended.withLock { $0.sorted() } == Array(probers.indices), "each round ends once")
            let elapsed = ContinuousClock.now - start
            #expect(engine.batchedEchoes == probers.count)
            #expect(elapsed >= .milliseconds(690) && elapsed < .seconds(3), "the drops end at the deadline: \(elapsed)")
            for (k, (prober, result)) in zip(probers, batched).enumerated() {
                let alone = await prober.probe(deadline: .now + .milliseconds(700))
                let host = prober.configuration.host
                #expect(
                    result.status == alone.status && result.reason == alone.reason,
                    "\(host): \(result.detail) / \(alone.detail)")
                #expect(
                    result.icmp?.sent == alone.icmp?.sent && result.icmp?.received == alone.icmp?.received, "\(host)")
                #expect(
                    result.detail.prefix(12) == alone.detail.prefix(12), "\(host): \(result.detail) / \(alone.detail)")
                #expect(result.address == alone.address && result.family == alone.family)
                let traffic = meters[k].total
                #expect(traffic.sentPackets == UInt64(result.icmp?.sent ?? 0), "\(host): \(traffic)")
                if result.succeeded {
                    #expect(traffic.receivedPackets == 1)
                    #expect(
                        result.duration < .milliseconds(600), "a reply ends its own round: \(host) \(result.duration)")
                }
                if host.hasPrefix("127.0.2.") {
                    #expect(result.reason == .timeout && result.duration >= .milliseconds(690), "\(host)")
                }
            }
            let answered = zip(Self.hosts(), batched).filter { $0.1.succeeded }.map(\.0.host)
            #expect(answered.count == 40 + 3, "\(answered)")
            #expect(batched[batched.count - 1].reason == .unreachable, "missing interface: \(batched.last!.detail)")
            for family in [IPFamily.ipv4, .ipv6] {
                #expect(try engine.socket(family: family, mode: mode, interface: nil).pendingCount == 0)
            }
        }
    }

    @Test func aDeadlineAlreadyGoneSendsNothing() async {
        let engine = ICMPEngine()
        defer { engine.close() }
        let probers = (1...3).map { ICMPProber(.init(host: "127.0.0.\($0)", count: 1, mode: .raw), engine: engine) }
        let meters = probers.map { _ in TrafficMeter() }
        let ended = Mutex<[Int]>([])
        let results = await ICMPProber.batchRounds(
            probers.map { .init(prober: $0, deadline: .now - .seconds(1)) }, meters: meters
        ) { i in ended.withLock { $0.append(i) } }
        for r in results {
            #expect(r.reason == .timeout && r.icmp?.sent == 0, "\(r.detail)")
        }
        #expect(meters.allSatisfy { $0.total.sentPackets == 0 })
        #expect(ended.withLock { $0.sorted() } == [0, 1, 2], "a refused round gives its place back too")
    }

    @Test func largePayloadsGetASocketOfTheirOwnAndSmallOnesShareOne() async throws {
        let engine = ICMPEngine()
        defer { engine.close() }
        let small = try engine.socket(family: .ipv4, mode: .raw, interface: nil, payloadSize: 56)
        let medium = try engine.socket(family: .ipv4, mode: .raw, interface: nil, payloadSize: 1400)
        #expect(medium === small)
        let large = try engine.socket(family: .ipv4, mode: .raw, interface: nil, payloadSize: 9000)
        #expect(large !== small && !large.readsInBatches && small.readsInBatches)
        let probers = [56, 9000, 56, 1400].enumerated().map {
            ICMPProber(
                .init(host: "127.0.0.\($0.offset + 1)", count: 1, payloadSize: $0.element, mode: .raw), engine: engine)
        }
        let results = await ICMPProber.batchRounds(
            probers.map { .init(prober: $0, deadline: .now + .seconds(5)) }, meters: probers.map { _ in TrafficMeter() }
        )
        #expect(results.allSatisfy { $0.succeeded }, "\(results.map(\.detail))")
    }

    /// A box answering echo for every address (here: the target and the phantom address both
    /// on the namespace's loopback, replies that cross no router) must be caught in a batch as
    /// it is alone, at once, even while a dropped slot-mate keeps the batch waiting.
    @Test func aPhantomReplyIsCaughtInABatchWhileASlotMateWaits() async throws {
        try await withICMPNamespace(allowPingSockets: true) { ns async throws in
            try ns.nft(Self.rules)
            try ns.exec(["ip", "addr", "add", "198.51.100.7/32", "dev", "lo"])
            try ns.exec(["ip", "addr", "add", "203.0.113.254/32", "dev", "lo"])
            let engine = ICMPEngine(networkNamespace: ns.path)
            defer { engine.close() }
            let hosts = ["198.51.100.7", "127.0.2.9", "127.0.0.9"]
            let probers = hosts.map { ICMPProber(.init(host: $0, count: 1, mode: .raw), engine: engine) }
            let meters = probers.map { _ in TrafficMeter() }
            let ended = Mutex<[Int]>([])
            let results = await ICMPProber.batchRounds(
                probers.map { .init(prober: $0, deadline: .now + .milliseconds(800)) }, meters: meters
            ) { i in ended.withLock { $0.append(i) } }
            #expect(results[0].succeeded && results[0].icmp?.phantomReply == "203.0.113.254", "\(results[0])")
            #expect(
                results[0].duration < .milliseconds(700), "not held to the dropped slot-mate: \(results[0].duration)")
            #expect(meters[0].total.sentPackets == 2, "the echo and the phantom's")
            #expect(results[1].reason == .timeout)
            #expect(results[2].succeeded && results[2].icmp?.phantomReply == nil, "loopback needs no phantom")
            #expect(ended.withLock { $0.sorted() } == [0, 1, 2])
            let alone = await probers[0].probe(deadline: .now + .milliseconds(800))
            #expect(alone.icmp?.phantomReply == results[0].icmp?.phantomReply)
            #expect(
                OnPathCheck.review(
                    ProbeOutcome(name: "x", type: .icmp, target: "198.51.100.7", result: results[0], at: 0),
                    isLocal: { _ in false }
                ).result.succeeded == false, "the forged reply voids the round")
        }
    }

    @Test(arguments: ["cancel", "close"])
    func aBatchEndsAtOnceWhenCancelledOrItsEngineCloses(how: String) async throws {
        try await withICMPNamespace(allowPingSockets: true) { ns async throws in
            try ns.nft(Self.rules)
            let engine = ICMPEngine(networkNamespace: ns.path)
            defer { engine.close() }
            let probers = (1...20).map {
                ICMPProber(.init(host: "127.0.2.\($0)", count: 1, mode: .raw), engine: engine)
            }
            let meters = probers.map { _ in TrafficMeter() }
            let start = ContinuousClock.now
            let running = Task {
                await ICMPProber.batchRounds(
                    probers.map { .init(prober: $0, deadline: .now + .seconds(20)) }, meters: meters)
            }
            try await Task.sleep(for: .milliseconds(200))
            if how == "cancel" { running.cancel() } else { engine.close() }
            let results = await running.value
            #expect(ContinuousClock.now - start < .seconds(10), "ended long before the deadline")
            #expect(results.allSatisfy { $0.reason == .error && $0.icmp?.sent == 1 }, "\(results.map(\.detail))")
            if how == "cancel" {
                #expect(try engine.socket(family: .ipv4, mode: .raw, interface: nil).pendingCount == 0)
            }
        }
    }

    @Test func aLargeBatchLosesNothing() async throws {
        try await withICMPNamespace(allowPingSockets: true) { ns async throws in
            let engine = ICMPEngine(networkNamespace: ns.path)
            defer { engine.close() }
            let probers = (0..<1500).map {
                ICMPProber(.init(host: "127.0.\($0 / 250 + 10).\($0 % 250 + 1)", count: 1, mode: .raw), engine: engine)
            }
            let meters = probers.map { _ in TrafficMeter() }
            let results = await ICMPProber.batchRounds(
                probers.map { .init(prober: $0, deadline: .now + .seconds(5)) }, meters: meters)
            #expect(results.filter(\.succeeded).count == 1500, "\(results.first { !$0.succeeded }?.detail ?? "")")
            #expect(try engine.socket(family: .ipv4, mode: .raw, interface: nil).pendingCount == 0)
        }
    }

    @Test func onlySingleEchoesToLiteralsInAValidConfigurationAreBatched() {
        let engine = ICMPEngine()
        defer { engine.close() }
        func batchable(_ c: ICMPProber.Configuration) -> Bool { ICMPProber(c, engine: engine).batchAddress != nil }
        #expect(batchable(.init(host: "127.0.0.1", count: 1)))
        #expect(batchable(.init(host: "::1", family: .ipv6, count: 1)))
        #expect(!batchable(.init(host: "localhost", count: 1)), "a name is resolved each round")
        #expect(!batchable(.init(host: "127.0.0.1", count: 3)), "spaced echoes keep their own task")
        #expect(!batchable(.init(host: "127.0.0.1", family: .ipv6, count: 1)), "the family refuses it: dns failure")
        #expect(!batchable(.init(host: "127.0.0.1", count: 1, payloadSize: -1)), "a configuration problem is reported")
    }
}

/// The scheduler sends a slot's batchable ICMP probes together, and only those.
@Suite struct MonitorICMPBatchTests {
    @Test func aRoundOfLoopbackTargetsGoesOutAsOneBatch() async {
        let engine = ICMPEngine()
        defer { engine.close() }
        var specs = (1...30).map { i in
            let host = "127.0.0.\(i)"
            let prober = ICMPProber(.init(host: host, count: 1, mode: .raw), engine: engine)
            return ProbeSpec(name: host, type: .icmp, target: host, family: .ipv4) { _ in prober }
        }
        let named = ICMPProber(.init(host: "localhost", family: .ipv4, count: 1, mode: .raw), engine: engine)
        specs.append(ProbeSpec(name: "localhost", type: .icmp, target: "localhost", family: .ipv4) { _ in named })
        var settings = MonitorSettings()
        settings.timeout = .seconds(2)
        settings.maxConcurrentProbes = 4
        let monitor = ReachabilityMonitor(probes: specs, settings: settings, clock: ContinuousClock())
        let status = await monitor.check()
        #expect(engine.batchedEchoes == 30, "the literals in batches of four, the name on its own")
        #expect(status.probes.count == 31)
        for o in status.probes {
            #expect(o.result.status == .success, "\(o.name): \(o.result.detail)")
            #expect(o.traffic?.sentPackets == 1 && o.traffic?.receivedPackets == 1, "\(o.name)")
            #expect(o.startLateness != nil)
        }
        // Every place was given back: a second round runs as the first.
        let again = await monitor.check()
        #expect(again.probes.allSatisfy(\.result.succeeded) && engine.batchedEchoes == 60)
    }
}
