import ReachabilityVerdict

/// What the exporter and `check` run with — probes, scheduler and verdict settings, constant
/// probe labels, history — resolved once from the command line, the file (`--config.file`) and
/// the environment by `resolve`; the commands read this value and nothing else. The one place
/// each setting is checked. The precedence (docs/configuration.md):
///
/// 1. A flag given on the command line wins over the file's `global` setting (and
///    `--probe.uplink` over the file's `uplinks`); a flag's default never does.
/// 2. The file's setting wins over the flag's default.
/// 3. Probes: the file's probes and the probe flags' probes run together (file first); a name
///    in both is an error. Probe flags are read once at start-up; a reload re-reads the file only.
/// 4. Neither gives a probe: the built-in public defaults, unless the environment forbids them.
struct ExporterOptions: Sendable {
    var specs: [ProbeSpec]
    var settings: MonitorSettings
    /// The file as read (nil without `--config.file`).
    var file: ExporterConfig?
    /// `--history.*` flags, else the file's `history:` section; nil: no history.
    var history: HistoryConfig?
    /// `--passive.*` flags.
    var passive = PassiveConfig()
    /// Whether the probes are the built-in public defaults (neither flags nor the file gave one).
    var usesBuiltInDefaults = false

    /// Why a setup is refused: a bad flag (exit 64) or a bad file (exit 78).
    enum Failure: Error {
        case usage(UsageError)
        case config(ConfigError)
    }

    /// Whether to run the netlink path monitor: the flag if given, else the file, else on.
    static func pathMonitorEnabled(_ flags: ParsedFlags, file: ExporterConfig?) -> Bool {
        flags.isSet("path.monitor")
            ? flags.bool("path.monitor") : (file?.global.pathMonitor ?? flags.bool("path.monitor"))
    }

    /// Combines flags and file. Needs no path: `uplinks: auto` is the monitor's to resolve
    /// (`MonitorSettings.autoUplinks`). `borrowed`: the capabilities the process only borrows
    /// from its file; with any, a mark is refused (`borrowedMarkRefusal`).
    static func resolve(
        flags: ParsedFlags, file: ExporterConfig?, environment: [String: String],
        borrowed: BorrowedCapabilities = .current
    ) throws(Failure) -> ExporterOptions {
        if let file, let refusal = borrowedMarkRefusal(file, borrowed: borrowed) { throw .config(refusal) }
        let settings: MonitorSettings
        let history: HistoryConfig?
        let passive: PassiveConfig
        do throws(UsageError) {
            settings = try combinedSettings(flags, file: file)
            history = try HistoryFlags.config(flags) ?? file?.history.flatMap(Self.history(from:))
            passive = try PassiveFlags.config(flags)
        } catch {
            throw .usage(error)
        }
        try checkTimes(settings, flags: flags, file: file)
        var specs: [ProbeSpec] = []
        for d in file?.probes ?? [] {
            do throws(ConfigError) { specs.append(try ConfigProbeBuilder.spec(d, file: file?.file ?? "")) } catch {
                throw .config(error)
            }
        }
        // The probe flags' own checks (and their fallback to the defaults) are ProbeFlags'.
        let anyProbeFlag = ProbeFlags.probeFlagNames.contains { flags.isSet($0) }
        if anyProbeFlag || specs.isEmpty {
            let flagSpecs: [ProbeSpec]
            do throws(UsageError) { flagSpecs = try ProbeFlags.probes(flags, environment: environment) } catch {
                throw .usage(error)
            }
            for spec in flagSpecs {
                if let d = file?.probes.first(where: { $0.name == spec.name }) {
                    throw .config(
                        ConfigError(
                            file: file?.file ?? "", mark: d.marks["name"] ?? d.marks["target"] ?? d.mark,
                            path: "\(d.path).name",
                            expected: "a name no probe flag gives", found: d.name.debugDescription,
                            hint:
                                "a --probe.\(spec.type == .https ? "http" : spec.type.rawValue) flag names a probe the same"
                        ))
                }
                specs.append(spec)
            }
        }
        // An uplink's probe set names probes that exist (file or flags).
        for (uplink, names) in (file?.uplinkProbes ?? [:]).sorted(by: { $0.key < $1.key }) {
            for (i, name) in names.enumerated() where !specs.contains(where: { $0.name == name }) {
                throw .config(
                    ConfigError(
                        file: file?.file ?? "", mark: file?.uplinkProbeMarks[uplink]?[i],
                        path: "uplink_settings.\(uplink).probes[\(i)]", expected: "the name of a probe",
                        found: name.debugDescription,
                        hint: "probes are named by name:, or by their target when unnamed (see check-config)"))
            }
        }
        if let file { try checkUplinkSettings(file, settings: settings) }
        return ExporterOptions(
            specs: specs, settings: settings, file: file, history: history, passive: passive,
            usesBuiltInDefaults: !anyProbeFlag && (file?.probes ?? []).isEmpty)
    }

