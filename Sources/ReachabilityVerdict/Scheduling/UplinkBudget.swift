import Synchronization

/// A traffic budget of an uplink (`uplink_settings: {wwan0: {budget: 200MB, budget_period: 30d}}`):
/// `bytes` both ways per `period`, in windows that start at `start` (Unix seconds; 0 unless
/// `budget_start` names the billing day) and follow each other.
public struct TrafficBudget: Sendable, Equatable, Hashable {
    /// Bytes allowed per window, sent and received together.
    public var bytes: UInt64
    /// The length of a window.
    public var period: Duration
    /// Unix seconds when a window starts; the others follow it every `period`.
    public var start: Double

    /// A budget of `bytes` per `period` (30 days by default), windows aligned to `start`.
    public init(bytes: UInt64, period: Duration = .seconds(30 * 86_400), start: Double = 0) {
        self.bytes = bytes
        self.period = period
        self.start = start
    }

    /// The window holding `now`.
    public func window(at now: Double) -> (start: Double, end: Double) {
        let p = max(period.seconds, 1)
        let s = start + ((now - start) / p).rounded(.down) * p
        return (s, s + p)
    }
}

/// How often an uplink's own probes run now, and (with a budget) where its window stands.
public struct UplinkPace: Sendable, Equatable {
    /// The interval the scheduler chose for the uplink's probes.
    public var interval: Duration
    /// Why: `interval` (the configured or global one), `budget` (stretched to last the window),
    /// `exhausted` (nothing left: the probes wait for the next window).
    public var cause: String
    /// The uplink's budget; nil when it has none (only its own interval).
    public var budget: TrafficBudget?
    /// Bytes used in the current window (every byte charged to the uplink, `RoundTraffic`).
    public var used: UInt64 = 0
    /// Unix seconds when the current window ends (0 without a budget).
    public var windowEnd: Double = 0
    /// Bytes a round of the uplink's own probes costs lately (nil before one ran).
    public var perRound: Double?

    /// Bytes left in the current window (0 without a budget, or when it is spent).
    public var remaining: UInt64 { budget.map { $0.bytes > used ? $0.bytes - used : 0 } ?? 0 }
}

