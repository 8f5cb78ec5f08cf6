import ReachabilityVerdict

/// Where and how the history is kept (`--history.*` flags).
package struct HistoryConfig: Sendable, Equatable {
    package var directory: String
    /// A file is rotated before a record would take it past this size.
    package var maxFileSize: Int = 64 << 20
    /// The oldest rotated files are deleted while all files together exceed this.
    package var maxTotalSize: Int = 1 << 30
    /// Rotated files whose newest record is older than this are deleted (on start and rotation).
    package var retention: Duration = .seconds(30 * 86_400)
    /// A new file starts when the clock enters a new period of this length (aligned to the Unix
    /// epoch, so daily files begin at 00:00 UTC).
    package var rotationPeriod: Duration = .seconds(86_400)
    /// Rounds are made durable (`fdatasync`) at least this often; transitions, start and stop at once.
    package var syncInterval: Duration = .seconds(10)
    /// Records waiting for the writer thread; beyond this they are dropped and counted.
    package var queueCapacity = 4096

    package init(directory: String) { self.directory = directory }
}
