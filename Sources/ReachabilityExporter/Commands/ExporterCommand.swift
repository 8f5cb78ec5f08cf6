import ReachabilityVerdict

/// The `reachability_exporter` command line: parses flags, builds the services, runs them until
/// SIGTERM/SIGINT, and maps errors to exit codes (64 usage, 78 configuration, 1 runtime).
package enum ExporterCommand {
    package static let defaultListenAddress = ":10361"

    static let commonFlags: [FlagSpec] = [
        FlagSpec(
            "log.level", .value(default: "info"), placeholder: "LEVEL",
            help: "Only log messages with the given severity or above: debug, info, warn, error."),
        FlagSpec(
            "log.format", .value(default: "logfmt"), placeholder: "FORMAT",
            help: "Output format of log messages: logfmt, json."),
        FlagSpec("help", .bool(default: false), help: "Show this help and exit."),
        FlagSpec("version", .bool(default: false), help: "Show version information and exit."),
    ]

    static let serveFlags: [FlagSpec] =
        [
            FlagSpec(
                "web.listen-address", .repeated, placeholder: "ADDRESS",
                help:
                    "Address to serve metrics on: [host]:port; :port means every address; default \(defaultListenAddress)."
            ),
            FlagSpec(
                "web.systemd-socket", .bool(default: false),
                help: "Serve on the sockets systemd passes (socket activation) instead of --web.listen-address."),
            FlagSpec(
                "web.config.file", .value(default: nil), placeholder: "PATH",
                help:
                    "Web configuration in the exporter-toolkit format (TLS, client certificates, basic auth, headers); re-read when it changes."
            ),
            FlagSpec(
                "web.route-prefix", .value(default: nil), placeholder: "PATH",
                help:
                    "Prefix for every HTTP route (/rx serves /rx/metrics, /rx/-/healthy and the status page at /rx/); defaults to --web.external-url's path."
            ),
            FlagSpec(
                "web.external-url", .value(default: nil), placeholder: "URL",
                help:
                    "The URL users reach the exporter at, behind a reverse proxy (https://proxy.example/rx/); its path is the default route prefix."
            ),
            FlagSpec(
                "web.telemetry-path", .value(default: "/metrics"), placeholder: "PATH",
                help: "Path under the route prefix at which to expose metrics."),
            FlagSpec(
                "web.max-connections", .value(default: String(HTTPServer.Options().maxConnections)), placeholder: "N",
                help:
                    "HTTP connections open at once; at the limit the oldest one not being answered gives way, and 503 only when all are."
            ),
            FlagSpec(
                "web.max-connections-per-ip", .value(default: String(HTTPServer.Options().maxConnectionsPerIP)),
                placeholder: "N",
                help: "HTTP connections open at once from one IP address (the same rule at the limit)."),
            FlagSpec(
                "metrics.histograms", .value(default: "both"), placeholder: "MODE",
                help:
                    "Histogram forms to keep and serve: classic (the _bucket series), native (exponential buckets, served to protobuf scrapes), both."
            ),
        ] + [ConfigWiring.flag, ConfigWiring.autoReloadFlag, ConfigWiring.lifecycleFlag] + ModulesWiring.flags
        + ProbeFlags.specs
        + HistoryFlags.specs + PassiveFlags.specs + commonFlags

    static var usage: String {
        """
        usage: reachability_exporter [<flags>]
               reachability_exporter check [<probe flags>] [--output=text|json]
               reachability_exporter check-config FILE
               reachability_exporter history --history.dir=DIR [--since=DURATION] [--output=table|json|csv]
               reachability_exporter metrics [--output=table|json]

        Tells whether this host really reaches the internet, and exports it to Prometheus.
        Without probe flags it probes a built-in set of public endpoints. Every flag: man
        reachability_exporter, and docs/flags.md (in the tarball beside the binary; from the
        .deb, /usr/share/doc/reachability-exporter/docs/flags.md.gz).

        Flags:
        \(FlagParser(serveFlags).helpText())

        """
    }

    /// Runs the command and returns the process exit status.
    package static func main(_ args: [String]) async -> Int32 {
        ignoreBrokenPipes()
        switch args.first {
        case "check": return await CheckCommand.main(Array(args.dropFirst()))
        case "check-config": return CheckConfigCommand.main(Array(args.dropFirst()))
        case "history": return HistoryCommand.main(Array(args.dropFirst()))
        case "metrics": return MetricsCommand.main(Array(args.dropFirst()))
        default: break
        }
        let flags: ParsedFlags
        do throws(UsageError) {
            flags = try FlagParser(serveFlags).parse(args)
        } catch {
            writeErr("reachability_exporter: error: \(error.message), try --help\n")
            return 64
        }
        if flags.bool("help") {
            writeOut(usage)
            return 0
        }
        if flags.bool("version") {
            writeOut(BuildInfo.versionText)
            return 0
        }
        switch Exporter.assemble(flags) {
        case .failure(let exit): return exit.code
        case .success(let exporter): return await exporter.run()
        }
    }
}
