import ReachabilityVerdict

/// `/probe`'s flags and how the exporter builds and reloads its endpoint: `--modules.file` (a
/// blackbox_exporter module file), `--modules.timeout-offset`, `--modules.max-concurrent`,
/// `--modules.allow-target`. Without `--modules.file` there is no `/probe` (404).
enum ModulesWiring {
    static let flags: [FlagSpec] = [
        FlagSpec(
            "modules.file", .value(default: nil), placeholder: "PATH",
            help:
                "A blackbox_exporter module file (modules: with prober http, tcp, icmp or dns) for /probe?target=…&module=…; re-read on SIGHUP and POST /-/reload."
        ),
        FlagSpec(
            "modules.timeout-offset", .value(default: "500ms"), placeholder: "DURATION",
            help:
                "Subtracted from the scrape's timeout (X-Prometheus-Scrape-Timeout-Seconds) for a /probe (blackbox's --timeout-offset)."
        ),
        FlagSpec(
            "modules.max-concurrent", .value(default: "32"), placeholder: "N",
            help:
                "Probes /probe runs at once for one client (an address; IPv6 by its /64), and 8 times that for all clients; a request beyond gets 503."
        ),
        FlagSpec(
            "modules.allow-target", .repeated, placeholder: "BLOCK|NAME",
            help:
                "Only targets whose name is listed (www.example.com, *.example.com) or whose address is in a listed block (192.0.2.0/24) may be probed through /probe; none listed: any."
        ),
    ]

    /// The endpoint's options, or the flag that is wrong.
    static func options(_ flags: ParsedFlags) throws(UsageError) -> ProbeEndpoint.Options? {
        guard flags.string("modules.file") != nil else {
            for name in ["modules.allow-target"] where !flags.strings(name).isEmpty {
                throw UsageError("flag '--\(name)' needs --modules.file")
            }
            return nil
        }
        var o = ProbeEndpoint.Options()
        if let d = try flags.duration("modules.timeout-offset") {
            guard d >= .zero, d <= .seconds(60) else {
                throw UsageError("invalid value for flag '--modules.timeout-offset': must be from 0s to 1m")
            }
            o.timeoutOffset = d
        }
        o.maxConcurrent = try flags.int("modules.max-concurrent", range: 1...10_000) ?? o.maxConcurrent
        do throws(TargetAllowList.Invalid) {
            o.allowed = try TargetAllowList(flags.strings("modules.allow-target"))
        } catch {
            throw UsageError(error.message)
        }
        return o
    }

    /// Loads the module file for the endpoint; an error names the file, line and key. Each
    /// refused module is logged.
    static func endpoint(_ flags: ParsedFlags, options: ProbeEndpoint.Options, logger: Logger) throws(ConfigError)
        -> ProbeEndpoint
    {
        let file = try BlackboxModuleFile.load(path: flags.string("modules.file")!)
        logRefused(file, logger: logger)
        return ProbeEndpoint(file, options: options)
    }

    static func logRefused(_ file: BlackboxModuleFile, logger: Logger) {
        for (name, error) in file.refused.sorted(by: { $0.key < $1.key }) {
            logger.error("module refused: /probe answers 400 for it", ("module", name), ("err", error.description))
        }
    }

    /// Re-reads the module file into the endpoint, or keeps the running modules and says why.
    @discardableResult
    static func reload(_ endpoint: ProbeEndpoint, path: String, logger: Logger, trigger: String) -> Result<
        Int, ConfigError
    > {
        do throws(ConfigError) {
            let file = try BlackboxModuleFile.load(path: path)
            endpoint.replace(file)
            logRefused(file, logger: logger)
            logger.info(
                "modules reloaded", ("trigger", trigger), ("file", path), ("modules", file.modules.count),
                ("refused", file.refused.count))
            return .success(file.modules.count)
        } catch {
            logger.error(
                "modules reload failed; keeping the running modules", ("trigger", trigger), ("err", error.description))
            return .failure(error)
        }
    }
}
