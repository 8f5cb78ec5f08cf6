import ReachabilityVerdict

/// The exporter's composition root: builds every part from the parsed flags (and the file),
/// then runs them as services under one `ServiceRunner` until SIGTERM/SIGINT.
///
/// Start order: signals, path monitor, history, scheduler, configuration reloader, web server;
/// shutdown is the reverse (the server stops serving first, the history writes its `stop`
/// record after the last round). Failures before the services run are exit statuses: 64 for a
/// flag, 78 for the file, 1 for a runtime problem (ICMP not permitted, port in use).
struct Exporter: Sendable {
    let logger: Logger
    let services: [any Service]
    let onHangup: @Sendable () -> Void

    /// Builds everything, or the exit status after printing why.
    static func assemble(_ flags: ParsedFlags) -> Result<Exporter, ExitStatus> {
        let logger: Logger
        let listeners: [HTTPServer.Listener]
        var serverOptions = HTTPServer.Options()
        let histograms: HistogramMode
        let paths: WebPaths
        let modulesOptions: ProbeEndpoint.Options?
        do throws(UsageError) {
            logger = Logger(
                level: try flags.choice("log.level", as: LogLevel.self) ?? .info,
                format: try flags.choice("log.format", as: LogFormat.self) ?? .logfmt)
            listeners = try Self.listeners(flags)
            paths = try Self.webPaths(flags)
            modulesOptions = try ModulesWiring.options(flags)
            _ = try ConfigWiring.autoReloadInterval(flags)  // checked here; read again below
            histograms = try flags.choice("metrics.histograms", as: HistogramMode.self) ?? .both
            serverOptions.maxConnections =
                try flags.int("web.max-connections", range: 1...100_000) ?? serverOptions.maxConnections
            serverOptions.maxConnectionsPerIP =
                try flags.int("web.max-connections-per-ip", range: 1...100_000)
                ?? min(serverOptions.maxConnectionsPerIP, serverOptions.maxConnections)
        } catch {
            writeErr("reachability_exporter: error: \(error.message), try --help\n")
            return .failure(ExitStatus(64))
        }
        MallocArenas.limit(to: 2)
        let openFiles = OpenFileLimit.raise()
        let registry = MetricsRegistry(histograms: histograms)
        ProcessMetrics.register(in: registry)
        var security: WebSecurity?
        if let path = flags.string("web.config.file"), !path.isEmpty {
            do throws(ConfigError) {
                security = try WebSecurity(path: path, logger: logger.with("component", "web"), registry: registry)
            } catch {
                ConfigWiring.startError(
                    "error loading the web configuration file", error.description, file: path, logger: logger)
                return .failure(ExitStatus(78))
            }
        }
        var probeEndpoint: ProbeEndpoint?
        if let modulesOptions {
            do throws(ConfigError) {
                probeEndpoint = try ModulesWiring.endpoint(flags, options: modulesOptions, logger: logger)
            } catch {
                ConfigWiring.startError(
                    "error loading the module file", error.description, file: flags.string("modules.file"),
                    logger: logger)
                return .failure(ExitStatus(78))
            }
        }
        registry.gauge(MetricCatalog.exporterBuildInfo)
            .labels(
                BuildInfo.version, BuildInfo.revision, BuildInfo.branch, BuildInfo.swiftVersion, BuildInfo.os,
                BuildInfo.arch
            ).set(1)

        // The file is read first: its `global.path_monitor` decides whether the path monitor runs.
        let file: ExporterConfig?
        let fileDigest: [UInt8]?
        switch ConfigWiring.loadFile(flags, logger: logger) {
        case .success(let f): (file, fileDigest) = (f?.config, f?.digest)
        case .failure(let exit): return .failure(exit)
        }
        // Stops the netlink monitor when it goes: every early return below cleans up by itself.
        let path = PathWatch(enabled: ExporterOptions.pathMonitorEnabled(flags, file: file))
        if let problem = path.problem { logger.warn("path monitor unavailable; probes alone decide", ("err", problem)) }
        if let monitor = path.monitor { PathMetrics.register(in: registry, source: monitor) }
        let options: ExporterOptions
        switch ConfigWiring.setup(flags, file: file, path: path.gate, logger: logger, daemon: true) {
        case .success(let o): options = o
        case .failure(let exit): return .failure(exit)
        }
        let uplinks = options.settings.adoptingRouteUplinks(path.gate).uplinks
        let budget = FileBudget(
            openFiles: openFiles, options: options, uplinks: uplinks, server: serverOptions,
            probeEndpointPlaces: modulesOptions?.maxTotal ?? 0)
        switch budget.check(logger) {
        case .success(let budgeted): serverOptions = budgeted
        case .failure(let exit): return .failure(exit)
        }
        if let problem = ProbeFlags.checkICMPPermission(options.specs) {
            logger.error("ICMP probes cannot run", ("err", problem))
            return .failure(ExitStatus(1))
        }
        if let warning = ProbeSpec.evidenceWarning(options.specs, policy: options.settings.verdict.policy) {
            logger.warn(warning)
        }
        let parts = Parts(
            logger: logger, registry: registry, path: path, options: options, flags: flags, fileDigest: fileDigest,
            paths: paths, probeEndpoint: probeEndpoint)
        return parts.assemble(listeners: listeners, serverOptions: serverOptions, security: security)
    }

