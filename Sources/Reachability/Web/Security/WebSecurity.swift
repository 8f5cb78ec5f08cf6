import Synchronization

/// The web configuration in force, re-read when it changes, and the authentication it asks for.
///
/// Reloading: at most once a second, when a new connection arrives, the stamps (inode, size,
/// modification time) of the file and of every file it names are compared with the last good
/// load's; a change re-reads everything. A good file takes effect for new connections at once
/// (new certificates, new passwords); a broken edit keeps the last good settings, is logged once
/// per change and counted (`reachability_exporter_web_config_reloads_total{result="failure"}`).
///
/// Authentication: `Basic` credentials checked with bcrypt through libcrypt. A successful check
/// is cached (a SHA-256 of user, password and hash, never the password), so a Prometheus that
/// scrapes every second pays one bcrypt, not one per scrape. Uncached checks are bounded: one
/// at a time, at most 10 a second (burst 10); beyond that the request is answered 429 at once,
/// so a flood of wrong passwords costs at most one core's share of bcrypt and never a worker
/// for long.
package final class WebSecurity: Sendable {
    package let path: String
    private let logger: Logger
    private let state: Mutex<State>
    private let successes = Mutex<Set<[UInt8]>>([])
    private let checking = Atomic<Bool>(false)
    private let bcryptBucket: TokenBucket
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
        bcryptBucket = TokenBucket(rate: 10, burst: 10)
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
            let freshStamps = fresh.files.map(FileStamp.of)
            state.withLock { s in
                s.config = fresh
                s.stamps = freshStamps
                s.failedStamps = nil
                s.requests = fresh.rateLimit.map { TokenBucket(rate: 1 / $0.interval.seconds, burst: Double($0.burst)) }
            }
            successes.withLock { $0.removeAll() }
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

    /// Checks a request against `config`'s rate limit and users.
    package func authorize(_ request: HTTPRequest, config: WebConfig) -> Decision {
        let limited = state.withLock { s in s.requests.map { !$0.take() } ?? false }
        if limited {
            refused?.labels("rate_limit").inc()
            return .busy
        }
        guard !config.users.isEmpty else { return .allow }
        guard let (user, password) = Self.credentials(request.header("Authorization")),
            let hash = config.users[user]
        else {
            refused?.labels("credentials").inc()
            return .unauthorized
        }
        let key = PasswordHash.sha256(Array(user.utf8) + [0] + password + [0] + Array(hash.utf8))
        if successes.withLock({ $0.contains(key) }) { return .allow }
        // One bcrypt at a time, at most 10 a second: a flood of guesses cannot take the CPU.
        guard bcryptBucket.take(), !checking.exchange(true, ordering: .acquiring) else {
            refused?.labels("busy").inc()
            return .busy
        }
        defer { checking.store(false, ordering: .releasing) }
        guard PasswordHash.verify(password: password, hash: hash) else {
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
