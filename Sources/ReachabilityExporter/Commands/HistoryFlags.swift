import ReachabilityVerdict

/// The exporter's `--history.*` flags and how they become a `HistoryConfig` (read by
/// `ExporterOptions.resolve`, flags over the file's `history:` section).
package enum HistoryFlags {
    /// The defaults are the settings type's.
    private static let defaults = HistoryConfig(directory: "")

    static let specs: [FlagSpec] = [
        FlagSpec(
            "history.dir", .value(default: nil), placeholder: "DIR",
            help:
                "Keep a history of every round and transition here (JSON Lines; see docs/history-format.md); restores the state on start and feeds the availability gauges. Off when unset.",
            file: "history.dir"
        ),
        FlagSpec(
            "history.max-file-size", .value(default: ByteSizeParser.format(defaults.maxFileSize)), placeholder: "SIZE",
            help: "Start a new history file before one would grow past this (also a new file every day, at 00:00 UTC).",
            file: "history.max_file_size"),
        FlagSpec(
            "history.retention", .value(default: DurationParser.format(defaults.retention)), placeholder: "DURATION",
            help: "Delete history files whose newest record is older than this.", file: "history.retention"),
        FlagSpec(
            "history.max-total-size", .value(default: ByteSizeParser.format(defaults.maxTotalSize)),
            placeholder: "SIZE",
            help: "Delete the oldest history files while all of them together are larger than this.",
            file: "history.max_total_size"),
    ]

    /// The history settings, or nil when `--history.dir` is not given.
    static func config(_ flags: ParsedFlags) throws(UsageError) -> HistoryConfig? {
        guard let dir = flags.string("history.dir") else { return nil }
        guard !dir.isEmpty else {
            throw UsageError("invalid value \"\" for flag '--history.dir': expected a directory")
        }
        var config = HistoryConfig(directory: dir)
        config.maxFileSize = try size(flags, "history.max-file-size") ?? config.maxFileSize
        config.maxTotalSize = try size(flags, "history.max-total-size") ?? config.maxTotalSize
        config.retention = try flags.duration("history.retention") ?? config.retention
        guard config.maxFileSize >= 4096 else {
            throw UsageError("invalid value for flag '--history.max-file-size': must be at least 4KiB")
        }
        guard config.maxTotalSize >= config.maxFileSize else {
            throw UsageError(
                "invalid value for flag '--history.max-total-size': must be at least --history.max-file-size (\(ByteSizeParser.format(config.maxFileSize)))"
            )
        }
        guard config.retention >= .seconds(3600) else {
            throw UsageError("invalid value for flag '--history.retention': must be at least 1h")
        }
        return config
    }

    private static func size(_ flags: ParsedFlags, _ name: String) throws(UsageError) -> Int? {
        guard let text = flags.string(name) else { return nil }
        do { return try ByteSizeParser.parse(text) } catch {
            throw UsageError("invalid value \(text.debugDescription) for flag '--\(name)': \(error.message)")
        }
    }
}