/// What each uplink with a budget has used in its window, kept across restarts when the
/// exporter has a history directory (`save`). Every byte charged to the uplink counts (its own
/// probes, the table's probes while it holds the default route, fault checks); only its own
/// probes are paced.
package final class BudgetBook: Sendable {
    package struct Account: Sendable, Equatable {
        package var windowStart: Double
        package var used: UInt64
        /// Bytes per round of the uplink's own probes, smoothed (a quarter of each new round).
        package var perRound: Double?
        /// The count of a window that starts after now, kept while the clock is behind it (a
        /// clock stepped back across a window's start: a router booting before its clock is
        /// set): restored, with what was counted meanwhile, if the clock comes back into that
        /// window; forgotten once the clock passes it.
        package var aside: Aside?

        package struct Aside: Sendable, Equatable {
            package var windowStart: Double
            package var used: UInt64
            package var perRound: Double?
        }

        package init(windowStart: Double, used: UInt64, perRound: Double? = nil, aside: Aside? = nil) {
            self.windowStart = windowStart
            self.used = used
            self.perRound = perRound
            self.aside = aside
        }

        /// This account at a time in `window`, and whether its window started over. A later
        /// window starts at zero; a window that would start after now (the clock is behind the
        /// count) is set aside and counting starts at zero in the real window, so a clock that
        /// ran ahead cannot hold the uplink spent; the clock coming back into the set-aside
        /// window restores its count and adds what was counted meanwhile (over-counting a
        /// little rather than forgetting a month).
        package func advanced(to window: (start: Double, end: Double)) -> (Account, restarted: Bool) {
            var a = self
            var restarted = false
            if let held = a.aside, window.start >= held.windowStart {
                let meanwhile = a.windowStart < held.windowStart ? a.used : 0
                a =
                    window.start == held.windowStart
                    ? Account(
                        windowStart: held.windowStart, used: Self.add(held.used, meanwhile), perRound: held.perRound)
                    : Account(windowStart: window.start, used: 0)
                restarted = true
            }
            if a.windowStart > window.start {
                let aside = a.aside ?? Aside(windowStart: a.windowStart, used: a.used, perRound: a.perRound)
                a = Account(windowStart: window.start, used: 0, aside: aside)
                restarted = true
            } else if a.windowStart < window.start {
                a = Account(windowStart: window.start, used: 0, aside: a.aside)
                restarted = true
            }
            return (a, restarted)
        }

        package static func add(_ a: UInt64, _ b: UInt64) -> UInt64 {
            let (sum, overflow) = a.addingReportingOverflow(b)
            return overflow ? .max : sum
        }
    }
    private let accounts: Mutex<[String: Account]>
    /// When the accounts were last saved: at most once per `saveEvery`, and at once when a
    /// window starts over (a crash loses at most that long of counting).
    private let lastSaved = Mutex<Double>(-.infinity)
    private let save: (@Sendable ([String: Account]) -> Void)?
    package static let saveEvery = 60.0

    package init(restored: [String: Account] = [:], save: (@Sendable ([String: Account]) -> Void)? = nil) {
        accounts = Mutex(restored)
        self.save = save
    }

    package var snapshot: [String: Account] { accounts.withLock { $0 } }

    /// Charges a round: `traffic` per interface, and the bytes of each uplink's own probes that
    /// ran this round (`ownRounds`). Windows that ended start over at zero.
    package func charge(
        _ traffic: [String: TrafficCount], ownRounds: [String: UInt64], budgets: [String: TrafficBudget], now: Double
    ) {
        guard !budgets.isEmpty else { return }
        let (all, changed, restarted): ([String: Account], Bool, Bool) = accounts.withLock { a in
            var changed = false
            var restarted = false
            for (uplink, budget) in budgets {
                let window = budget.window(at: now)
                // A step back within the window keeps the count; across windows see `advanced`.
                var (account, startedOver) = (a[uplink] ?? Account(windowStart: window.start, used: 0))
                    .advanced(to: window)
                restarted = restarted || startedOver
                account.used = Account.add(account.used, traffic[uplink]?.bytes ?? 0)
                if let own = ownRounds[uplink], own > 0 {
                    account.perRound = account.perRound.map { $0 * 0.75 + Double(own) * 0.25 } ?? Double(own)
                }
                if a[uplink] != account { changed = true }
                a[uplink] = account
            }
            a = a.filter { budgets[$0.key] != nil }
            return (a, changed, restarted)
        }
        guard let save, changed else { return }
        let due = lastSaved.withLock { last in
            guard restarted || now - last >= Self.saveEvery || now < last else { return false }
            last = now
            return true
        }
        if due { save(all) }
    }

    /// Saves the counts now, whatever the last save (a clean stop: a restart loses nothing).
    package func saveNow() {
        guard let save else { return }
        let all = accounts.withLock { $0 }
        guard !all.isEmpty else { return }
        save(all)
    }

    /// The interval of `uplink`'s own probes: `floor` (its configured or the global interval),
    /// or with a budget, long enough that rounds costing what they lately cost fit in what is
    /// left of the window; once the rest cannot pay for a round, the end of the window.
    package func pace(_ uplink: String, floor: Duration, budget: TrafficBudget?, now: Double) -> UplinkPace {
        guard let budget else { return UplinkPace(interval: floor, cause: "interval") }
        let window = budget.window(at: now)
        // A new window starts with nothing used and the cost of a round measured afresh (its
        // first round runs), so a round that once cost more than the whole budget cannot
        // stop the uplink for good.
        let account = accounts.withLock { $0[uplink] }.map { $0.advanced(to: window).0 }
        var pace = UplinkPace(
            interval: floor, cause: "interval", budget: budget, used: account?.used ?? 0, windowEnd: window.end,
            perRound: account?.perRound)
        guard let perRound = pace.perRound, perRound > 0 else { return pace }
        let left = Double(pace.remaining)
        let timeLeft = max(window.end - now, 0)
        if left < perRound {
            pace.interval = max(floor, .seconds(timeLeft))
            pace.cause = "exhausted"
            return pace
        }
        let stretched = Duration.seconds(timeLeft / (left / perRound))
        if stretched > floor {
            pace.interval = stretched
            pace.cause = "budget"
        }
        return pace
    }
}

extension BudgetBook {
    /// The file's text: a line per uplink, `name window-start used per-round` (per-round `-`
    /// when unknown), and when a count is set aside, its `window-start used per-round` after.
    package static func encode(_ accounts: [String: Account]) -> String {
        accounts.sorted { $0.key < $1.key }.map { name, a in
            var line = "\(name) \(a.windowStart) \(a.used) \(a.perRound.map { String($0) } ?? "-")"
            if let held = a.aside {
                line += " \(held.windowStart) \(held.used) \(held.perRound.map { String($0) } ?? "-")"
            }
            return line + "\n"
        }.joined()
    }

    /// Accounts read back from `encode`'s text; lines that do not parse are left out (a torn or
    /// edited file loses those uplinks' counts, never the exporter's start).
    package static func decode(_ text: String) -> [String: Account] {
        var out: [String: Account] = [:]
        for line in text.split(separator: "\n") {
            let f = line.split(separator: " ")
            guard f.count == 4 || f.count == 7, InterfaceName.problem(String(f[0])) == nil, let start = Double(f[1]),
                start.isFinite, let used = UInt64(f[2])
            else { continue }
            let perRound = Double(f[3]).flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
            var aside: Account.Aside?
            if f.count == 7, let heldStart = Double(f[4]), heldStart.isFinite, heldStart > start,
                let heldUsed = UInt64(f[5])
            {
                aside = .init(
                    windowStart: heldStart, used: heldUsed,
                    perRound: Double(f[6]).flatMap { $0.isFinite && $0 >= 0 ? $0 : nil })
            }
            out[String(f[0])] = Account(windowStart: start, used: used, perRound: perRound, aside: aside)
        }
        return out
    }
}
