// Rewritten by scripts/stamp-revision during release and container builds.
enum BuildRevision { static let value = "unknown" }
