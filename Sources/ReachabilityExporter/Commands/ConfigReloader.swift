import ReachabilityVerdict
import Synchronization

/// Reloads `--config.file` on SIGHUP and `POST /-/reload`: reads and checks the file, combines
/// it with the start-up flags (`ExporterOptions`), and hands the probes and settings to the
/// monitor, which swaps them between rounds. An invalid file changes nothing: the error is
/// logged, `reachability_exporter_config_last_reload_successful` drops to 0, and the HTTP
/// caller gets a 500 with the error. Reloads run one at a time, and requests are coalesced
/// (`CoalescingQueue`): every request that comes while a reload is pending shares it and its
/// outcome, so a flood of `POST /-/reload` during a round runs one reload after it, and the
/// callers wait suspended, holding no web worker (#41).
///
/// `uplinks: auto` is the monitor's (`MonitorSettings.autoUplinks`): a reload hands it over,
/// and the monitor adopts the interfaces that hold a default route then and later.
///
/// With `--config.auto-reload-interval` it re-reads the file by itself when its content changes
/// (a SHA-256 of the bytes, checked at that interval, as Prometheus does): a Kubernetes
/// ConfigMap edit, an Ansible push. A file that is invalid is tried once per change, not once
/// per check.
///
/// As a `Service`, `run()` carries out the reload requests (`requestReload`, the HTTP route)
/// one after another, until cancelled.
final class ConfigReloader: Service {

    /// What a successful reload changed.
    struct Summary: Sendable, Equatable, CustomStringConvertible {
        var probes: Int
        var added: [String]
        var removed: [String]
        var changed: [String]
        var uplinks: [String]

        var description: String {
            func list(_ names: [String]) -> String { names.isEmpty ? "none" : names.joined(separator: ", ") }
            return "\(probes) probes; added: \(list(added)); removed: \(list(removed)); changed: \(list(changed))"
        }
    }

    /// Hands probes and settings to the monitor; `changed` false: the file says what runs
    /// already (probers are built again, for rotated CA files, but no extra round runs).
    /// Hands probes and settings to the monitor; returns the settings it applied (under
    /// `uplinks: auto`, with the uplinks it adopted).
    typealias Apply =
        @Sendable (_ probes: [ProbeSpec], _ settings: MonitorSettings, _ changed: Bool) async
        -> MonitorSettings

    let path: String
    private let flags: ParsedFlags
    private let environment: [String: String]
    private let logger: Logger
    private let apply: Apply
    private let metrics: ConfigMetrics
    private let wallClock: @Sendable () -> Double
    private let lock = AsyncLock()
    private let current: Mutex<ExporterOptions>
    /// The uplinks the monitor runs now (under `uplinks: auto`, those it adopted).
    private let appliedUplinks: Mutex<[String]>
    /// SIGHUP and HTTP requests; HTTP callers wait for the outcome (32 at most, 429 past them).
    let requests = CoalescingQueue<Result<Summary, ConfigError>>(maxWaiters: 32)
    /// How long an HTTP caller waits for its reload before a 503.
    let httpTimeout: Duration
    private let autoReloadInterval: Duration?
    /// SHA-256 of the content last read (loaded or refused); nil: the file could not be read.
    private let lastDigest = Mutex<[UInt8]?>(nil)
    let name = "config-reloader"

    /// The options last applied (at start, or by the latest successful reload).
    var currentOptions: ExporterOptions { current.withLock { $0 } }

    init(
        path: String, flags: ParsedFlags, environment: [String: String], initial: ExporterOptions,
        registry: MetricsRegistry, logger: Logger, wallClock: @escaping @Sendable () -> Double = { unixNow() },
        autoReloadInterval: Duration? = nil, loadedDigest: [UInt8]? = nil, runningUplinks: [String]? = nil,
        httpTimeout: Duration = .seconds(60), apply: @escaping Apply
    ) {
        self.path = path
        self.autoReloadInterval = autoReloadInterval
        self.httpTimeout = httpTimeout
        // What was loaded at start, not what is there now: a change in between is a change.
        lastDigest.withLock { $0 = loadedDigest ?? Self.digest(path) }
        self.flags = flags
        self.environment = environment
        self.logger = logger
        self.apply = apply
        self.wallClock = wallClock
        metrics = ConfigMetrics(registry: registry)
        current = Mutex(initial)
        appliedUplinks = Mutex(runningUplinks ?? initial.settings.uplinks)
        metrics.lastReloadSuccessful.set(1)
        metrics.lastReloadSuccessTimestamp.set(wallClock())
    }

    /// Carries out reload requests (and, with an interval, watches the file) until cancelled.
    func run() async {
        await withTaskGroup(of: Void.self) { group in
            if let interval = self.autoReloadInterval {
                group.addTask { await self.watchFile(every: interval) }
            }
            group.addTask { await self.requests.run { await self.reload(trigger: $0) } }
            await group.waitForAll()
        }
    }

    /// Asks for a reload (SIGHUP), sharing one that is pending; false once the service has stopped.
    @discardableResult
    func requestReload(trigger: String) -> Bool { requests.request(trigger) }

