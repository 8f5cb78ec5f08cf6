/// The exporter command's configuration-file hooks, kept out of `ExporterCommand` so that its
/// changes stay a handful of lines: the `--config.file` flag, reading the file at start-up
/// (exit 78 on error), combining it with the flags (`ExporterOptions`), and the reload route.
enum ConfigWiring {
    static let flag = FlagSpec(
        "config.file", .value(default: nil), placeholder: "PATH",
        help:
            "YAML configuration file (see docs/configuration.md); flags given on the command line override its global settings. Reloaded on SIGHUP and POST /-/reload."
    )

    /// The file named by `--config.file` (nil without the flag), or the exit status after
    /// printing the error.
    static func loadFile(_ flags: ParsedFlags) -> Result<ExporterConfig?, ExitStatus> {
        guard let path = flags.string("config.file") else { return .success(nil) }
        do throws(ConfigError) { return .success(try ConfigLoader.load(path: path)) } catch {
            writeErr("reachability_exporter: error: \(error)\n")
            return .failure(ExitStatus(78))
        }
    }

    /// The flags `ProbeFlags.startPathGate` reads, with `path.monitor` decided by the
    /// precedence (flag given, else the file's `global.path_monitor`, else on).
    static func pathFlags(_ flags: ParsedFlags, file: ExporterConfig?) -> ParsedFlags {
        var out = flags
        out.bools["path.monitor"] = ExporterOptions.pathMonitorEnabled(flags, file: file)
        return out
    }

    /// Flags and file (if any) combined, or the exit status (64 for a flag, 78 for the file)
    /// after printing why.
    static func setup(_ flags: ParsedFlags, file: ExporterConfig?, gate: any PathGate, logger: Logger) -> Result<
        ExporterOptions, ExitStatus
    > {
        do throws(ExporterOptions.Failure) {
            let setup = try ExporterOptions.resolve(
                flags: flags, file: file, environment: processEnvironment(),
                defaultRouteInterfaces: gate.defaultRouteInterfaces)
            if let file {
                for note in setup.notes { logger.warn(note, ("file", file.file)) }
                logger.info(
                    "configuration loaded", ("file", file.file), ("probes", String(setup.specs.count)),
                    ("uplinks", setup.settings.uplinks.joined(separator: ",")))
            }
            return .success(setup)
        } catch {
            switch error {
            case .usage(let e):
                writeErr("reachability_exporter: error: \(e.message), try --help\n")
                return .failure(ExitStatus(64))
            case .config(let e):
                writeErr("reachability_exporter: error: \(e)\n")
                return .failure(ExitStatus(78))
            }
        }
    }

    /// `POST /-/reload`; without `--config.file` it answers 400 (there is nothing to reload).
    static func reloadRoute(_ reloader: ConfigReloader?) -> WebRoutes.Route {
        { request in
            if let reloader { return reloader.route(request) }
            guard request.path == "/-/reload" else { return nil }
            guard request.method == "POST" else { return WebRoutes.methodNotAllowed("POST") }
            return HTTPResponse(
                status: 400, text: "nothing to reload: the exporter was started without --config.file\n")
        }
    }
}

/// A process exit status carried through a `Result`.
struct ExitStatus: Error {
    let code: Int32
    init(_ code: Int32) { self.code = code }
}
