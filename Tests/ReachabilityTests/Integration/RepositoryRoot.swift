import Foundation

/// The checkout's root (README.md, fuzz/, Examples/, deploy/), found from this file's path.
enum RepositoryRoot {
    static let url = URL(fileURLWithPath: #filePath)  // Tests/ReachabilityTests/Integration/RepositoryRoot.swift
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
}
