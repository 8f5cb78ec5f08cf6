import CShim

/// What `scripts/release` stamped into this build through C defines (CShim): revision, branch
/// and UTC build date; "unknown" for a plain `swift build`.
package enum BuildStamp {
    package static let revision = String(cString: cshim_build_revision())
    package static let branch = String(cString: cshim_build_branch())
    /// `YYYYMMDD-HH:MM:SS` in UTC, as prometheus/common prints it.
    package static let date = String(cString: cshim_build_date())
}