    /// `--web.route-prefix`, `--web.external-url` and `--web.telemetry-path`.
    private static func webPaths(_ flags: ParsedFlags) throws(UsageError) -> WebPaths {
        do throws(WebPaths.Invalid) {
            return try WebPaths(
                routePrefix: flags.string("web.route-prefix"), externalURL: flags.string("web.external-url"),
                telemetryPath: flags.string("web.telemetry-path"))
        } catch {
            throw UsageError(error.message)
        }
    }

    /// `--web.listen-address` (repeatable; the default when none is given), or the sockets
    /// systemd passed with `--web.systemd-socket`.
    private static func listeners(_ flags: ParsedFlags) throws(UsageError) -> [HTTPServer.Listener] {
        let addresses = flags.strings("web.listen-address")
        if flags.bool("web.systemd-socket") {
            guard addresses.isEmpty else {
                throw UsageError("--web.systemd-socket and --web.listen-address exclude each other")
            }
            let inherited = HTTPServer.systemdListeners(environment: processEnvironment())
            guard !inherited.isEmpty else {
                throw UsageError(
                    "--web.systemd-socket: systemd passed no socket to this process (LISTEN_FDS, LISTEN_PID); start it from a .socket unit"
                )
            }
            return inherited
        }
        var out: [HTTPServer.Listener] = []
        for text in addresses.isEmpty ? [ExporterCommand.defaultListenAddress] : addresses {
            do {
                out.append(.address(try ListenAddress.parse(text)))
            } catch {
                throw UsageError("invalid value for flag '--web.listen-address': \(error.description)")
            }
        }
        return out
    }

    /// Runs the services until a signal stops them; the exit status.
    func run() async -> Int32 {
        // The signal service ends at SIGTERM/SIGINT, and a service that ends stops them all.
        let signals = SignalService(watcher: SignalWatcher(), logger: logger, onHangup: onHangup)
        do {
            try await ServiceRunner([signals] + services, gracePeriod: .seconds(5), logger: logger).run()
        } catch {
            return 1
        }
        logger.info("stopped")
        return 0
    }
}

/// The parts once flags, file and path are settled: the history directory's lock, the server
/// (bound first, so a port in use fails before anything is started), the history, the core and
/// its observers, the routes and the reloader, as services in start order.
private struct Parts {
    let logger: Logger
    let registry: MetricsRegistry
    let path: PathWatch
    let options: ExporterOptions
    let flags: ParsedFlags
    /// SHA-256 of the configuration file as loaded: a change after it is a change to reload.
    let fileDigest: [UInt8]?
    let paths: WebPaths
    /// `/probe`, with `--modules.file`.
    let probeEndpoint: ProbeEndpoint?
    var specs: [ProbeSpec] { options.specs }
    var settings: MonitorSettings { options.settings }

