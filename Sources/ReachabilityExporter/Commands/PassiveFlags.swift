import ReachabilityVerdict

/// The exporter's `--passive.*` flags: passive evidence from the host's own TCP connections
/// (`PassiveWatch`; docs/evidence.md#passive-evidence).
package enum PassiveFlags {
    private static let defaults = PassiveConfig()

    static let specs: [FlagSpec] = [
        FlagSpec(
            "passive.mode", .value(default: defaults.mode.rawValue), placeholder: "MODE",
            help:
                "off; observe: read the host's own TCP connections (NETLINK_SOCK_DIAG, counts and ages only) into reachability_passive_* and probe at once when they begin to stall; prefer: also pause a full scope's probes while its connections receive, for at most two probe intervals."
        ),
        FlagSpec(
            "passive.interval", .value(default: DurationParser.format(defaults.interval)), placeholder: "DURATION",
            help: "How often the connections are read (200ms to 1m)."),
        FlagSpec(
            "passive.freshness", .value(default: DurationParser.format(defaults.evidence.freshness)),
            placeholder: "DURATION",
            help: "Data received within this counts a connection as receiving (1s to 10m)."),
    ]

    static func config(_ flags: ParsedFlags) throws(UsageError) -> PassiveConfig {
        var config = PassiveConfig()
        let text = flags.string("passive.mode") ?? config.mode.rawValue
        guard let mode = PassiveConfig.Mode(rawValue: text) else {
            throw UsageError(
                "invalid value \(text.debugDescription) for flag '--passive.mode': expected "
                    + PassiveConfig.Mode.allCases.map(\.rawValue).joined(separator: " or "))
        }
        config.mode = mode
        config.interval = try flags.duration("passive.interval") ?? config.interval
        config.evidence.freshness = try flags.duration("passive.freshness") ?? config.evidence.freshness
        guard config.interval >= .milliseconds(200), config.interval <= .seconds(60) else {
            throw UsageError("invalid value for flag '--passive.interval': must be between 200ms and 1m")
        }
        guard config.evidence.freshness >= .seconds(1), config.evidence.freshness <= .seconds(600) else {
            throw UsageError("invalid value for flag '--passive.freshness': must be between 1s and 10m")
        }
        return config
    }
}
