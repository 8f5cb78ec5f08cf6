import ReachabilityVerdict
import Synchronization

/// The web configuration in force, re-read when it changes, and the authentication it asks for.
///
/// Reloading: at most once a second, when a new connection arrives, the stamps (inode, size,
/// modification time) of the file and of every file it names are compared with the last good
/// load's; a change re-reads everything. A good file takes effect for new connections at once
/// (new certificates, new passwords); a broken edit keeps the last good settings, is logged once
/// per change and counted (`reachability_exporter_web_config_reloads_total{result="failure"}`).
///
/// Fails closed: a reload to a file that is empty, or that would turn off TLS, client
/// certificates or basic auth while they are on, is refused like a broken one (the last good
/// settings stay, the failure is counted and logged with the reason); turning them off needs a
/// restart.
///
/// Authentication: `Basic` credentials checked with bcrypt through libcrypt. A successful check
/// is cached (a SHA-256 of user, password and hash, never the password), so a Prometheus that
/// scrapes every second pays one bcrypt, not one per scrape; the cache outlives reloads that
/// leave the users as they were. An unknown user costs a bcrypt too (against a configured
/// hash, then refused), so timing does not tell which names exist. Uncached checks are admitted
/// by `BcryptBudget` (per address block: an IPv4 address, an IPv6 /64): a block that has not
/// failed has one check on credit (and, when polite, two reserved places); failing blocks share 10 a second
/// fairly. They run one at a time with at most one more waiting (three with the reserved
/// places); beyond that the request is answered 429 at once, so a flood of wrong passwords from many
/// addresses cannot lock out a scraper at another, never parks the server's workers, and costs
/// at most one core.
package final class WebSecurity: Sendable {
    package let path: String
    private let logger: Logger
    private let state: Mutex<State>
    private let successes = Mutex<Set<[UInt8]>>([])
    /// Held while bcrypt runs. One check may wait for it, no more: the rest are answered 429 at
    /// once, so a flood never parks the server's workers (cached logins and `/metrics` need one).
    private let checking = Mutex<Void>(())
    private let budget = Mutex(BcryptBudget())
    private let origin = ContinuousClock.now
    private let reloads: MetricFamily<Counter>?
    private let lastReloadOK: Gauge?
    private let refused: MetricFamily<Counter>?

    private struct State: Sendable {
        var config: WebConfig
        var stamps: [FileStamp?]
        var lastCheck: ContinuousClock.Instant
        var requests: TokenBucket?
        var failedStamps: [FileStamp?]?
    }

    /// Authentication outcome of one request.
    package enum Decision: Equatable, Sendable {
        case allow
        /// Missing or wrong credentials: 401 with `WWW-Authenticate: Basic`.
        case unauthorized
        /// An uncached check could not run now (bcrypt bound reached, or the rate limit): 429.
        case busy
    }

    /// Loads `path`; a bad file is the caller's exit 78.
    package init(path: String, logger: Logger, registry: MetricsRegistry? = nil) throws(ConfigError) {
        let config = try WebConfig.load(path: path)
        self.path = path
        self.logger = logger
        state = Mutex(
            State(
                config: config, stamps: config.files.map(FileStamp.of), lastCheck: .now,
                requests: config.rateLimit.map { TokenBucket(rate: 1 / $0.interval.seconds, burst: Double($0.burst)) }))
        reloads = registry?.counter(MetricCatalog.exporterWebConfigReloadsTotal)
        lastReloadOK = registry?.gauge(MetricCatalog.exporterWebConfigLastReloadSuccessful).labels()
        lastReloadOK?.set(1)
        refused = registry?.counter(MetricCatalog.exporterHttpUnauthorizedTotal)
        for result in ["success", "failure"] { _ = reloads?.labels(result) }
    }

    /// The configuration for a new connection: the last good one, re-read first if a file changed.
    package func current() -> WebConfig {
        let now = ContinuousClock.now
        let (config, files, due) = state.withLock { s -> (WebConfig, [String], Bool) in
            let due = now - s.lastCheck >= .seconds(1)
            if due { s.lastCheck = now }
            return (s.config, s.config.files, due)
        }
        guard due else { return config }
        let stamps = files.map(FileStamp.of)
        let changed = state.withLock { s in stamps != s.stamps && stamps != (s.failedStamps ?? []) }
        guard changed else { return config }
        do throws(ConfigError) {
            let fresh = try WebConfig.load(path: path)
            if let weaker = Self.downgrade(from: config, to: fresh) {
                throw ConfigError(
                    file: path, mark: nil, path: "",
                    expected: "a reload that keeps \(weaker) on (turning it off needs a restart)",
                    found: "a configuration without it")
            }
            let freshStamps = fresh.files.map(FileStamp.of)
            state.withLock { s in
                s.config = fresh
                s.stamps = freshStamps
                s.failedStamps = nil
                s.requests = fresh.rateLimit.map { TokenBucket(rate: 1 / $0.interval.seconds, burst: Double($0.burst)) }
            }
            // Entries are keyed by user, password and hash, so only changed users can stale them.
            if fresh.users != config.users { successes.withLock { $0.removeAll() } }
            reloads?.labels("success").inc()
            lastReloadOK?.set(1)
            logger.info("web configuration reloaded", ("file", path))
            return fresh
        } catch {
            state.withLock { $0.failedStamps = stamps }
            reloads?.labels("failure").inc()
            lastReloadOK?.set(0)
            logger.error("web configuration not reloaded; keeping the last good one", ("err", error.description))
            return config
        }
    }

    /// What `fresh` would weaken that `running` has on, or nil: TLS, requiring a client
    /// certificate, verifying it, the allowed SANs, basic auth (or on a path newly excluded from
    /// it). Tightening and replacing
    /// (new certificates, new users, another SAN list) are not weakening.
    static func downgrade(from running: WebConfig, to fresh: WebConfig) -> String? {
        if running.tls != nil && fresh.tls == nil { return "TLS" }
        let old = running.tls?.settings
        let new = fresh.tls?.settings
        func requires(_ a: TLSServerContext.ClientAuth?) -> Bool { a == .requireAny || a == .requireAndVerify }
        func verifies(_ a: TLSServerContext.ClientAuth?) -> Bool { a == .verifyIfGiven || a == .requireAndVerify }
        if requires(old?.clientAuth) && !requires(new?.clientAuth) { return "requiring client certificates" }
        if verifies(old?.clientAuth) && !verifies(new?.clientAuth) { return "verifying client certificates" }
        if !(old?.clientAllowedSANs.isEmpty ?? true) && (new?.clientAllowedSANs.isEmpty ?? true) {
            return "client_allowed_sans"
        }
        if !running.users.isEmpty && fresh.users.isEmpty { return "basic auth" }
        if !running.users.isEmpty, let path = fresh.authExcludedPaths.subtracting(running.authExcludedPaths).min() {
            return "basic auth on \(path)"
        }
        return nil
    }

    /// A bcrypt hash's cost (`$2b$10$…` → 10); 0 when unreadable.
    static func cost(_ hash: String) -> Int {
        Int(String(decoding: Array(hash.utf8.dropFirst(4).prefix(2)), as: UTF8.self)) ?? 0
    }

    /// Checks a request from `client` (its IP address) against `config`'s rate limit and users.
    package func authorize(_ request: HTTPRequest, config: WebConfig, client: String = "") -> Decision {
        let limited = state.withLock { s in s.requests.map { !$0.take() } ?? false }
        if limited {
            refused?.labels("rate_limit").inc()
            return .busy
        }
        guard !config.users.isEmpty, !config.authExcludedPaths.contains(request.path) else { return .allow }
        guard let (user, password) = Self.credentials(request.header("Authorization")) else {
            refused?.labels("credentials").inc()
            return .unauthorized
        }
        // An unknown user is checked against the costliest configured hash and refused whatever
        // the outcome: the answer takes as long as for a known user with a wrong password.
        let known = config.users[user]
        guard let hash = known ?? config.users.values.max(by: { Self.cost($0) < Self.cost($1) }) else {
            return .unauthorized
        }
        let key = PasswordHash.sha256(Array(user.utf8) + [0] + password + [0] + Array(hash.utf8))
        if known != nil, successes.withLock({ $0.contains(key) }) { return .allow }
        // A fair share of the budget per address block, one at a time: a flood of guesses
        // cannot take the CPU, nor the turn of a client elsewhere.
        let block = BcryptBudget.block(of: client)
        guard budget.withLock({ $0.admit(block, now: (ContinuousClock.now - origin).seconds) }) != nil else {
            refused?.labels("busy").inc()
            return .busy
        }
        let verified = checking.withLock { _ in PasswordHash.verify(password: password, hash: hash) }
        let failed = !verified || known == nil
        budget.withLock { $0.finish(block, failed: failed, now: (ContinuousClock.now - origin).seconds) }
        guard !failed else {
            refused?.labels("credentials").inc()
            return .unauthorized
        }
        successes.withLock { cache in
            if cache.count >= 1024 { cache.removeAll() }
            cache.insert(key)
        }
        return .allow
    }

    /// Counts a TLS client refused for its certificate's SANs.
    package func countRefusedCertificate() { refused?.labels("client_san").inc() }

    /// `Basic base64(user:password)` → (user, password bytes).
    static func credentials(_ header: String?) -> (String, [UInt8])? {
        guard let header else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "basic",
            let decoded = Base64.decode(String(parts[1]).trimmingSpacesString), let colon = decoded.firstIndex(of: 0x3A)
        else { return nil }
        return (String(decoding: decoded[..<colon], as: UTF8.self), Array(decoded[(colon + 1)...]))
    }
}

/// A token bucket: `rate` tokens a second up to `burst`.
final class TokenBucket: Sendable {
    private let state: Mutex<(tokens: Double, last: ContinuousClock.Instant)>
    private let rate: Double
    private let burst: Double

    init(rate: Double, burst: Double) {
        self.rate = rate
        self.burst = burst
        state = Mutex((burst, .now))
    }

    func take() -> Bool {
        let now = ContinuousClock.now
        return state.withLock { s in
            s.tokens = min(burst, s.tokens + (now - s.last).seconds * rate)
            s.last = now
            guard s.tokens >= 1 else { return false }
            s.tokens -= 1
            return true
        }
    }
}

extension String {
    fileprivate var trimmingSpacesString: String { Substring(self).trimmingSpaces }
}