    /// A firewall mark steers traffic past policy routing and firewall rules (a VPN's kill
    /// switch, wg-quick's `not fwmark` rule, mwan3), and CAP_NET_RAW allows setting one (Linux
    /// 5.17). A user running the binary through its file capability borrows CAP_NET_RAW for
    /// ICMP sockets only, so their configuration may not ask for a mark: refused at load
    /// rather than silently not marked. Source addresses and device binding stay allowed: the
    /// kernel lets any user do those on a socket of their own (SO_BINDTODEVICE since 5.7).
    static func borrowedMarkRefusal(_ file: ExporterConfig, borrowed: BorrowedCapabilities) -> ConfigError? {
        guard !borrowed.isEmpty else { return nil }
        let marked = file.uplinkRouting.sorted { $0.key < $1.key }.first { $0.value.mark != nil }
        guard let (uplink, routing) = marked, let mark = routing.mark else { return nil }
        return ConfigError(
            file: file.file, mark: nil, path: "uplink_settings.\(uplink).mark",
            expected:
                "no firewall mark when run by a user other than root through the file capability "
                + "(cap_net_raw is lent for ICMP sockets only)",
            found: "0x\(String(mark, radix: 16))",
            hint:
                "a mark can steer traffic past VPN kill switches and policy routing; set marks as root or in a "
                + "service given the capability (AmbientCapabilities=CAP_NET_RAW), or remove the key")
    }

    /// Every `uplink_settings` key names an uplink when the uplinks are a list (the file's
    /// `uplinks:`, `--probe.uplink`, or none): a typo would apply its budget, mark or interval
    /// to nothing. Under `uplinks: auto` they are found at run time: see `uplinkSettingsWarning`.
    private static func checkUplinkSettings(_ file: ExporterConfig, settings: MonitorSettings) throws(Failure) {
        guard !settings.autoUplinks else { return }
        for (name, mark) in file.uplinkSettingMarks.sorted(by: { $0.key < $1.key })
        where !settings.uplinks.contains(name) {
            throw .config(
                ConfigError(
                    file: file.file, mark: mark, path: KeyPath.child("uplink_settings", name),
                    expected: "an uplink (uplinks: \(uplinkList(settings.uplinks)))",
                    found: "\(name.debugDescription), not an uplink",
                    hint: "its settings would apply to nothing; list it in uplinks: or fix the name"))
        }
    }

    /// Under `uplinks: auto`, the `uplink_settings` keys that name no uplink holding a default
    /// route now (`adopted`): a warning, nil when all do. Logged at load and at every reload.
    package func uplinkSettingsWarning(adopted: [String]) -> String? {
        guard settings.autoUplinks, let file else { return nil }
        let strays = file.uplinkSettingMarks.keys.filter { !adopted.contains($0) }.sorted()
        guard !strays.isEmpty else { return nil }
        return strays.map { "uplink_settings.\($0)" }.joined(separator: ", ")
            + ": not an uplink now (uplinks: auto, now \(Self.uplinkList(adopted)));"
            + " its settings apply only once it holds a default route"
    }

    private static func uplinkList(_ names: [String]) -> String {
        names.isEmpty ? "none" : names.joined(separator: ", ")
    }

