import ReachabilityVerdict

/// Turns a probe of the configuration file into the scheduler's `ProbeSpec`. The kind's
/// configuration was decoded (and so validated) when the file was loaded: a bad URL, DNS name or
/// CA file is a `ConfigError` at load time, pointing at the key, never a probe-time failure.
package enum ConfigProbeBuilder {
    /// The spec of `d`: its configuration placed by its entry, with its constant labels.
    package static func spec(_ d: ProbeDefinition, file: String) throws(ConfigError) -> ProbeSpec {
        var spec = d.configuration.spec(d.entry.placement)
        spec.labels = d.labels
        return spec
    }
}
