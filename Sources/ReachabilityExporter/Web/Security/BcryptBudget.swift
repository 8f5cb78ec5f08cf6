import ReachabilityVerdict

/// Who may run an uncached bcrypt check now, and how many wait for it: a bound on bcrypt work
/// that a client with the right password gets through however many addresses flood wrong ones
/// (#41: wrong passwords from 4 to 20 addresses kept a scraper whose login was not cached, as
/// after every restart, at 429 for 9 to 17 tries).
///
/// Clients are counted by address block (an IPv4 address, an IPv6 /64, an IPv4-mapped IPv6
/// address as its IPv4). Rules, in order (no clock, no I/O, no lock: the caller gives the time
/// and holds the lock):
/// 1. **Credit.** A block with no failed check has one check on credit: it is admitted while
///    fewer than `places` checks are admitted (`places + reservedPlaces` when the block is
///    polite: its first request, or one `politeGap` after its last) and the credit bucket
///    (`creditRate` a second, burst `creditBurst`) has a token. A failed check ends the credit
///    until the block has been quiet (no request) for `window`; a successful one gives it back. So a flood of wrong passwords from
///    any number of addresses turns each of them into a failing block after one check each,
///    while a scraper that has not failed keeps its place in front of them.
/// 2. **Fair shares.** A failing block (and one whose check on credit is still running) has a
///    bucket of at most `capacity` tokens, refilled at `rate / n` while it is active (seen in
///    the last `window`), n the active failing blocks: the floods share `rate` a second. It is
///    admitted while fewer than `places` checks are.
/// 3. The table holds at most `maxBlocks`; when full, the eighth seen least recently is forgotten.
///
/// Every admission is ended by `finish` with the check's outcome. Checks run one at a time (the
/// caller's lock), so bcrypt costs at most one core whatever the rates. What many addresses can
/// still do: each fresh address (or one quiet for `window`) gets one check on credit, at most
/// `creditRate` a second in all; while an attacker has fresh addresses left, the scraper's check
/// on credit competes with theirs (N fresh addresses delay it by about N / `creditRate`
/// seconds), and an attacker with more than `creditRate × window` (600) blocks, each asking
/// once a minute, can keep an uncached scraper out for as long as it keeps that up. A cached
/// login is never affected. Addresses of the scraper's own block share its fate.
///
/// Not for: limiting requests (the web config's `rate_limit` does that), or cached logins (never
/// counted).
struct BcryptBudget {
    struct Admission: Equatable {
        /// Admitted on the block's credit (it had not failed), into the reserved place if need be.
        let onCredit: Bool
    }

    var rate = 10.0
    var capacity = 2.0
    var window = 60.0
    var creditRate = 10.0
    var creditBurst = 10.0
    /// Checks admitted at once: one running and one waiting.
    var places = 2
    /// Two more, for checks on credit of a polite block only (a scraper after a restart finds
    /// one while the flood's addresses spend their own credit).
    var reservedPlaces = 2
    /// A block is polite when it asks for the first time, or at least this long after its last
    /// request: a scraper asks every few seconds, a flood many times a second.
    var politeGap = 0.5
    var maxBlocks = 4096

    private struct Block {
        var tokens = 0.0
        var refilledAt: Double
        var lastSeen: Double
        /// When a check of this block last failed (nil: none in the window).
        var failedAt: Double?
        /// Its check on credit was admitted and has not succeeded since.
        var creditUsed = false
    }

    private var blocks: [[UInt8]: Block] = [:]
    private var credit: (tokens: Double, at: Double)?
    private var active = 1
    private var activeCountedAt = -Double.infinity
    /// Checks admitted and not finished.
    private(set) var admitted = 0

    init() {}

    /// Blocks in the table now.
    var blockCount: Int { blocks.count }

    /// Admits a check for `block` at `now` (seconds, any origin, not decreasing); nil: 429.
    mutating func admit(_ block: [UInt8], now: Double) -> Admission? {
        if now - activeCountedAt >= 1 {
            active = max(1, blocks.values.count { $0.failedAt != nil && $0.lastSeen >= now - window })
            activeCountedAt = now
        }
        if blocks[block] == nil, blocks.count >= maxBlocks { evictOldest() }
        let polite = blocks[block].map { now - $0.lastSeen >= politeGap } ?? true
        var b = blocks[block] ?? Block(refilledAt: now, lastSeen: now)
        defer { blocks[block] = b }
        // A failure is forgotten only after a quiet window: a block that keeps asking stays
        // failing, so the credit is not handed round again to the same flood.
        if let failed = b.failedAt, now - failed > window, now - b.lastSeen > window {
            b.failedAt = nil
            b.creditUsed = false
        }
        // The fair share accrues while the block is active, and only then.
        let accruedUntil = min(now, b.lastSeen + window)
        if accruedUntil > b.refilledAt {
            b.tokens = min(capacity, b.tokens + (accruedUntil - b.refilledAt) * rate / Double(active))
        }
        b.refilledAt = max(b.refilledAt, now)
        b.lastSeen = now
        if b.failedAt == nil, !b.creditUsed {
            guard admitted < places + (polite ? reservedPlaces : 0), takeCredit(now) else { return nil }
            b.creditUsed = true
            admitted += 1
            return Admission(onCredit: true)
        }
        guard b.tokens >= 1, admitted < places else { return nil }
        b.tokens -= 1
        admitted += 1
        return Admission(onCredit: false)
    }

    /// Ends an admission: a failed check marks its block failing for `window`; a successful one
    /// gives its credit back.
    mutating func finish(_ block: [UInt8], failed: Bool, now: Double) {
        admitted = max(0, admitted - 1)
        guard var b = blocks[block] else { return }
        if failed {
            b.failedAt = now
            b.creditUsed = true
        } else {
            b.failedAt = nil
            b.creditUsed = false
        }
        blocks[block] = b
    }

    private mutating func takeCredit(_ now: Double) -> Bool {
        var c = credit ?? (creditBurst, now)
        c.tokens = min(creditBurst, c.tokens + max(0, now - c.at) * creditRate)
        c.at = now
        defer { credit = c }
        guard c.tokens >= 1 else { return false }
        c.tokens -= 1
        return true
    }

    /// Forgets the eighth of the table seen least recently (sorting once per `maxBlocks / 8` new blocks).
    private mutating func evictOldest() {
        let oldest = blocks.sorted { $0.value.lastSeen < $1.value.lastSeen }.prefix(max(1, maxBlocks / 8))
        for (key, _) in oldest { blocks[key] = nil }
    }

    /// The block an address belongs to: IPv4 (and IPv4-mapped IPv6) its 4 bytes, IPv6 its /64;
    /// text that is not an address is its own block.
    static func block(of address: String) -> [UInt8] {
        guard let parsed = SocketAddress(ip: address) else { return Array(address.utf8) }
        let bytes = parsed.addressBytes
        guard bytes.count == 16 else { return bytes }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {
            return Array(bytes[12..<16])
        }
        return Array(bytes[0..<8]) + [64]
    }
}
