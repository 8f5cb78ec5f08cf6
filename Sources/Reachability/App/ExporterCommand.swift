import Glibc

/// The `reachability_exporter` command line: parses flags, builds the services, runs them until
/// SIGTERM/SIGINT, and maps errors to exit codes (64 usage, 78 configuration, 1 runtime).
public enum ExporterCommand {
    public static let defaultListenAddress = ":10361"

    static let commonFlags: [FlagSpec] = [
        FlagSpec("log.level", .value(default: "info"), placeholder: "LEVEL", help: "Only log messages with the given severity or above: debug, info, warn, error."),
        FlagSpec("log.format", .value(default: "logfmt"), placeholder: "FORMAT", help: "Output format of log messages: logfmt, json."),
        FlagSpec("help", .bool(default: false), help: "Show this help and exit."),
        FlagSpec("version", .bool(default: false), help: "Show version information and exit."),
    ]

    static let serveFlags: [FlagSpec] = [
        FlagSpec("web.listen-address", .value(default: defaultListenAddress), placeholder: "ADDRESS", help: "Address to serve metrics on: [host]:port; :port means every address."),
        FlagSpec("web.max-connections", .value(default: "64"), placeholder: "N", help: "Concurrent HTTP connections served; more get 503."),
    ] + [ConfigWiring.flag] + ProbeFlags.specs + HistoryFlags.specs + commonFlags

    static var usage: String {
        """
        usage: reachability_exporter [<flags>]
               reachability_exporter check [<probe flags>] [--output=text|json]
               reachability_exporter check-config FILE
               reachability_exporter history --history.dir=DIR [--since=DURATION] [--output=table|json|csv]

        Tells whether this host really reaches the internet, and exports it to Prometheus.
        Without probe flags it probes a built-in set of public endpoints (see the README).

        Flags:
        \(FlagParser(serveFlags).helpText())

        """
    }

