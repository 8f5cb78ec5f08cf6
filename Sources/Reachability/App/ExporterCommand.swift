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
    ] + ProbeFlags.specs + commonFlags

    static var usage: String {
        """
        usage: reachability_exporter [<flags>]
               reachability_exporter check [<probe flags>] [--output=text|json]

        Tells whether this host really reaches the internet, and exports it to Prometheus.
        Without probe flags it probes a built-in set of public endpoints (see the README).

        Flags:
        \(FlagParser(serveFlags).helpText())

        """
    }

    /// Runs the command and returns the process exit status.
    public static func main(_ args: [String]) async -> Int32 {
        if args.first == "check" { return await CheckCommand.main(Array(args.dropFirst())) }
        let flags: ParsedFlags
        let logger: Logger
        let listen: ListenAddress
        var serverOptions = HTTPServer.Options()
        let specs: [ProbeSpec]
        let settings: MonitorSettings
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
            (specs, settings) = try ProbeFlags.build(flags, environment: processEnvironment())
        } catch {
            writeErr("reachability_exporter: error: \(error.message), try --help\n")
            return 64
        }

        if let problem = ProbeFlags.checkICMPPermission(specs) {
            logger.error("ICMP probes cannot run", ("err", problem))
            return 1
        }
        let registry = MetricsRegistry()
        ProcessMetrics.register(in: registry)
        registry.gauge("reachability_exporter_build_info",
                       help: "A metric with a constant '1' value labeled by version, revision and swiftversion from which reachability_exporter was built.",
                       labels: ["version", "revision", "swiftversion"])
            .labels(BuildInfo.version, BuildInfo.revision, BuildInfo.swiftVersion).set(1)

        let (pathGate, pathMonitor) = ProbeFlags.startPathGate(flags, logger: logger, registry: registry)
        defer { pathMonitor?.stop() }
        let recorder = MetricsRecorder(registry: registry, probes: specs, uplinks: settings.uplinks)
        let monitor = ReachabilityMonitor(probes: specs, settings: settings, path: pathGate, observers: [recorder, RoundLogger(logger: logger)])
        var routes = WebRoutes(registry: registry) { monitor.current != nil }
        routes.statusPage = StatusPage(status: { monitor.current })
        let server: HTTPServer
        do {
            server = try HTTPServer(listen: listen, options: serverOptions, logger: logger.with("component", "web"), registry: registry) { [routes] in routes.handle($0) }
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

        for await sig in signals.signals {
            if sig == SIGHUP {
                logger.info("SIGHUP received; nothing to reload without --config.file")
                continue
            }
            logger.info("shutting down", ("signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"))
            break
        }
        monitorTask.cancel()
        server.shutdown(grace: .seconds(2))
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
