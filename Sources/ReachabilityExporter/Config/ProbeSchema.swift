import ReachabilityVerdict

/// The schema of one `probes:` entry: the keys every kind shares, checked here, and the kind's
/// own section, which the kind's configuration decodes itself (`ProbeConfiguration.decode`,
/// found through `ProbeType.kind`): straight into its configuration, from its default, with
/// every error at the key it was reading, so that a typo never silently turns a check off.
enum ProbeSchema {
    /// The keys of an entry: its own, then each kind's section (`ProbeKind.section`).
    static let keys =
        ["name", "type", "target", "interval", "timeout", "family", "labels"] + ProbeKind.all.map(\.section)
    /// The `type:` values, kind by kind: "http, https, icmp, dns, tcp or mtu".
    static let typeNames: String = {
        let names = ProbeKind.all.flatMap(\.types).map(\.rawValue)
        return names.dropLast().joined(separator: ", ") + " or " + names.last!
    }()
    /// Label names a probe's constant labels may not use: the join key, the series' own labels,
    /// and the labels Prometheus attaches at scrape time.
    static let reservedLabels: Set<String> = ["target", "probe", "interface", "le", "job", "instance"]
    /// The longest label value (and label name) a probe may export, in bytes: every series of the
    /// probe repeats it at every scrape (Prometheus' `label_value_length_limit`, set here).
    static let maxLabelValueBytes = 1024

    static func decode(_ node: YAMLNode, path: String, file: String) throws(ConfigError) -> ProbeDefinition {
        let p = try ConfigMap(node, path: path, file: file, keys: keys, what: "a probe with name, type and target")
        guard let type = try p.choice("type", ProbeType.self) else {
            throw p.missing("type", expected: typeNames)
        }
        guard let target = try p.string("target", expected: type.kind.targetText(type)) else {
            throw p.missing("target", expected: type.kind.targetText(type))
        }
        // The target is a label value (the probe's name when it has none): bounded like one.
        guard target.utf8.count <= maxLabelValueBytes else {
            throw p.fail(
                "target", expected: "a target of at most \(maxLabelValueBytes) bytes (it is a label value)",
                found: "\(target.utf8.count) bytes")
        }
        // An mtu probe usually shares its host with an icmp probe: its default name says which it is.
        let defaultName = type == .mtu ? Probe.mtuName(target) : target
        var def = ProbeEntry(name: defaultName, type: type, target: target)
        (def.file, def.mark, def.path) = (file, node.mark, path)
        for e in p.entries { def.marks[e.key] = e.value.mark }
        if let name = try p.string("name") {
            if let bad = name.unicodeScalars.first(where: { $0 == "@" || $0.value < 0x20 || $0.value == 0x7F }) {
                throw p.fail(
                    "name", expected: "a name without '@' or control characters", found: name.debugDescription,
                    hint: bad == "@" ? "'@' separates the uplink in target labels (name@eth1)" : nil)
            }
            guard name.utf8.count <= 200 else {
                throw p.fail("name", expected: "a name of at most 200 bytes", found: "\(name.utf8.count) bytes")
            }
            def.name = name
        }
        if p.value("name") == nil, target.contains("@") {
            throw p.fail(
                "target", expected: "a target without '@', or a separate name", found: target.debugDescription,
                hint: "'@' separates the uplink in target labels; give the probe a name")
        }
        def.interval = try ConfigSchema.positive(p, "interval")
        def.timeout = try ConfigSchema.positive(p, "timeout")
        if let i = def.interval, let t = def.timeout, !MonitorSettings.timeoutFits(t, interval: i) {
            throw p.fail("timeout", expected: "a timeout below the probe's interval (\(DurationParser.format(i)))")
        }
        def.family = try p.choice("family", FamilyPreference.self)
        def.labels = try labels(p)
        for kind in ProbeKind.all where p.has(kind.section) && !kind.types.contains(type) {
            let (section, owner) = (kind.section, kind.types)
            throw ConfigError(
                file: file, mark: p.keyMark(section), path: p.path(section),
                expected: "no \(section) section on a probe of type \(type.rawValue)", found: "a \(section) section",
                hint: "it applies to type \(owner.map(\.rawValue).joined(separator: " or "))")
        }
        let configuration = try type.kind.configuration.decode(&def, in: p)
        return ProbeDefinition(def, configuration: configuration)
    }

    static func labels(_ p: ConfigMap) throws(ConfigError) -> [ProbeLabel] {
        guard let node = p.value("labels") else { return [] }
        guard case .map(let entries) = node.kind else {
            throw p.fail("labels", expected: "a map of label names to values")
        }
        var out: [ProbeLabel] = []
        for e in entries {
            let path = KeyPath.child(p.path("labels"), e.key)
            guard MetricName.isValidLabelName(e.key), !e.key.hasPrefix("__") else {
                throw ConfigError(
                    file: p.file, mark: e.keyMark, path: path,
                    expected: "a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, not starting with __)",
                    found: e.key.debugDescription)
            }
            guard !reservedLabels.contains(e.key) else {
                throw ConfigError(
                    file: p.file, mark: e.keyMark, path: path,
                    expected: "a label name other than \(reservedLabels.sorted().joined(separator: ", "))",
                    found: e.key.debugDescription,
                    hint: "these are the probe series' own labels or Prometheus's target labels")
            }
            guard let s = e.value.scalar, !s.isNull, !s.text.isEmpty else {
                throw ConfigError(
                    file: p.file, mark: e.value.mark, path: path, expected: "a non-empty label value",
                    found: e.value.foundDescription)
            }
            guard e.key.utf8.count <= maxLabelValueBytes, s.text.utf8.count <= maxLabelValueBytes else {
                throw ConfigError(
                    file: p.file, mark: e.value.mark, path: path,
                    expected: "a label name and value of at most \(maxLabelValueBytes) bytes each",
                    found: "\(e.key.utf8.count) and \(s.text.utf8.count) bytes")
            }
            out.append(ProbeLabel(e.key, s.text))
        }
        return out
    }
}
