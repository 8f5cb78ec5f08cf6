/// What was built, for `--version` and `reachability_exporter_build_info`.
///
/// `version` is the one source of the version: the Debian package, its man page, the tarball and
/// the image all read it from the built binary's `--version`. Revision, branch and build date are
/// stamped in by `scripts/release` (C defines read by `BuildStamp`); a plain `swift build` says "unknown".
package enum BuildInfo {
    package static let version = "1.0.0"
    package static let revision = BuildStamp.revision
    package static let branch = BuildStamp.branch
    /// `YYYYMMDD-HH:MM:SS` in UTC, as prometheus/common prints it.
    package static let buildDate = BuildStamp.date
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
    /// The operating system, spelled as Go's GOOS (`build_info`'s `os`, client_golang's `goos`).
    package static let os = "linux"
    /// The CPU architecture, spelled as Go's GOARCH (`build_info`'s `arch`, client_golang's `goarch`).
    package static var arch: String {
        #if arch(x86_64)
            "amd64"
        #elseif arch(arm64)
            "arm64"
        #else
            "unknown"
        #endif
    }
    /// GOOS/GOARCH spelling, as the Prometheus ecosystem names platforms.
    package static var platform: String { "\(os)/\(arch)" }

    /// `--version`, laid out as prometheus/common's `version.Print` does.
    package static var versionText: String {
        """
        reachability_exporter, version \(version) (branch: \(branch), revision: \(revision))
          build date:       \(buildDate)
          swift version:    \(swiftVersion)
          platform:         \(platform)

        """
    }
}
