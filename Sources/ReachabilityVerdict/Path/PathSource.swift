import Synchronization

/// Something that knows the host's network path and announces its changes: the real
/// `PathMonitor`, or `FakePathSource` in tests. The scheduler consumes this role.
///
/// Contract for conforming types: `current` is synchronous and safe from any thread; every
/// `updates()` call returns a new, independent stream (any number of subscribers) that first
/// yields the current snapshot and then each published change, keeping only the newest unread
/// element for a slow consumer; streams finish when the source stops. `PathBroadcaster`
/// implements all of that.
package protocol PathSource: Sendable {
    /// The latest published snapshot.
    var current: PathSnapshot { get }
    /// A new stream of snapshots for one subscriber.
    func updates() -> AsyncStream<PathSnapshot>
}

/// The path monitor's broadcaster: snapshots, starting from `.empty`.
package typealias PathBroadcaster = Broadcaster<PathSnapshot>

extension Broadcaster where Value == PathSnapshot {
    package convenience init(initial: PathSnapshot = .empty) { self.init(latest: initial) }
    /// The latest published snapshot.
    package var current: PathSnapshot { latest ?? .empty }
}
