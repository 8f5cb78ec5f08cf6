/// Who may run an uncached bcrypt check now: a budget of `rate` checks a second in all, shared
/// fairly between address blocks (an IPv4 address, an IPv6 /64, an IPv4-mapped IPv6 address as
/// its IPv4), so that a scraper with the right password gets through however many addresses
/// flood wrong ones (#41: wrong passwords from 4 to 20 addresses kept an uncached scraper at 429).
///
/// Rules, in order (no clock, no I/O, no lock: the caller gives the time and holds the lock):
/// 1. Each block has a bucket of at most `capacity` tokens. A block is active while it was seen
///    in the last `window`; while active it refills at `rate / n`, n the active blocks (counted
///    again at most once a second), so the refills add up to `rate` whatever n is, and flooding
///    blocks share them. A block that stays away stops refilling after `window`.
/// 2. A block seen for the first time starts with what the newcomers' bucket (`newcomerRate` a
///    second, burst `newcomerBurst`) can give, up to `capacity` (so a person who mistypes once
///    is not refused at the second try): an attacker who rotates through many addresses gets
///    that much more, no more.
/// 3. A quiet block (its bucket full when it asks: the scraper that asks every 15 s) is served at
///    once; `wasFull` tells the caller, which gives it a reserved place to wait for bcrypt.
/// 4. The table holds at most `maxBlocks`; when full, the eighth seen least recently is forgotten.
///
/// So bcrypt work is at most `rate + newcomerRate` a second, plus what blocks saved (each at
/// most `capacity`, saved at no more than `rate` a second in all).
///
/// Not for: limiting requests (the web config's `rate_limit` does that), or cached logins (never
/// counted).
struct BcryptBudget {
    struct Grant: Equatable {
        /// The block's bucket was full: it had been quiet.
        let wasFull: Bool
    }

    var rate = 10.0
    var capacity = 2.0
    var window = 60.0
    var newcomerRate = 1.0
    var newcomerBurst = 4.0
    var maxBlocks = 4096

    private struct Block {
        var tokens: Double
        var refilledAt: Double
        var lastSeen: Double
    }

    private var blocks: [[UInt8]: Block] = [:]
    private var newcomerTokens: Double?
    private var newcomersAt = 0.0
    private var active = 1
    private var activeCountedAt = -Double.infinity

    init() {}

    /// Blocks in the table now.
    var blockCount: Int { blocks.count }

    /// Takes a token for `block` at `now` (seconds, any origin, not decreasing); nil: none left.
    mutating func take(_ block: [UInt8], now: Double) -> Grant? {
        if now - activeCountedAt >= 1 {
            active = max(1, blocks.values.count { $0.lastSeen >= now - window })
            activeCountedAt = now
        }
        guard var b = blocks[block] else {
            if blocks.count >= maxBlocks { evictOldest() }
            let welcome = takeNewcomerTokens(now)
            blocks[block] = Block(tokens: max(0, welcome - 1), refilledAt: now, lastSeen: now)
            return welcome >= 1 ? Grant(wasFull: false) : nil
        }
        let accruedUntil = min(now, b.lastSeen + window)
        if accruedUntil > b.refilledAt {
            b.tokens = min(capacity, b.tokens + (accruedUntil - b.refilledAt) * rate / Double(active))
        }
        b.refilledAt = max(b.refilledAt, now)
        b.lastSeen = now
        let wasFull = b.tokens >= capacity
        defer { blocks[block] = b }
        guard b.tokens >= 1 else { return nil }
        b.tokens -= 1
        return Grant(wasFull: wasFull)
    }

    /// Gives back a token taken by `take` that was not used (no place to wait for bcrypt).
    mutating func refund(_ block: [UInt8]) {
        guard var b = blocks[block] else { return }
        b.tokens = min(capacity, b.tokens + 1)
        blocks[block] = b
    }

    /// Whole tokens (up to `capacity`) from the newcomers' bucket.
    private mutating func takeNewcomerTokens(_ now: Double) -> Double {
        let tokens = min(newcomerBurst, (newcomerTokens ?? newcomerBurst) + (now - newcomersAt) * newcomerRate)
        newcomersAt = now
        let given = min(capacity, tokens.rounded(.down))
        newcomerTokens = tokens - given
        return given
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