    /// The file's `history:` section as settings (nil without a `dir`).
    private static func history(from section: HistorySection) -> HistoryConfig? {
        guard let dir = section.dir else { return nil }
        var c = HistoryConfig(directory: dir)
        if let size = section.maxFileSize { c.maxFileSize = Int(size) }
        if let retention = section.retention { c.retention = retention }
        if let size = section.maxTotalSize { c.maxTotalSize = Int(size) }
        return c
    }

    private static func combinedSettings(_ flags: ParsedFlags, file: ExporterConfig?) throws(UsageError)
        -> MonitorSettings
    {
        let g = file?.global ?? GlobalConfig()
        func given(_ name: String) -> Bool { flags.isSet(name) || file == nil }
        func duration(_ name: String, _ fromFile: Duration?, _ fallback: Duration) throws(UsageError) -> Duration {
            if !given(name), let v = fromFile { return v }
            return try flags.duration(name) ?? fallback
        }
        func count(_ name: String, _ fromFile: Int?, _ fallback: Int) throws(UsageError) -> Int {
            if !given(name), let v = fromFile { return v }
            return try flags.int(name, range: 1...1000) ?? fallback
        }
        var s = MonitorSettings()
        s.interval = try duration("probe.interval", g.interval, s.interval)
        s.timeout = try duration("probe.timeout", g.timeout, s.timeout)
        var policy = VerdictSettings().policy
        if !given("probe.mode"), let p = g.policy {
            policy = p
        } else {
            let text = flags.string("probe.mode") ?? VerdictSettings().policy.description
            guard let p = VerdictPolicy.parse(text) else {
                throw UsageError(
                    "invalid value \(text.debugDescription) for flag '--probe.mode': expected parallel, http, icmp, quorum, quorum:N or quorum:N%"
                )
            }
            policy = p
        }
        let trustLocal =
            !given("probe.trust-local-targets") && g.trustLocalTargets != nil
            ? g.trustLocalTargets! : flags.bool("probe.trust-local-targets")
        s.verdict = VerdictSettings(
            policy: policy, failAfter: try count("probe.fail-after", g.failAfter, VerdictSettings.defaultFailAfter),
            recoverAfter: try count("probe.recover-after", g.recoverAfter, VerdictSettings.defaultRecoverAfter),
            trustLocalTargets: trustLocal)
        s.fastRecheck = try duration("probe.fast-recheck", g.fastRecheck, s.fastRecheck)
        if flags.isSet("probe.uplink") || file?.uplinks == nil {
            s.uplinks = flags.strings("probe.uplink")
            for u in s.uplinks {
                if let problem = InterfaceName.problem(u) ?? Scope.reservedUplinkProblem(u) {
                    throw UsageError(
                        "invalid value \(u.debugDescription) for flag '--probe.uplink': an interface name \(problem)")
                }
                if s.uplinks.filter({ $0 == u }).count > 1 {
                    throw UsageError("flag '--probe.uplink' names \(u.debugDescription) twice")
                }
            }
        } else if case .interfaces(let names)? = file?.uplinks {
            s.uplinks = names
        } else {
            s.autoUplinks = true
        }
        s.uplinkIntervals = file?.uplinkIntervals ?? [:]
        s.uplinkProbes = (file?.uplinkProbes ?? [:]).mapValues(Set.init)
        s.uplinkBudgets = file?.uplinkBudgets ?? [:]
        s.uplinkRouting = file?.uplinkRouting ?? [:]
        s.captivePortal = file?.captivePortal ?? CaptivePortalSettings()
        return s
    }

