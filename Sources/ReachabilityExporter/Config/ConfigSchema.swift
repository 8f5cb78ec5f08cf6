import ReachabilityVerdict

/// The configuration file's schema: turns the parsed document into an `ExporterConfig`,
/// refusing unknown keys, wrong types and values that cannot work, each with file:line:column,
/// the key path, what was expected and what was found. Checks that need the command line too
/// (the effective interval against a probe's timeout) are `ExporterOptions`'s.
enum ConfigSchema {
    static let topKeys = ["global", "uplinks", "uplink_settings", "history", "captive_portal", "probes"]
    static let globalKeys = [
        "interval", "timeout", "policy", "quorum", "fail_after", "recover_after", "fast_recheck", "path_monitor",
        "trust_local_targets",
    ]
    static let historyKeys = ["dir", "max_file_size", "retention", "max_total_size"]

    static func decode(_ root: YAMLNode?, file: String) throws(ConfigError) -> ExporterConfig {
        guard let root else {
            throw ConfigError(
                file: file, mark: nil, path: "", expected: "a map of settings (\(topKeys.joined(separator: ", ")))",
                found: "an empty file",
                hint: "an empty file is refused so that a truncated file never replaces the probes")
        }
        let top = try ConfigMap(
            root, path: "", file: file, keys: topKeys, what: "with the keys \(topKeys.joined(separator: ", "))")
        var config = ExporterConfig(file: file)
        if let g = try top.map("global", keys: globalKeys, what: "the global settings") {
            config.global = try global(g)
        }
        if top.has("uplinks") { config.uplinks = try uplinks(top) }
        try uplinkSettings(top, into: &config)
        if let h = try top.map("history", keys: historyKeys, what: "the history settings") {
            config.history = try history(h)
        }
        config.captivePortal = try captivePortal(top)
        if let items = try top.list("probes", expected: "a list of probes ('- name: ...' entries)") {
            var seen: [String: String] = [:]
            for (i, item) in items.enumerated() {
                let probe = try ProbeSchema.decode(item, path: KeyPath.index("probes", i), file: file)
                if let first = seen[probe.name] {
                    throw ConfigError(
                        file: file, mark: probe.marks["name"] ?? probe.marks["target"] ?? probe.mark,
                        path: KeyPath.child(probe.path, "name"),
                        expected: "a name no other probe has", found: probe.name.debugDescription,
                        hint: "\(first) has it too; give each probe its own name")
                }
                seen[probe.name] = probe.path
                config.probes.append(probe)
            }
        }
        return config
    }

    static func global(_ g: ConfigMap) throws(ConfigError) -> GlobalConfig {
        var out = GlobalConfig()
        for key in g.keys { out.marks[key] = g.value(key)?.mark }
        out.interval = try positive(g, "interval")
        out.timeout = try positive(g, "timeout")
        if let i = out.interval, let t = out.timeout, !MonitorSettings.timeoutFits(t, interval: i) {
            throw g.fail("timeout", expected: "a timeout below the interval (\(DurationParser.format(i)))")
        }
        // The same spellings as --probe.mode: quorum:2 and quorum:50% included.
        let policies = "one of parallel, http, icmp, quorum, quorum:N, quorum:N%"
        if let name = try g.string("policy", expected: policies) {
            guard let policy = VerdictPolicy.parse(name) else {
                throw g.fail("policy", expected: policies)
            }
            out.policy = policy
        }
        if g.has("quorum") {
            if let p = try g.string("policy", expected: policies), p.hasPrefix("quorum:") {
                throw g.fail(
                    "quorum", expected: "the quorum in one place", found: "policy \(p) and a quorum key",
                    hint: "write either policy: \(p) or policy: quorum with quorum: N")
            }
            guard out.policy?.name == "quorum" else {
                throw g.fail(
                    "quorum", expected: "a quorum only together with policy: quorum",
                    found: "policy \(out.policy?.name ?? "parallel (the default)")")
            }
            let expected = "a number of probes (2) or a share of them (50%)"
            guard let (text, _) = try g.scalar("quorum", expected: expected),
                let policy = VerdictPolicy.parse("quorum:" + text)
            else {
                throw g.fail("quorum", expected: expected)
            }
            out.policy = policy
        }
        out.failAfter = try g.int("fail_after", 1...1000)
        out.recoverAfter = try g.int("recover_after", 1...1000)
        out.fastRecheck = try g.duration("fast_recheck")
        out.pathMonitor = try g.bool("path_monitor")
        out.trustLocalTargets = try g.bool("trust_local_targets")
        return out
    }