    /// Reads the file again and applies it, or keeps the running configuration and says why.
    @discardableResult
    func reload(trigger: String) async -> Result<Summary, ConfigError> {
        await lock.lock()
        defer { lock.unlock() }
        let old = current.withLock { $0 }
        let next: ExporterOptions
        do throws(ConfigError) {
            next = try load()
            if next.usesBuiltInDefaults && !old.usesBuiltInDefaults {
                throw ConfigError(
                    file: path, mark: nil, path: "probes", expected: "at least one probe",
                    found: "none (the reload would fall back to the built-in public targets)")
            }
        } catch {
            metrics.lastReloadSuccessful.set(0)
            logger.error(
                "configuration reload failed; keeping the running configuration", ("trigger", trigger),
                ("err", error.description))
            return .failure(error)
        }
        if ExporterOptions.pathMonitorEnabled(flags, file: next.file)
            != ExporterOptions.pathMonitorEnabled(flags, file: old.file)
        {
            logger.warn("global.path_monitor changed; it takes effect at the next start", ("file", path))
        }
        if let warning = ProbeSpec.evidenceWarning(next.specs, policy: next.settings.verdict.policy) {
            logger.warn(warning, ("file", path))
        }
        var changed = next.file != old.file || next.settings != old.settings
        let applied = await apply(next.specs, next.settings, changed)
        current.withLock { $0 = next }
        // Under `uplinks: auto` the uplinks are what the monitor adopted: one that lost its route
        // since is dropped by this reload, a change even when the file is the same.
        changed = appliedUplinks.withLock { running in
            defer { running = applied.uplinks }
            return changed || running != applied.uplinks
        }
        if next.settings.autoUplinks && applied.uplinks.isEmpty {
            logger.warn(Self.noRouteUplinks, ("file", path))
        }
        if let warning = next.uplinkSettingsWarning(adopted: applied.uplinks) {
            logger.warn(warning, ("file", path))
        }
        metrics.lastReloadSuccessful.set(1)
        metrics.lastReloadSuccessTimestamp.set(wallClock())
        var summary = Self.summary(old: old, new: next)
        summary.uplinks = applied.uplinks
        logger.info(
            changed ? "configuration reloaded" : "configuration reloaded, unchanged", ("trigger", trigger),
            ("file", path), ("probes", summary.probes),
            ("added", summary.added.joined(separator: ",")), ("removed", summary.removed.joined(separator: ",")),
            ("changed", summary.changed.joined(separator: ",")), ("uplinks", summary.uplinks.joined(separator: ",")))
        return .success(summary)
    }

    private func load() throws(ConfigError) -> ExporterOptions {
        let bytes: [UInt8]
        do throws(Errno) { bytes = try FileContents.read(path, limit: ConfigLoader.maximumSize) } catch {
            lastDigest.withLock { $0 = nil }
            throw ConfigError(
                file: path, mark: nil, path: "", expected: "a readable configuration file",
                found: FileContents.describe(error, limit: ConfigLoader.maximumSize))
        }
        lastDigest.withLock { $0 = PasswordHash.sha256(bytes) }
        let file = try ConfigLoader.parse(bytes, file: path)
        do throws(ExporterOptions.Failure) {
            return try ExporterOptions.resolve(
                flags: flags, file: file, environment: environment)
        } catch {
            switch error {
            case .config(let e): throw e
            case .usage(let e):
                throw ConfigError(
                    file: path, mark: nil, path: "", expected: "a configuration the command line accepts",
                    found: e.message)
            }
        }
    }

    /// `POST /-/reload`: 200 with a summary, 500 with the error, 405 for other methods.
    /// The caller waits suspended (no thread held) and shares a pending reload with every
    /// caller that came while it was pending; past 32 waiting, 429 at once.
    func route(_ request: HTTPRequest) async -> HTTPResponse? {
        guard request.path == "/-/reload" else { return nil }
        guard request.method == "POST" else { return WebRoutes.methodNotAllowed("POST") }
        let result: Result<Summary, ConfigError>
        switch await requests.requestAndWait("http", timeout: httpTimeout) {
        case .done(let outcome): result = outcome
        case .stopped: return HTTPResponse(status: 503, text: "shutting down: no reload\n")
        case .timedOut:
            return HTTPResponse(
                status: 503, text: "configuration reload still running after \(DurationParser.format(httpTimeout))\n")
        case .busy:
            return HTTPResponse(
                status: 429,
                text:
                    "a reload is pending and \(requests.maxWaiters) callers wait for it already; it covers this request\n",
                headers: [("Retry-After", "1")])
        }
        switch result {
        case .success(let summary): return HTTPResponse(status: 200, text: "configuration reloaded: \(summary)\n")
        case .failure(let error):
            return HTTPResponse(
                status: 500, text: "configuration reload failed; keeping the running configuration: \(error)\n")
        }
    }

    /// `--config.auto-reload-interval`: reloads when the file's content differs from what was
    /// last read, checking every `interval`, until cancelled.
    func watchFile(every interval: Duration) async {
        while !Task.isCancelled {
            do { try await Task.sleep(for: interval) } catch { return }
            let now = Self.digest(path)
            guard lastDigest.withLock({ $0 }) != now else { continue }
            await reload(trigger: "file changed")
        }
    }

    /// SHA-256 of the file's bytes, or nil when it cannot be read.
    static func digest(_ path: String) -> [UInt8]? {
        (try? FileContents.read(path, limit: ConfigLoader.maximumSize)).map(PasswordHash.sha256)
    }

    /// The warning for `uplinks: auto` with no interface holding a default route.
    static let noRouteUplinks =
        "uplinks: auto found no interface holding a default route (is the path monitor off?); interfaces that gain one are added"

    static func summary(old: ExporterOptions, new: ExporterOptions) -> Summary {
        let oldNames = old.specs.map(\.name)
        let newNames = new.specs.map(\.name)
        let changed =
            new.file?.probes.filter { d in
                guard let before = old.file?.probes.first(where: { $0.name == d.name }) else { return false }
                return !before.sameSettings(as: d)
            }.map(\.name) ?? []
        return Summary(
            probes: new.specs.count, added: newNames.filter { !oldNames.contains($0) },
            removed: oldNames.filter { !newNames.contains($0) }, changed: changed, uplinks: new.settings.uplinks)
    }
}