    /// Runs the command and returns the process exit status.
    public static func main(_ args: [String]) async -> Int32 {
        if args.first == "check" { return await CheckCommand.main(Array(args.dropFirst())) }
        if args.first == "check-config" { return CheckConfigCommand.main(Array(args.dropFirst())) }
        if args.first == "history" { return HistoryCommand.main(Array(args.dropFirst())) }
        let flags: ParsedFlags
        let logger: Logger
        let listen: ListenAddress
        var serverOptions = HTTPServer.Options()
        var specs: [ProbeSpec] = []
        var settings = MonitorSettings()
        var historyConfig: HistoryConfig?
        do throws(UsageError) {
            flags = try FlagParser(serveFlags).parse(args)
            if flags.bool("help") { writeOut(usage); return 0 }
            if flags.bool("version") { writeOut(versionText); return 0 }
            logger = Logger(level: try flags.choice("log.level", as: LogLevel.self) ?? .info,
                            format: try flags.choice("log.format", as: LogFormat.self) ?? .logfmt)
            do { listen = try ListenAddress.parse(flags.string("web.listen-address") ?? defaultListenAddress) } catch {
                throw UsageError("invalid value for flag '--web.listen-address': \(error.description)")
            }
            serverOptions.maxConnections = try flags.int("web.max-connections", range: 1...100_000) ?? 64
            // config: with --config.file, probes and settings come from ConfigWiring.setup below.
            if flags.string("config.file") == nil { (specs, settings) = try ProbeFlags.build(flags, environment: processEnvironment()) }
            historyConfig = try HistoryFlags.config(flags)
        } catch {
            writeErr("reachability_exporter: error: \(error.message), try --help\n")
            return 64
        }

        let registry = MetricsRegistry()
        ProcessMetrics.register(in: registry)
        registry.gauge("reachability_exporter_build_info",
                       help: "A metric with a constant '1' value labeled by version, revision and swiftversion from which reachability_exporter was built.",
                       labels: ["version", "revision", "swiftversion"])
            .labels(BuildInfo.version, BuildInfo.revision, BuildInfo.swiftVersion).set(1)

        // config: the file is read before the path monitor starts (global.path_monitor, uplinks: auto).
        let file: ExporterConfig?
        switch ConfigWiring.loadFile(flags) {
        case .success(let f): file = f
        case .failure(let exit): return exit.code
        }
        let (pathGate, pathMonitor) = ProbeFlags.startPathGate(ConfigWiring.pathFlags(flags, file: file), logger: logger, registry: registry)
        defer { pathMonitor?.stop() }
        var setup: ExporterSetup?
        if let file {
            switch ConfigWiring.setup(flags, file: file, gate: pathGate, logger: logger) {
            case .success(let s): (setup, specs, settings) = (s, s.specs, s.settings)
            case .failure(let exit): return exit.code
            }
        }
        if let problem = ProbeFlags.checkICMPPermission(specs) {
            logger.error("ICMP probes cannot run", ("err", problem))
            return 1
        }
        if let warning = ProbeSpec.evidenceWarning(specs, policy: settings.verdict.policy) { logger.warn(warning) }
        let recorder = MetricsRecorder(registry: registry, probes: specs, uplinks: settings.uplinks)
        // History (issue 6): --history.* flags, else the file's `history:` section. Read back
        // before the first round, written by its own thread.
        if historyConfig == nil, let section = setup?.file?.history, let dir = section.dir {
            var c = HistoryConfig(directory: dir)
            if let size = section.maxFileSize { c.maxFileSize = Int(size) }
            if let retention = section.retention { c.retention = retention }
            historyConfig = c
        }
        let history = historyConfig.map { HistoryService.start($0, interval: settings.interval, registry: registry, logger: logger.with("component", "history")) }
        let monitor = ReachabilityMonitor(probes: specs, settings: settings, path: pathGate,
                                          observers: [recorder, RoundLogger(logger: logger)] + (history?.observers ?? []))
        history?.restore(into: monitor, logger: logger)
        var routes = WebRoutes(registry: registry) { monitor.current != nil }
        var page = StatusPage(status: { monitor.current })
        page.addSection(StatusHistoryView(history: history?.summary).render)  // issue 10: history pictures
        routes.statusPage = page
        // config: reloads (SIGHUP, POST /-/reload) swap probes and settings in the monitor.
        let reloader = setup.map { s in
            ConfigReloader(path: s.file?.file ?? "", flags: flags, environment: processEnvironment(), gate: pathGate, initial: s,
                           registry: registry, logger: logger) { await monitor.reconfigure(probes: $0, settings: $1) }
        }
        routes.add(ConfigWiring.reloadRoute(reloader))
        let webRoutes = routes
        let server: HTTPServer
        do {
            server = try HTTPServer(listen: listen, options: serverOptions, logger: logger.with("component", "web"), registry: registry) { webRoutes.handle($0) }
        } catch {
            logger.error("cannot listen", ("address", listen.description), ("err", error.description))
            return 1
        }
        let signals = SignalWatcher()
        server.start()
        logger.info("listening", ("address", server.boundAddress.description), ("version", BuildInfo.version))
        logger.info("probing", ("probes", String(specs.count)), ("interval", DurationParser.format(settings.interval)),
                    ("timeout", DurationParser.format(settings.timeout)), ("policy", settings.verdict.policy.description))
        let monitorTask = Task { await monitor.run() }
        let uplinkTask = reloader.map { r in Task { await r.watchUplinks() } }

        for await sig in signals.signals {
            if sig == SIGHUP {
                if let reloader {
                    Task { await reloader.reload(trigger: "SIGHUP") }
                } else {
                    logger.info("SIGHUP received; nothing to reload without --config.file")
                }
                continue
            }
            logger.info("shutting down", ("signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"))
            break
        }
        monitorTask.cancel()
        uplinkTask?.cancel()
        server.shutdown(grace: .seconds(2))
        history?.stop()
        logger.info("stopped")
        return 0
    }

    static var versionText: String {
        "reachability_exporter, version \(BuildInfo.version) (revision: \(BuildInfo.revision))\n  swift version: \(BuildInfo.swiftVersion)\n  platform: linux/x86_64\n"
    }
}

/// Writes to stdout with one `write` (Swift 6 cannot touch the `stdout` global).
func writeOut(_ s: String) { writeFD(1, s) }
/// Writes to stderr with one `write`.
func writeErr(_ s: String) { writeFD(2, s) }

private func writeFD(_ fd: Int32, _ s: String) {
    var bytes = Array(s.utf8)[...]
    while !bytes.isEmpty {
        let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        if n <= 0 { if n < 0 && errno == EINTR { continue }; return }
        bytes = bytes.dropFirst(n)
    }
}