    static func positive(_ m: ConfigMap, _ key: String) throws(ConfigError) -> Duration? {
        guard let d = try m.duration(key) else { return nil }
        guard d > .zero else { throw m.fail(key, expected: "a duration above 0") }
        return d
    }

    /// `uplink_settings: {wwan0: {mark: 0x2, source: [100.64.0.2], interval: 5m}}`: per
    /// interface, the firewall mark (1 to 0xffffffff, decimal or 0x hex) and/or the source
    /// addresses (one per family) its probes carry, for `ip rule` tables, and how often its
    /// probes run.
    static func uplinkSettings(_ top: ConfigMap, into config: inout ExporterConfig) throws(ConfigError) {
        guard let node = top.value("uplink_settings") else { return }
        guard case .map(let entries) = node.kind else {
            throw top.fail(
                "uplink_settings", expected: "a map of interface names to {probes, interval, mark, source, budget}")
        }
        for e in entries {
            let path = KeyPath.child("uplink_settings", e.key)
            if let problem = InterfaceName.problem(e.key) ?? Scope.reservedUplinkProblem(e.key) {
                throw ConfigError(
                    file: top.file, mark: e.keyMark, path: path, expected: "an interface name (\(InterfaceName.rule))",
                    found: e.key.debugDescription, hint: problem)
            }
            config.uplinkSettingMarks[e.key] = e.keyMark
            let m = try ConfigMap(
                e.value, path: path, file: top.file,
                keys: ["probes", "interval", "mark", "source", "budget", "budget_period", "budget_start"],
                what: "the uplink's probes, interval, mark, source and budget")
            if let interval = try m.duration("interval") {
                config.uplinkIntervals[e.key] = interval
                config.uplinkIntervalMarks[e.key] = m.value("interval")?.mark
            }
            if let items = try m.list("probes", expected: "a list of probe names") {
                var names: [String] = []
                for item in items {
                    guard let s = item.scalar, !s.isNull, !s.text.isEmpty, !names.contains(s.text) else {
                        throw m.fail("probes", expected: "a list of probe names, each once")
                    }
                    names.append(s.text)
                }
                config.uplinkProbes[e.key] = names
                config.uplinkProbeMarks[e.key] = items.map(\.mark)
            }
            var routing = UplinkRouting()
            if let (text, _) = try m.scalar("mark", expected: "a firewall mark from 1 to 0xffffffff") {
                let value = text.hasPrefix("0x") ? UInt32(text.dropFirst(2), radix: 16) : UInt32(text)
                guard let value, value > 0 else {
                    throw m.fail("mark", expected: "a firewall mark from 1 to 0xffffffff (decimal or 0x hex)")
                }
                routing.mark = value
            }
            if let source = m.value("source") {
                let items: [YAMLNode]
                if case .list(let list) = source.kind { items = list } else { items = [source] }
                for item in items {
                    guard let s = item.scalar, let address = SocketAddress(ip: s.text) else {
                        throw m.fail("source", expected: "an IP address, or a list of one per family")
                    }
                    guard routing.source(for: address.ipFamily) == nil else {
                        throw m.fail(
                            "source", expected: "one address per family",
                            found: "a second \(address.ipFamily.rawValue) address \(s.text)")
                    }
                    routing.sources.append(address.ip)
                }
            }
            if let budget = try uplinkBudget(m) { config.uplinkBudgets[e.key] = budget }
            guard !m.keys.isEmpty else {
                throw m.missing("probes", expected: "probes, an interval, a mark, a source or a budget")
            }
            if routing.mark != nil || !routing.sources.isEmpty { config.uplinkRouting[e.key] = routing }
        }
    }

    /// `budget: 200MB` (both ways, IP packets), `budget_period: 30d` (1 minute to 366 days; 30 days
    /// when absent), `budget_start: 2026-01-05` (a UTC date the windows count from: the billing
    /// day; the Unix epoch when absent).
    static func uplinkBudget(_ m: ConfigMap) throws(ConfigError) -> TrafficBudget? {
        let sizeExpected = "a size such as 200MB or 1GiB, above 0"
        guard let (text, _) = try m.scalar("budget", expected: sizeExpected) else {
            for key in ["budget_period", "budget_start"] where m.value(key) != nil {
                throw m.fail(key, expected: "no \(key) without a budget", hint: "add budget: (say) 200MB")
            }
            return nil
        }
        let bytes: Int
        do throws(ByteSizeParser.Invalid) { bytes = try ByteSizeParser.parse(text) } catch {
            throw m.fail("budget", expected: sizeExpected, hint: error.message)
        }
        guard bytes > 0 else { throw m.fail("budget", expected: sizeExpected) }
        var budget = TrafficBudget(bytes: UInt64(bytes))
        if let period = try m.duration("budget_period") {
            guard period >= .seconds(60), period <= .seconds(366 * 86_400) else {
                throw m.fail("budget_period", expected: "from 1m to 366d", found: DurationParser.format(period))
            }
            budget.period = period
        }
        if let (start, _) = try m.scalar("budget_start", expected: "a UTC date such as 2026-01-05") {
            let parts = start.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
                let y = Int(parts[0]), let mo = Int(parts[1]), let d = Int(parts[2]),
                (1970...9999).contains(y), (1...12).contains(mo), (1...31).contains(d),
                UTCTime.date(day: UTCTime.days(year: y, month: mo, day: d)) == start
            else { throw m.fail("budget_start", expected: "a UTC date such as 2026-01-05") }
            budget.start = Double(UTCTime.days(year: y, month: mo, day: d)) * 86_400
        }
        return budget
    }