    func assemble(listeners: [HTTPServer.Listener], serverOptions: HTTPServer.Options, security: WebSecurity?)
        -> Result<Exporter, ExitStatus>
    {
        if case .failure(let exit) = lockHistory() { return .failure(exit) }
        // The routes read the monitor, made below; the server is bound now and serves once run.
        let routes = WebRoutes.Later()
        let server: HTTPServer
        do {
            server = try HTTPServer(
                listeners: listeners, options: serverOptions, security: security,
                logger: logger.with("component", "web"), registry: registry
            ) { await routes.handle($0) }
        } catch {
            let addresses = listeners.map { l in
                if case .address(let a) = l { return a.description }
                return "systemd socket"
            }
            logger.error("cannot listen", ("address", addresses.joined(separator: ",")), ("err", error.description))
            return .failure(ExitStatus(1))
        }
        let recorder = MetricsRecorder(
            registry: registry, probes: specs, uplinks: settings.uplinks, uplinkProbes: settings.uplinkProbes)
        // History: --history.* flags, else the file's `history:` section. Read back before the
        // first round, written by its own thread.
        let history = options.history.map {
            HistoryService.start(
                $0, interval: settings.interval, registry: registry, logger: logger.with("component", "history"))
        }
        let core = ReachabilityCore(
            path: path, probes: specs, settings: settings,
            observers: [
                recorder, CaptivePortalMetrics(registry: registry), RoundLogger(logger: logger),
                CaptivePortalLog(logger: logger),
            ]
                + (history?.observers ?? []),
            budgets: BudgetStore.book(directory: options.history?.directory, logger: logger))
        let monitor = core.monitor
        history?.restore(into: monitor, logger: logger)
        // What the routers announce (captive-portal API, PREF64) now, not at their next RA.
        Task { await path.solicitRouters() }
        var web = WebRoutes(registry: registry) { monitor.current != nil }
        web.paths = paths
        var page = StatusPage(status: { monitor.current })
        page.paths = paths
        page.addSection(StatusHistoryView(history: history?.summary).render)
        web.statusPage = page
        // Reloads (SIGHUP, POST /-/reload) swap probes and settings in the monitor.
        let reloader = options.file.map { file in
            ConfigReloader(
                path: file.file, flags: flags, environment: processEnvironment(), initial: options,
                registry: registry, logger: logger,
                autoReloadInterval: (try? ConfigWiring.autoReloadInterval(flags)) ?? nil, loadedDigest: fileDigest,
                runningUplinks: monitor.configuration.settings.uplinks
            ) { await monitor.reconfigure(probes: $0, settings: $1, runRound: $2) }
        }
        var reloadModules: (@Sendable (String) -> Result<Int, ConfigError>)?
        var reloadModulesByHTTP: (@Sendable () -> Result<Int, ConfigError>)?
        if let probeEndpoint, let modulesPath = flags.string("modules.file") {
            let reload: @Sendable (String) -> Result<Int, ConfigError> = { [logger] trigger in
                ModulesWiring.reload(probeEndpoint, path: modulesPath, logger: logger, trigger: trigger)
            }
            reloadModules = reload
            reloadModulesByHTTP = { reload("http") }
            web.add(probeEndpoint.route)
        }
        web.add(
            ConfigWiring.reloadRoute(
                reloader, enabled: flags.bool("web.enable-lifecycle"), modules: reloadModulesByHTTP))
        routes.set(web)
        logger.info(
            "probing", ("probes", specs.count), ("interval", DurationParser.format(settings.interval)),
            ("timeout", DurationParser.format(settings.timeout)), ("policy", settings.verdict.policy.description))
        let exposure = WebExposure(security?.current())
        let serving = WebService(server) { [logger, paths] addresses in
            for address in addresses {
                let prefix = paths.prefix.isEmpty ? "/" : paths.prefix
                if let url = paths.externalURL {
                    logger.info(
                        "listening", ("address", address.description), ("version", BuildInfo.version),
                        ("route_prefix", prefix), ("telemetry_path", paths.telemetry), ("external_url", url))
                } else {
                    logger.info(
                        "listening", ("address", address.description), ("version", BuildInfo.version),
                        ("route_prefix", prefix), ("telemetry_path", paths.telemetry))
                }
                if let warning = exposure.warning(address) {
                    logger.warn(
                        warning, ("address", address.description), ("tls", exposure.tls), ("auth", exposure.auth))
                }
            }
            // systemd's Type=notify: started once the endpoint answers. READY=1 may wait longer
            // for room than the other messages (a boot storm can fill systemd's queue for more
            // than 0.1 s, and a lost READY=1 gets the unit killed), on a thread of its own so
            // that the wait holds neither the server's start nor a SIGTERM.
            let environment = processEnvironment()
            let waited = tryStartThread(name: "notify-ready") {
                SystemdNotify.send("READY=1", environment: environment, patience: .seconds(5))
            }
            if waited != nil { SystemdNotify.send("READY=1", environment: environment) }
        }
        let passive =
            options.passive.mode == .off
            ? nil
            : PassiveWatch(
                config: options.passive, path: path.gate, logger: logger.with("component", "passive"),
                uplinks: { monitor.configuration.settings.uplinks }, recheck: { monitor.recheckNow() },
                publish: PassiveMetrics(registry: registry).publish,
                recheckGap: { monitor.configuration.settings.interval })
        if let passive { monitor.watch(passive.board) }
        // Start order: path monitor, history, scheduler, passive evidence, reloader, web server;
        // stopped in reverse.
        let services: [any Service] =
            [path] + (history.map { [$0] } ?? []) + [monitor] + (passive.map { [$0] } ?? [])
            + (reloader.map { [$0] } ?? []) + [serving]
        let onHangup: @Sendable () -> Void = { [logger, reloadModules] in
            _ = reloadModules?("SIGHUP")
            guard let reloader else {
                if reloadModules == nil { logger.info("SIGHUP received; nothing to reload without --config.file") }
                return
            }
            reloader.requestReload(trigger: "SIGHUP")
        }
        return .success(Exporter(logger: logger, services: services, onHangup: onHangup))
    }

