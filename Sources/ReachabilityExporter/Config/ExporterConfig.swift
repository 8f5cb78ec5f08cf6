import ReachabilityVerdict

/// The configuration file (`--config.file`), decoded and checked against the schema: what it
/// sets and nothing else. Optional fields are nil when the file does not set them, so the
/// command line can fill them in (see `ExporterOptions` for the precedence). Built by
/// `ConfigLoader`; what a field means is in docs/configuration.md.
package struct ExporterConfig: Sendable, Equatable {
    /// The file it came from, as given (for messages).
    package var file: String
    package var global: GlobalConfig
    /// nil when the file does not mention `uplinks`.
    package var uplinks: UplinkSelection?
    /// nil when the file has no `history` section.
    package var history: HistorySection?
    /// `uplink_settings:` — per interface, the mark and source addresses its probes carry.
    package var uplinkRouting: [String: UplinkRouting] = [:]
    /// `uplink_settings:` — per interface, how often its probes run (at least the global interval).
    package var uplinkIntervals: [String: Duration] = [:]
    /// Where each uplink's `interval` is in the file (for errors found with the command line).
    package var uplinkIntervalMarks: [String: YAMLMark] = [:]
    /// `uplink_settings:` — per interface, the only probes (by name) that run bound to it.
    package var uplinkProbes: [String: [String]] = [:]
    /// Where each uplink's `probes` names are (checked against the probes once they are built).
    package var uplinkProbeMarks: [String: [YAMLMark]] = [:]
    /// Where each `uplink_settings` key is, by interface (every key, whatever it sets): checked
    /// against the uplinks once flags and file are combined.
    package var uplinkSettingMarks: [String: YAMLMark] = [:]
    /// `uplink_settings:` — per interface, a traffic budget for its probes.
    package var uplinkBudgets: [String: TrafficBudget] = [:]
    /// `captive_portal:` — how the network's captive-portal API is learned and read; nil: not set.
    package var captivePortal: CaptivePortalSettings?
    package var probes: [ProbeDefinition]

    package init(
        file: String, global: GlobalConfig = GlobalConfig(), uplinks: UplinkSelection? = nil,
        history: HistorySection? = nil, probes: [ProbeDefinition] = []
    ) {
        self.file = file
        self.global = global
        self.uplinks = uplinks
        self.history = history
        self.probes = probes
    }
}

/// `global:` — the scheduler and verdict settings. nil: not set in the file.
package struct GlobalConfig: Sendable, Equatable {
    package var interval: Duration?
    package var timeout: Duration?
    /// `policy` with its `quorum` folded in.
    package var policy: VerdictPolicy?
    package var failAfter: Int?
    package var recoverAfter: Int?
    /// `fast_recheck`: the faster re-check while not `full` (0 disables).
    package var fastRecheck: Duration?
    /// `path_monitor`: read at start-up only.
    package var pathMonitor: Bool?
    /// `trust_local_targets`: answers from the local network may prove `full` (labs only).
    package var trustLocalTargets: Bool?
    /// Where each key was (`interval` → 3:13), for errors found once flags are combined in.
    package var marks: [String: YAMLMark] = [:]

    package init() {}
}

/// `uplinks:` — `auto` (every interface holding a default route) or a list of interface names.
package enum UplinkSelection: Sendable, Equatable {
    case auto
    case interfaces([String])
}

/// `history:` — parsed and handed on; the history writer gives the values their meaning.
package struct HistorySection: Sendable, Equatable {
    package var dir: String?
    /// `max_file_size` in bytes.
    package var maxFileSize: Int64?
    package var retention: Duration?
    /// `max_total_size` in bytes.
    package var maxTotalSize: Int64?

    package init(dir: String? = nil, maxFileSize: Int64? = nil, retention: Duration? = nil, maxTotalSize: Int64? = nil)
    {
        self.dir = dir
        self.maxFileSize = maxFileSize
        self.retention = retention
        self.maxTotalSize = maxTotalSize
    }
}

/// One entry of `probes:`: the settings every kind shares (`entry`, read as the definition's own
/// through member lookup: `d.name`, `d.marks`) and its kind's configuration, decoded from its
/// section (`ProbeConfiguration`).
@dynamicMemberLookup
package struct ProbeDefinition: Sendable, Equatable {
    /// The settings every kind shares, and where they were written.
    package var entry: ProbeEntry
    /// The kind's validated configuration.
    package var configuration: any ProbeConfiguration

    /// `entry` with its kind's `configuration`.
    package init(_ entry: ProbeEntry, configuration: any ProbeConfiguration) {
        self.entry = entry
        self.configuration = configuration
    }

    /// The entry's settings, as the definition's own.
    package subscript<T>(dynamicMember key: WritableKeyPath<ProbeEntry, T>) -> T {
        get { entry[keyPath: key] }
        set { entry[keyPath: key] = newValue }
    }

    package static func == (a: ProbeDefinition, b: ProbeDefinition) -> Bool {
        a.entry == b.entry && a.configuration.isEqual(to: b.configuration)
    }

    /// Equal apart from where it is written: a probe that only moved in the file is unchanged.
    package func sameSettings(as other: ProbeDefinition) -> Bool {
        var a = entry
        let b = other.entry
        (a.file, a.mark, a.path, a.marks) = (b.file, b.mark, b.path, b.marks)
        return a == b && configuration.isEqual(to: other.configuration)
    }
}
