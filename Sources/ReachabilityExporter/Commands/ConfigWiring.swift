import ReachabilityVerdict

/// The exporter command's configuration-file hooks, kept out of `ExporterCommand` so that its
/// changes stay a handful of lines: the `--config.file` flag, reading the file at start-up
/// (exit 78 on error), combining it with the flags (`ExporterOptions`), and the reload route.
enum ConfigWiring {
    static let flag = FlagSpec(
        "config.file", .value(default: nil), placeholder: "PATH",
        help:
            "YAML configuration file (see docs/configuration.md); flags given on the command line override its global settings. Reloaded on SIGHUP and POST /-/reload."
    )

    /// The file named by `--config.file` with the SHA-256 of the bytes read (nil without the
    /// flag), or the exit status after printing the error.
    /// The daemon passes its `logger`: the error is then a log record (`level=ERROR`), as
    /// Prometheus logs a configuration it cannot load; `check` prints it plain.
    static func loadFile(_ flags: ParsedFlags, logger: Logger? = nil) -> Result<
        (config: ExporterConfig, digest: [UInt8])?, ExitStatus
    > {
        guard let path = flags.string("config.file") else { return .success(nil) }
        do throws(ConfigError) { return .success(try ConfigLoader.loadWithDigest(path: path)) } catch {
            startError("error loading the configuration file", error.description, file: path, logger: logger)
            return .failure(ExitStatus(78))
        }
    }

    /// A start-up error that is not the command line's: a log record with the daemon's
    /// logger, else `reachability_exporter: error: …` (the subcommands).
    static func startError(_ message: String, _ error: String, file: String?, logger: Logger?) {
        if let logger {
            if let file {
                logger.error(message, ("file", file), ("err", error))
            } else {
                logger.error(message, ("err", error))
            }
        } else {
            writeErr("reachability_exporter: error: \(error)\n")
        }
    }

    /// Flags and file (if any) combined, or the exit status (64 for a flag, 78 for the file)
    /// after printing why. With a file, logs what was loaded, with the uplinks the probes start
    /// on (`uplinks: auto` as `path` shows them now).
    static func setup(
        _ flags: ParsedFlags, file: ExporterConfig?, path: any PathGate, logger: Logger, daemon: Bool = false
    ) -> Result<ExporterOptions, ExitStatus> {
        do throws(ExporterOptions.Failure) {
            let setup = try ExporterOptions.resolve(
                flags: flags, file: file, environment: processEnvironment())
            if let file {
                let uplinks = setup.settings.adoptingRouteUplinks(path).uplinks
                if setup.settings.autoUplinks && uplinks.isEmpty {
                    logger.warn(ConfigReloader.noRouteUplinks, ("file", file.file))
                }
                if let warning = setup.uplinkSettingsWarning(adopted: uplinks) {
                    logger.warn(warning, ("file", file.file))
                }
                captivePortalWarnings(setup.settings.captivePortal, path: path, file: file.file, logger: logger)
                logger.info(
                    "configuration loaded", ("file", file.file), ("probes", setup.specs.count),
                    ("uplinks", uplinks.joined(separator: ",")))
            }
            return .success(setup)
        } catch {
            switch error {
            case .usage(let e):
                writeErr("reachability_exporter: error: \(e.message), try --help\n")
                return .failure(ExitStatus(64))
            case .config(let e):
                startError("error in the configuration", e.description, file: nil, logger: daemon ? logger : nil)
                return .failure(ExitStatus(78))
            }
        }
    }

    static let autoReloadFlag = FlagSpec(
        "config.auto-reload-interval", .value(default: "0s"), placeholder: "DURATION",
        help:
            "Re-read --config.file by itself when its content changes, checking this often (1s to 10d; as Prometheus's flag of that name); 0s: only on SIGHUP and POST /-/reload."
    )