    static func uplinks(_ top: ConfigMap) throws(ConfigError) -> UplinkSelection {
        let expected = "auto, or a list of interface names"
        guard let node = top.value("uplinks") else { return .interfaces([]) }
        if let s = node.scalar {
            guard s.text == "auto", s.style == .plain else { throw top.fail("uplinks", expected: expected) }
            return .auto
        }
        guard case .list(let items) = node.kind else { throw top.fail("uplinks", expected: expected) }
        var names: [String] = []
        for (i, item) in items.enumerated() {
            let path = KeyPath.index("uplinks", i)
            guard let s = item.scalar, !s.isNull else {
                throw ConfigError(
                    file: top.file, mark: item.mark, path: path, expected: "an interface name",
                    found: item.foundDescription)
            }
            if InterfaceName.problem(s.text) != nil {
                throw ConfigError(
                    file: top.file, mark: item.mark, path: path, expected: "an interface name (\(InterfaceName.rule))",
                    found: s.text.debugDescription)
            }
            if Scope.reservedUplinkProblem(s.text) != nil {
                throw ConfigError(
                    file: top.file, mark: item.mark, path: path,
                    expected: "an interface name other than overall, ipv4 and ipv6 (they name other scopes)",
                    found: s.text.debugDescription)
            }
            if s.text == "auto" {
                throw ConfigError(
                    file: top.file, mark: item.mark, path: path, expected: "an interface name", found: "\"auto\"",
                    hint: "write uplinks: auto on its own, not inside a list")
            }
            guard !names.contains(s.text) else {
                throw ConfigError(
                    file: top.file, mark: item.mark, path: path, expected: "each interface once",
                    found: "\(s.text.debugDescription) again")
            }
            names.append(s.text)
        }
        return .interfaces(names)
    }

    static func history(_ h: ConfigMap) throws(ConfigError) -> HistorySection {
        var out = HistorySection()
        out.dir = try h.string("dir", expected: "a directory path")
        func size(_ key: String, atLeast least: Int64, _ rule: String) throws(ConfigError) -> Int64? {
            guard let (text, _) = try h.scalar(key, expected: "a size such as 16MiB or 1048576") else { return nil }
            guard let bytes = ByteSize.parse(text), bytes >= least else {
                throw h.fail(key, expected: "a size of at least \(rule) such as 16MiB, 512KiB or 1048576 (bytes)")
            }
            return bytes
        }
        out.maxFileSize = try size("max_file_size", atLeast: 4096, "4KiB")
        out.retention = try positive(h, "retention")
        // As with the flags: the total holds at least one whole file.
        let fileSize = out.maxFileSize ?? Int64(HistoryConfig(directory: "").maxFileSize)
        out.maxTotalSize = try size(
            "max_total_size", atLeast: fileSize, "max_file_size (\(ByteSizeParser.format(Int(fileSize))))")
        // Without max_total_size its default holds: a larger file would leave one file of history.
        let defaultTotal = Int64(HistoryConfig(directory: "").maxTotalSize)
        if out.maxTotalSize == nil, fileSize > defaultTotal {
            throw h.fail(
                "max_file_size",
                expected: "a size of at most max_total_size (\(ByteSizeParser.format(Int(defaultTotal))) by default)",
                hint: "raise max_total_size too")
        }
        return out
    }
}

/// Sizes in the file: the same spellings as the `--history.*` flags (`16MiB`, `64MB`, `1048576`).
enum ByteSize {

    /// One rule for flags and file alike: `ByteSizeParser` (History/HistoryConfig.swift).
    static func parse(_ text: String) -> Int64? {
        (try? ByteSizeParser.parse(text)).map(Int64.init)
    }
}