    /// One writer per history directory. A directory that cannot be made is the history
    /// service's to report (the exporter runs on without it); a lock that cannot be taken fails closed.
    private func lockHistory() -> Result<Void, ExitStatus> {
        guard let dir = options.history?.directory, case .failure(let failure) = DirectoryLock.acquire(dir) else {
            return .success(())
        }
        switch failure {
        case .held(let pid):
            logger.error(
                "history directory \(dir) is in use by another exporter"
                    + (pid.map { " (pid \($0))" } ?? "") + "; give each exporter its own --history.dir", ("dir", dir))
        case .failed(let error):
            logger.error("cannot lock the history directory", ("dir", dir), ("err", "\(dir)/.lock: \(error)"))
        case .unusableDirectory: return .success(())
        }
        return .failure(ExitStatus(78))
    }
}

/// Turns SIGHUP into a reload, and ends at SIGTERM/SIGINT (which stops every service).
private struct SignalService: Service {
    let name = "signals"
    let watcher: SignalWatcher
    let logger: Logger
    let onHangup: @Sendable () -> Void

    func run() async {
        for await signal in watcher.signals {
            if signal == .hangup {
                onHangup()
                continue
            }
            // Armed first: the services get their grace periods (5 s each at most); past 30 s
            // something is stuck, even the log line or the notification below (#41).
            exitIfStillRunning(after: 30) { [logger] in logger.error("shutdown did not finish in 30 s; exiting") }
            logger.info("shutting down", ("signal", signal.description))
            // Non-blocking: a notify socket nobody reads costs at most its patience.
            SystemdNotify.send("STOPPING=1", environment: processEnvironment())
            return
        }
    }
}
