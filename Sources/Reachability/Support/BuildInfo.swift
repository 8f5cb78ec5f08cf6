/// What was built: version, source revision and compiler, for `--version` and
/// `reachability_exporter_build_info`.
package enum BuildInfo {
    package static let version = "0.1.0"
    /// Set by `scripts/stamp-revision` for release builds; "unknown" in a plain checkout build.
    package static let revision = BuildRevision.value
    package static var swiftVersion: String {
        #if compiler(>=6.4)
            "6.4+"
        #elseif compiler(>=6.3)
            "6.3"
        #elseif compiler(>=6.2)
            "6.2"
        #else
            "6.x"
        #endif
    }
}
