import ReachabilityTestSupport
import Synchronization
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// Uplink budgets: the book's arithmetic, its file, and the scheduler keeping a metered uplink
/// within its budget on the manual clock.
@Suite struct UplinkBudgetTests {
    static let hour = TrafficBudget(bytes: 10_000, period: .seconds(100), start: 1_000)

    @Test func windowsFollowEachOtherFromTheStart() {
        let b = Self.hour
        #expect(b.window(at: 1_000) == (1_000, 1_100))
        #expect(b.window(at: 1_099.9) == (1_000, 1_100))
        #expect(b.window(at: 1_250) == (1_200, 1_300))
        #expect(b.window(at: 950) == (900, 1_000))
    }

    @Test func thePaceStretchesSoTheRestLastsTheWindowAndStopsWhenSpent() {
        let book = BudgetBook()
        // Nothing measured yet: the floor.
        #expect(book.pace("wwan0", floor: .seconds(5), budget: Self.hour, now: 1_000).interval == .seconds(5))
        book.charge(
            ["wwan0": TrafficCount(sentBytes: 500, receivedBytes: 500)], ownRounds: ["wwan0": 1_000],
            budgets: ["wwan0": Self.hour], now: 1_010)
        // 9,000 left for 90 s at 1,000 a round: 9 rounds, one every 10 s.
        let p = book.pace("wwan0", floor: .seconds(5), budget: Self.hour, now: 1_010)
        #expect(p.cause == "budget" && p.interval == .seconds(10) && p.remaining == 9_000 && p.windowEnd == 1_100)
        // A floor above what the budget needs holds.
        #expect(book.pace("wwan0", floor: .seconds(30), budget: Self.hour, now: 1_010).cause == "interval")
        book.charge(
            ["wwan0": TrafficCount(sentBytes: 8_500)], ownRounds: [:], budgets: ["wwan0": Self.hour], now: 1_020)
        let spent = book.pace("wwan0", floor: .seconds(5), budget: Self.hour, now: 1_020)
        #expect(spent.cause == "exhausted" && spent.interval == .seconds(80) && spent.remaining == 500)
        // The next window starts over, and measures what a round costs afresh (its first round runs).
        book.charge([:], ownRounds: [:], budgets: ["wwan0": Self.hour], now: 1_100)
        let fresh = book.pace("wwan0", floor: .seconds(5), budget: Self.hour, now: 1_100)
        #expect(fresh.used == 0 && fresh.cause == "interval" && fresh.perRound == nil)
        // No budget: the floor, nothing else.
        #expect(
            book.pace("eth0", floor: .seconds(5), budget: nil, now: 1_100)
                == UplinkPace(interval: .seconds(5), cause: "interval"))
    }

    /// Found by hostile reviews: a clock stepped back zeroed the month's count, a count read
    /// back near UInt64.max trapped on the first round, a round that once cost more than the
    /// budget stopped the uplink in every later window, and a window that starts in the future
    /// (the clock ran ahead, then was stepped back) held the uplink spent across real windows.
    @Test func clockStepsHugeCountsAndCostlyRoundsLoseNothingAndCrashNothing() {
        let book = BudgetBook(restored: [
            "wwan0": BudgetBook.Account(windowStart: 1_000, used: 4_000, perRound: 50_000),
            "wwan1": BudgetBook.Account(windowStart: 1_000, used: .max - 1, perRound: 1),
            "wwan2": BudgetBook.Account(windowStart: 1_200, used: 9_999, perRound: 10),
        ])
        let budgets = ["wwan0": Self.hour, "wwan1": Self.hour, "wwan2": Self.hour]
        // Within the window, a clock stepped back keeps the count.
        book.charge(["wwan0": TrafficCount(sentBytes: 10)], ownRounds: [:], budgets: budgets, now: 1_050)
        book.charge(["wwan0": TrafficCount(sentBytes: 10)], ownRounds: [:], budgets: budgets, now: 1_010)
        #expect(book.snapshot["wwan0"]?.used == 4_020, "the clock went back within the window: the count stands")
        book.charge(
            ["wwan1": TrafficCount(sentBytes: 10, receivedBytes: .max)], ownRounds: [:], budgets: budgets, now: 1_050)
        #expect(book.snapshot["wwan1"]?.used == .max)
        #expect(book.pace("wwan1", floor: .seconds(5), budget: Self.hour, now: 1_050).cause == "exhausted")
        let next = book.pace("wwan1", floor: .seconds(5), budget: Self.hour, now: 1_150)
        #expect(next.cause == "interval" && next.perRound == nil, "a new window measures a round afresh")
        // wwan2's window starts at 1 200, in the future at 1 050: a clock step. Counting starts
        // over in the real window (a clock that ran ahead cannot hold the uplink spent), and the
        // saved count is set aside, not lost.
        #expect(book.pace("wwan2", floor: .seconds(5), budget: Self.hour, now: 1_050).cause == "interval")
        book.charge(["wwan2": TrafficCount(sentBytes: 7)], ownRounds: [:], budgets: budgets, now: 1_050)
        let aside = BudgetBook.Account.Aside(windowStart: 1_200, used: 9_999, perRound: 10)
        #expect(book.snapshot["wwan2"] == BudgetBook.Account(windowStart: 1_000, used: 7, aside: aside))
        #expect(BudgetBook.decode(BudgetBook.encode(book.snapshot)) == book.snapshot, "the file keeps it")
        // The clock comes back into the set-aside window (a router's clock set by NTP): its
        // count returns, with what was counted meanwhile.
        book.charge(["wwan2": TrafficCount(sentBytes: 1)], ownRounds: [:], budgets: budgets, now: 1_210)
        #expect(book.snapshot["wwan2"] == BudgetBook.Account(windowStart: 1_200, used: 9_999 + 7 + 1, perRound: 10))
        #expect(book.pace("wwan2", floor: .seconds(5), budget: Self.hour, now: 1_210).cause == "exhausted")
        // Found by review: a clock stepped back across a window's start (boot before the clock
        // is set) wiped the window's count and saved the wipe.
        let early = BudgetBook(restored: ["wwan0": BudgetBook.Account(windowStart: 1_000, used: 4_000)])
        early.charge(["wwan0": TrafficCount(sentBytes: 10)], ownRounds: [:], budgets: budgets, now: 500)
        early.charge(["wwan0": TrafficCount(sentBytes: 5)], ownRounds: [:], budgets: budgets, now: 1_020)
        #expect(early.snapshot["wwan0"]?.used == 4_015, "the clock came back: the count stands")
        // A set-aside window the clock passes is forgotten: the next one starts at zero.
        let passed = BudgetBook(restored: ["wwan0": BudgetBook.Account(windowStart: 1_000, used: 4_000)])
        passed.charge([:], ownRounds: [:], budgets: budgets, now: 500)
        passed.charge(["wwan0": TrafficCount(sentBytes: 5)], ownRounds: [:], budgets: budgets, now: 1_150)
        #expect(passed.snapshot["wwan0"] == BudgetBook.Account(windowStart: 1_100, used: 5))
    }

    @Test func aCleanStopSavesTheCountsWhateverTheLastSave() {
        let saved = Mutex<[[String: BudgetBook.Account]]>([])
        let book = BudgetBook { accounts in saved.withLock { $0.append(accounts) } }
        let budgets = ["wwan0": Self.hour]
        book.charge(["wwan0": TrafficCount(sentBytes: 10)], ownRounds: [:], budgets: budgets, now: 1_010)
        book.charge(["wwan0": TrafficCount(sentBytes: 5)], ownRounds: [:], budgets: budgets, now: 1_020)
        #expect(saved.withLock { $0.last?["wwan0"]?.used } == 10, "saved at most once a minute")
        book.saveNow()
        #expect(saved.withLock { $0.last?["wwan0"]?.used } == 15)
    }

    @Test func theCountsSurviveTheirFileAndACorruptOneLosesOnlyItsLines() {
        let accounts = [
            "wwan0": BudgetBook.Account(windowStart: 1_000, used: 1_234, perRound: 99.5),
            "wwan1": BudgetBook.Account(windowStart: 0, used: 0),
        ]
        #expect(BudgetBook.decode(BudgetBook.encode(accounts)) == accounts)
        let corrupt =
            "wwan0 1000 1234 99.5\nwwan1 x 5 -\n../etc 0 1 -\nwwan2 nan 5 -\nwwan3 0 -1 -\n\u{0}\nwwan4 0 7 inf\n"
        #expect(
            BudgetBook.decode(corrupt) == [
                "wwan0": BudgetBook.Account(windowStart: 1_000, used: 1_234, perRound: 99.5),
                "wwan4": BudgetBook.Account(windowStart: 0, used: 7),
            ])
    }

    @Test func savingIsAtMostOnceAMinuteAndAtOnceWhenAWindowStartsOver() {
        let saved = Mutex<[Double]>([])
        let clockNow = Mutex(1_000.0)
        let book = BudgetBook { _ in saved.withLock { $0.append(clockNow.withLock { $0 }) } }
        for t in stride(from: 1_000.0, to: 1_150, by: 5) {
            clockNow.withLock { $0 = t }
            book.charge(
                ["wwan0": TrafficCount(sentBytes: 10)], ownRounds: ["wwan0": 10], budgets: ["wwan0": Self.hour], now: t)
        }
        let times: [Double] = saved.withLock { $0 }
        #expect(times == [1_000, 1_060, 1_100])
    }

    /// 1,000 bytes a round against 10,000 per 100 s, rounds every 5 s: the uplink's probes
    /// stretch to about one round in 10 s and the window ends within its budget, while the
    /// routing table's probes keep the global pace.
    @Test func theSchedulerKeepsAMeteredUplinkWithinItsBudget() async {
        let clock = ManualClock()
        let start = clock.now
        let wall: @Sendable () -> Double = { 1_000 + start.duration(to: clock.now).seconds }
        let probers = ["": ScriptedProber(type: .tcp, clock: clock), "wwan0": ScriptedProber(type: .tcp, clock: clock)]
        probers["wwan0"]!.costs(TrafficCount(sentPackets: 2, sentBytes: 500, receivedPackets: 2, receivedBytes: 500))
        let spec = ProbeSpec(name: "p", type: .tcp, target: "p", evidence: .internet) { probers[$0 ?? ""]! }
        var s = MonitorSettings()
        s.interval = .seconds(5)
        s.timeout = .seconds(1)
        s.stagger = false
        s.fastRecheck = .zero
        s.verdict = VerdictSettings(failAfter: 1, recoverAfter: 1)
        s.uplinks = ["wwan0"]
        s.uplinkBudgets = ["wwan0": Self.hour]
        let book = BudgetBook()
        let monitor = ReachabilityMonitor(probes: [spec], settings: s, clock: clock, wallClock: wall, budgets: book)
        let task = Task { await monitor.run() }
        for _ in 0..<19 {
            _ = await clock.waitForSleepers()
            clock.advance(by: .seconds(5))
        }
        _ = await clock.waitForSleepers()
        task.cancel()
        let table = probers[""]!.calls.count
        let metered = probers["wwan0"]!.calls.count
        #expect(table == 20)
        #expect(
            (8...10).contains(metered),
            "metered rounds: \(probers["wwan0"]!.calls.map { start.duration(to: $0).seconds })")
        #expect(book.snapshot["wwan0"]!.used == UInt64(metered) * 1_000)
        #expect(book.snapshot["wwan0"]!.used <= Self.hour.bytes)
        let pace = monitor.current?.uplinkPaces["wwan0"]
        #expect(pace?.budget == Self.hour && pace?.cause != "interval")
        #expect(monitor.current?.traffic["wwan0"].map { $0.bytes == 1_000 || $0.bytes == 0 } ?? true)
    }

    /// A spent or stretching budget holds even against rounds a path change or a stall triggers.
    @Test func aSpentUplinkIsNotProbedByTriggeredRoundsEither() {
        let clock = ManualClock()
        let now = clock.now
        let spec = ProbeSpec(name: "p", type: .tcp, target: "p") { _ in ScriptedProber(type: .tcp, clock: clock) }
        let jobs: [(spec: ProbeSpec, interface: String?)] = [(spec, nil), (spec, "wwan0")]
        let lastRun = [ProbeKey("p", nil): now, ProbeKey("p", "wwan0"): now]
        let spent = UplinkPace(interval: .seconds(60), cause: "exhausted", budget: Self.hour, used: 10_000)
        let stretched = UplinkPace(interval: .seconds(60), cause: "budget", budget: Self.hour, used: 10)
        for periodic in [true, false] {
            let picked = DueJobs.select(
                jobs, lastRun: lastRun, now: now.advanced(by: .seconds(5)), periodic: periodic,
                paces: ["wwan0": spent], last: nil, passive: nil)
            #expect(picked.map(\.interface) == [nil])
        }
        let triggered = DueJobs.select(
            jobs, lastRun: lastRun, now: now.advanced(by: .seconds(5)), periodic: false, paces: ["wwan0": stretched],
            last: nil, passive: nil)
        #expect(triggered.map(\.interface) == [nil], "a stretched pace holds in triggered rounds too")
    }
}

