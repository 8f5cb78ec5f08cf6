import ReachabilityVerdict

/// `reachability_exporter check-config FILE`: reads and checks a configuration file exactly as
/// the exporter would (the schema, and every probe's own configuration, CA files included),
/// prints a summary, and exits 0, or prints the error and exits 78. It sends no traffic.
package enum CheckConfigCommand {
    static let flags: [FlagSpec] = [
        FlagSpec("help", .bool(default: false), help: "Show this help and exit.")
    ]

    static let usage = """
        usage: reachability_exporter check-config FILE

        Checks a configuration file (see docs/configuration.md) and prints a summary.
        Exit status: 0 valid, 78 invalid, 64 usage error. Sends no traffic.

        """

    package static func main(_ args: [String]) -> Int32 {
        let parsed: ParsedFlags
        do throws(UsageError) { parsed = try FlagParser(flags, allowsPositional: true).parse(args) } catch {
            writeErr("reachability_exporter check-config: error: \(error.message), try --help\n")
            return 64
        }
        if parsed.bool("help") {
            writeOut(usage)
            return 0
        }
        guard parsed.positional.count == 1, let path = parsed.positional.first else {
            writeErr(
                "reachability_exporter check-config: error: expected exactly one FILE, found \(parsed.positional.count), try --help\n"
            )
            return 64
        }
        let config: ExporterConfig
        let specs: [ProbeSpec]
        do throws(ConfigError) {
            config = try ConfigLoader.load(path: path)
            specs = try check(config)
        } catch {
            writeErr("\(error)\n")
            return 78
        }
        // Names, targets and labels come from the file: control characters in them are escaped.
        writeOut(summary(config, specs: specs).escapingControlCharactersButNewlines)
        return 0
    }

    /// Everything the exporter checks at start-up, with no flags given: builds the probes and
    /// applies the interval and timeout rules of `ExporterOptions`.
    static func check(_ config: ExporterConfig) throws(ConfigError) -> [ProbeSpec] {
        let noFlags = ParsedFlags(
            specs: Dictionary(ProbeFlags.specs.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a }))
        do throws(ExporterOptions.Failure) {
            // The defaults are refused so that a file without probes builds nothing (and sends nothing).
            // Nothing borrowed: check-config opens no socket, it checks the file for the service
            // that will run it (a user checking the daemon's file with marks is not refused).
            return try ExporterOptions.resolve(
                flags: noFlags, file: config, environment: [ProbeFlags.refuseDefaultsVariable: "1"],
                borrowed: BorrowedCapabilities(mask: 0)
            ).specs
        } catch {
            switch error {
            case .config(let e): throw e
            // Only a file without probes gets here (the defaults are refused): not the file's fault.
            case .usage: return []
            }
        }
    }

    static func policyText(_ p: VerdictPolicy) -> String {
        guard case .quorum(let minimum, let fraction) = p else { return p.name }
        if let minimum { return "quorum \(minimum)" }
        return "quorum \(Int(((fraction ?? 0.5) * 100).rounded()))%"
    }

    static func summary(_ c: ExporterConfig, specs: [ProbeSpec]) -> String {
        let fmt = DurationParser.format
        let g = c.global
        let defaults = MonitorSettings()
        var out = "\(c.file): valid\n"
        out +=
            "global: interval \(fmt(g.interval ?? defaults.interval)), timeout \(fmt(g.timeout ?? defaults.timeout)), "
        out +=
            "policy \(policyText(g.policy ?? defaults.verdict.policy)), fail_after \(g.failAfter ?? defaults.verdict.failAfter), "
        out +=
            "recover_after \(g.recoverAfter ?? defaults.verdict.recoverAfter), fast_recheck \(fmt(g.fastRecheck ?? defaults.fastRecheck)), "
        out += "path_monitor \(g.pathMonitor ?? true)\n"
        switch c.uplinks {
        case nil: out += "uplinks: none\n"
        case .auto?: out += "uplinks: auto (every interface holding a default route)\n"
        case .interfaces(let names)?: out += "uplinks: \(names.isEmpty ? "none" : names.joined(separator: ", "))\n"
        }
        for name in Set(c.uplinkIntervals.keys).union(c.uplinkRouting.keys).union(c.uplinkProbes.keys).union(
            c.uplinkBudgets.keys
        ).sorted() {
            var parts: [String] = []
            if let probes = c.uplinkProbes[name] { parts.append("probes \(probes.joined(separator: ", "))") }
            if let i = c.uplinkIntervals[name] { parts.append("every \(fmt(i)) while full") }
            if let b = c.uplinkBudgets[name] {
                parts.append(
                    "budget \(b.bytes) bytes per \(fmt(b.period)) from \(UTCTime.date(day: UTCTime.day(of: b.start)))")
            }
            if let mark = c.uplinkRouting[name]?.mark { parts.append("mark 0x\(String(mark, radix: 16))") }
            if let sources = c.uplinkRouting[name]?.sources, !sources.isEmpty {
                parts.append("source \(sources.joined(separator: ", "))")
            }
            out += "uplink \(name): \(parts.joined(separator: ", "))\n"
        }
        if let h = c.history {
            out +=
                "history: dir \(h.dir ?? "(default)"), max_file_size \(h.maxFileSize.map { "\($0) bytes" } ?? "(default)"), "
            out += "retention \(h.retention.map(fmt) ?? "(default)"), "
            out += "max_total_size \(h.maxTotalSize.map { "\($0) bytes" } ?? "(default)")\n"
        }
        if c.probes.isEmpty {
            out += "probes: none (probe flags, or the built-in defaults, apply)\n"
            return out
        }
        out += "probes: \(c.probes.count)\n"
        for (d, spec) in zip(c.probes, specs) {
            var line = "  \(spec.type.rawValue) \(d.name)"
            if d.name != spec.target { line += " -> \(spec.target)" }
            var extras: [String] = []
            if let i = d.interval { extras.append("interval \(fmt(i))") }
            if let t = d.timeout { extras.append("timeout \(fmt(t))") }
            if let f = d.family { extras.append("family \(f.rawValue)") }
            extras += d.configuration.summary
            if spec.evidence == .local { extras.append("local evidence only") }
            if !d.labels.isEmpty {
                extras.append("labels " + d.labels.map { "\($0.name)=\($0.value)" }.joined(separator: ","))
            }
            if !extras.isEmpty { line += " (\(extras.joined(separator: ", ")))" }
            out += line + "\n"
        }
        if let warning = ProbeSpec.evidenceWarning(specs, policy: g.policy ?? defaults.verdict.policy) {
            out += "warning: \(warning)\n"
        }
        return out
    }
}
