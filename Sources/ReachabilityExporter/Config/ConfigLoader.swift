import ReachabilityVerdict

/// Reads, parses and checks the configuration file: the one entry point for `--config.file`,
/// `check-config` and reloads. Every failure is a `ConfigError` for a person.
package enum ConfigLoader {
    /// Configuration files are small; anything larger is a mistake (a log file, a binary).
    package static let maximumSize = 1 << 20

    package static func load(path: String) throws(ConfigError) -> ExporterConfig {
        try loadWithDigest(path: path).config
    }

    /// `load`, with the SHA-256 of the bytes it read (what `--config.auto-reload-interval`
    /// compares the file against).
    package static func loadWithDigest(path: String) throws(ConfigError) -> (config: ExporterConfig, digest: [UInt8]) {
        let bytes: [UInt8]
        do throws(Errno) { bytes = try FileContents.read(path, limit: maximumSize) } catch {
            let found = FileContents.describe(error, limit: maximumSize)
            throw ConfigError(file: path, mark: nil, path: "", expected: "a readable configuration file", found: found)
        }
        return (try parse(bytes, file: path), PasswordHash.sha256(bytes))
    }

    /// Parses a file's content; `file` only names it in errors.
    package static func parse(_ bytes: [UInt8], file: String) throws(ConfigError) -> ExporterConfig {
        try ConfigSchema.decode(YAMLParser.parse(bytes, file: file), file: file)
    }

    package static func parse(_ text: String, file: String) throws(ConfigError) -> ExporterConfig {
        try parse(Array(text.utf8), file: file)
    }
}