/// What a TCP connection put on the wire, from its `tcp_info` as it closes.
@Suite struct TrafficMeterTests {
    static func info(state: UInt8, timestamps: Bool, segsOut: UInt32, segsIn: UInt32, sent: UInt64, received: UInt64)
        -> [UInt8]
    {
        var t = [UInt8](repeating: 0, count: 232)
        t[0] = state
        t[5] = timestamps ? 1 : 0
        t.withUnsafeMutableBytes { b in
            b.storeBytes(of: received, toByteOffset: 128, as: UInt64.self)
            b.storeBytes(of: segsOut, toByteOffset: 136, as: UInt32.self)
            b.storeBytes(of: segsIn, toByteOffset: 140, as: UInt32.self)
            b.storeBytes(of: sent, toByteOffset: 200, as: UInt64.self)
        }
        return t
    }

    @Test func anEstablishedConnectionCountsItsSegmentsHeadersAndTheCloseToCome() {
        // SYN, ACK, request out; SYN-ACK, response in; then FIN + last ACK out, FIN-ACK in.
        let t = Self.info(state: 1, timestamps: true, segsOut: 3, segsIn: 2, sent: 100, received: 300)
        let c = t.withUnsafeBytes { TrafficMeter.tcp(info: $0, family: .ipv4) }
        #expect(c.sentPackets == 5 && c.receivedPackets == 3)
        #expect(c.sentBytes == 100 + 5 * 52 + 8 && c.receivedBytes == 300 + 3 * 52 + 8)
        let v6 = t.withUnsafeBytes { TrafficMeter.tcp(info: $0, family: .ipv6) }
        #expect(v6.sentBytes == 100 + 5 * 72 + 8)
    }

    @Test func aConnectThatNeverAnsweredCountsItsSYNsOnly() {
        let t = Self.info(state: 2, timestamps: false, segsOut: 3, segsIn: 0, sent: 0, received: 0)
        let c = t.withUnsafeBytes { TrafficMeter.tcp(info: $0, family: .ipv4) }
        #expect(c == TrafficCount(sentPackets: 3, sentBytes: 3 * 60))
        #expect([UInt8](repeating: 0, count: 100).withUnsafeBytes { TrafficMeter.tcp(info: $0, family: .ipv4) }.isZero)
    }

    @Test func echoesCountWhatAnsweredThem() {
        let m = TrafficMeter()
        m.echo(.reply(rtt: .milliseconds(1), ttl: 64), payload: 56, family: .ipv4)
        m.echo(.timedOut, payload: 56, family: .ipv6)
        m.echo(.notSent(.unreachable, "x"), payload: 56, family: .ipv4)
        m.echo(.tooBig(mtu: 1400, "x"), payload: 1472, family: .ipv4)
        #expect(
            m.total
                == TrafficCount(
                    sentPackets: 3, sentBytes: 84 + 104 + 1500, receivedPackets: 2, receivedBytes: 84 + 576))
    }
}