    /// `--config.auto-reload-interval`: nil when off.
    static func autoReloadInterval(_ flags: ParsedFlags) throws(UsageError) -> Duration? {
        guard let d = try flags.duration("config.auto-reload-interval"), d > .zero else { return nil }
        guard d >= .seconds(1), d <= .seconds(10 * 86_400) else {
            throw UsageError(
                "invalid value \"\(DurationParser.format(d))\" for flag '--config.auto-reload-interval': expected 0s, or 1s to 10d"
            )
        }
        guard flags.string("config.file") != nil else {
            throw UsageError("flag '--config.auto-reload-interval' needs --config.file")
        }
        return d
    }

    static let lifecycleFlag = FlagSpec(
        "web.enable-lifecycle", .bool(default: false),
        help:
            "Serve POST /-/reload (off by default, as in Prometheus): same-origin requests only, authenticated when --web.config.file sets users."
    )

    /// `POST /-/reload`: 403 unless `enabled` (`--web.enable-lifecycle`) and for a request a
    /// browser sent from another site; 400 without `--config.file` (there is nothing to reload).
    /// With `--modules.file`, the module file is re-read too (after the configuration file, when
    /// both are given; a failure of either is the answer's `500`).
    static func reloadRoute(
        _ reloader: ConfigReloader?, enabled: Bool,
        modules: (@Sendable () -> Result<Int, ConfigError>)? = nil
    ) -> WebRoutes.Route {
        { request in
            guard request.path == "/-/reload" else { return nil }
            guard request.method == "POST" else { return WebRoutes.methodNotAllowed("POST") }
            guard enabled else {
                return HTTPResponse(status: 403, text: "Lifecycle API is not enabled (--web.enable-lifecycle).\n")
            }
            if let why = crossSiteRefusal(request) { return HTTPResponse(status: 403, text: why + "\n") }
            guard reloader != nil || modules != nil else {
                return HTTPResponse(
                    status: 400,
                    text: "nothing to reload: the exporter was started without --config.file and --modules.file\n")
            }
            var answer: HTTPResponse?
            if let reloader {
                let r = await reloader.route(request)
                guard let r, r.status == 200 else { return r }
                answer = r
            }
            guard let modules else { return answer }
            switch modules() {
            case .success(let n):
                let before = answer.map { String(decoding: $0.body, as: UTF8.self) } ?? ""
                return HTTPResponse(status: 200, text: before + "modules reloaded: \(n) modules\n")
            case .failure(let error):
                return HTTPResponse(status: 500, text: "modules reload failed; keeping the running modules: \(error)\n")
            }
        }
    }

    /// Why a state-changing request looks sent by a browser on behalf of another site, or nil.
    /// Browsers mark every cross-origin POST with `Origin` (and `Sec-Fetch-Site`); curl, Prometheus
    /// and scripts send neither, so they pass. The origin must name the host the request was sent to.
    static func crossSiteRefusal(_ request: HTTPRequest) -> String? {
        if let site = request.header("sec-fetch-site")?.lowercased(), site != "same-origin", site != "none" {
            return "cross-site request refused (Sec-Fetch-Site: \(site))"
        }
        guard let origin = request.header("origin") else { return nil }
        let host = request.header("host")?.lowercased() ?? ""
        let originHost = origin.lowercased().split(separator: "://", maxSplits: 1).dropFirst().first.map(String.init)
        guard let originHost, !host.isEmpty, originHost == host else {
            return "cross-site request refused (Origin does not match Host)"
        }
        return nil
    }
}

/// A process exit status carried through a `Result`.
struct ExitStatus: Error {
    let code: Int32
    init(_ code: Int32) { self.code = code }
}

extension ConfigWiring {
    /// An `api` entry in `captive_portal:` for an interface this host does not have (yet): said
    /// at load, not refused (the interface may appear later).
    static func captivePortalWarnings(
        _ settings: CaptivePortalSettings, path: any PathGate, file: String, logger: Logger
    ) {
        guard settings.enabled else { return }
        let known = Set(path.interfaceNames.byIndex.values)
        for name in settings.api.keys.sorted() where !known.isEmpty && !known.contains(name) {
            logger.warn(
                "captive_portal.api names an interface this host does not have (its API is read once it appears)",
                ("interface", name), ("file", file))
        }
    }
}