    /// The effective interval must exceed the effective timeout, globally and per probe, and a
    /// probe's own interval cannot be below the global one (rounds are the unit of scheduling).
    private static func checkTimes(_ s: MonitorSettings, flags: ParsedFlags, file: ExporterConfig?) throws(Failure) {
        let fmt = DurationParser.format
        guard s.interval > .zero else {
            throw .usage(UsageError("invalid value for flag '--probe.interval': must be above 0"))
        }
        guard s.timeout > .zero else {
            throw .usage(UsageError("invalid value for flag '--probe.timeout': must be above 0"))
        }
        // Past this a round's interval or a probe's duration is not a record the history keeps
        // (its reader refuses them as corrupt), and stagger arithmetic nears its range.
        let longest = Duration.seconds(10 * 86_400)
        for (key, value) in [("interval", s.interval), ("timeout", s.timeout)] where value > longest {
            guard let file, !flags.isSet("probe.\(key)") else {
                throw .usage(UsageError("invalid value for flag '--probe.\(key)': must be at most \(fmt(longest))"))
            }
            throw .config(
                ConfigError(
                    file: file.file, mark: file.global.marks[key], path: "global.\(key)",
                    expected: "at most \(fmt(longest))", found: fmt(value)))
        }
        for (uplink, interval) in (file?.uplinkIntervals ?? [:]).sorted(by: { $0.key < $1.key }) {
            guard let file, interval < s.interval || interval > longest else { continue }
            throw .config(
                ConfigError(
                    file: file.file, mark: file.uplinkIntervalMarks[uplink], path: "uplink_settings.\(uplink).interval",
                    expected: "from the global interval (\(fmt(s.interval))) to \(fmt(longest))", found: fmt(interval),
                    hint: "rounds run at the global interval: an uplink can only be probed less often"))
        }
        for d in file?.probes ?? [] {
            for (key, value) in [("interval", d.interval), ("timeout", d.timeout)] {
                guard let value, value > longest else { continue }
                throw .config(
                    ConfigError(
                        file: file?.file ?? "", mark: d.marks[key] ?? d.mark, path: "\(d.path).\(key)",
                        expected: "at most \(fmt(longest))", found: fmt(value)))
            }
        }
        if !MonitorSettings.timeoutFits(s.timeout, interval: s.interval) {
            let g = file?.global
            let fromFile = (
                interval: g?.interval != nil && !flags.isSet("probe.interval"),
                timeout: g?.timeout != nil && !flags.isSet("probe.timeout")
            )
            guard let file, fromFile.interval || fromFile.timeout else {
                throw .usage(
                    UsageError(
                        "invalid value for flag '--probe.timeout': must be above 0 and below --probe.interval (\(fmt(s.interval)))"
                    ))
            }
            let timeoutSource =
                fromFile.timeout ? "" : flags.isSet("probe.timeout") ? " given by --probe.timeout" : ", the default"
            let intervalSource =
                fromFile.interval ? "" : flags.isSet("probe.interval") ? " given by --probe.interval" : ", the default"
            if fromFile.interval {
                throw .config(
                    ConfigError(
                        file: file.file, mark: file.global.marks["interval"], path: "global.interval",
                        expected: "an interval above the timeout (\(fmt(s.timeout))\(timeoutSource))",
                        found: fmt(s.interval)))
            }
            throw .config(
                ConfigError(
                    file: file.file, mark: file.global.marks["timeout"], path: "global.timeout",
                    expected: "a timeout below the interval (\(fmt(s.interval))\(intervalSource))",
                    found: fmt(s.timeout)))
        }
        for d in file?.probes ?? [] {
            let interval = d.interval ?? s.interval
            let timeout = d.timeout ?? s.timeout
            if let own = d.interval, own < s.interval {
                throw .config(
                    ConfigError(
                        file: file?.file ?? "", mark: d.marks["interval"], path: "\(d.path).interval",
                        expected: "an interval of at least the global interval (\(fmt(s.interval)))", found: fmt(own),
                        hint: "probes run in rounds every global interval; a probe's own interval can only skip rounds")
                )
            }
            if !MonitorSettings.timeoutFits(timeout, interval: interval) {
                let key = d.timeout != nil ? "timeout" : "interval"
                throw .config(
                    ConfigError(
                        file: file?.file ?? "", mark: d.marks[key] ?? d.mark, path: "\(d.path).\(key)",
                        expected: key == "timeout"
                            ? "a timeout below the probe's interval (\(fmt(interval)))"
                            : "an interval above the timeout (\(fmt(timeout)))",
                        found: fmt(key == "timeout" ? timeout : interval)))
            }
        }
    }
}
