import Dispatch
import Synchronization

/// Why `PathMonitor.start()` failed.
package enum PathMonitorError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The netlink socket could not be opened or bound (no `AF_NETLINK` in this sandbox?).
    case netlinkUnavailable(Errno)
    /// The configured network namespace could not be opened or entered (needs CAP_SYS_ADMIN).
    case namespaceUnavailable(path: String, Errno)
    /// The kernel refused the initial dump of links, addresses or routes.
    case initialDumpFailed(Errno)
    /// The initial dump did not finish within `Configuration.startTimeout`.
    case startTimedOut
    /// The process is out of descriptors (the wake-up `eventfd` could not be created).
    case outOfDescriptors(Errno)

    package var description: String {
        switch self {
        case .netlinkUnavailable(let e): "path monitor: cannot open a NETLINK_ROUTE socket: \(e)"
        case .namespaceUnavailable(let path, let e): "path monitor: cannot enter network namespace \(path): \(e)"
        case .initialDumpFailed(let e): "path monitor: initial netlink dump failed: \(e)"
        case .startTimedOut: "path monitor: initial netlink dump did not finish in time"
        case .outOfDescriptors(let e): "path monitor: cannot create an eventfd: \(e)"
        }
    }
}

/// The Linux counterpart of Apple's `NWPathMonitor`: watches links, addresses and default
/// routes over rtnetlink and publishes a `PathSnapshot` whenever they change.
///
/// One dedicated thread (`startThread`) owns an `AF_NETLINK`/`NETLINK_ROUTE` socket subscribed
/// to link, IPv4/IPv6 address and IPv4/IPv6 route groups (1 MB receive buffer). `start()` dumps
/// links, addresses and routes and returns once the first snapshot is current. Events are
/// applied as they arrive and published once the socket is drained, so a burst becomes one
/// snapshot (changes only; `changeCount` counts them). When the kernel reports lost events
/// (`ENOBUFS`), the monitor dumps everything again; after an IPv4 address deletion it re-dumps
/// IPv4 routes, at once and again 100 ms later, because the kernel removes such routes without
/// telling (and may not have removed them yet when the deletion is announced).
///
/// **Namespaces:** netlink is per network namespace. The monitor watches the namespace its
/// thread runs in: the namespace of the thread that calls `start()`, or the one at
/// `Configuration.networkNamespacePath`, which the monitor thread enters with `setns(2)`
/// before opening its socket. sysfs cannot follow `setns`, so in that case the interface
/// types come from link kinds and ARPHRD types alone.
///
/// Contract: `start()` once; `stop()` any time (idempotent), it ends every update stream.
/// Streams also end if the socket fails persistently (64 read errors in a row; never seen).
/// `current` and `updates()` are thread-safe. Not for: probing; a satisfied path only means
/// the host could send packets toward the internet.
package final class PathMonitor: PathSource {
    /// How to run the monitor.
    package struct Configuration: Sendable {
        /// Requested socket receive buffer in bytes; bigger survives larger bursts.
        package var receiveBufferSize: Int = 1 << 20
        /// A network namespace file to watch instead of the caller's (e.g. `/run/netns/x`).
        package var networkNamespacePath: String?
        /// Read `/sys/class/net` to classify interfaces (ignored inside another namespace).
        package var readsSysfs: Bool = true
        /// How long `start()` waits for the initial dump.
        package var startTimeout: Duration = .seconds(5)

        package init(
            receiveBufferSize: Int = 1 << 20, networkNamespacePath: String? = nil,
            readsSysfs: Bool = true, startTimeout: Duration = .seconds(5)
        ) {
            self.receiveBufferSize = receiveBufferSize
            self.networkNamespacePath = networkNamespacePath
            self.readsSysfs = readsSysfs
            self.startTimeout = startTimeout
        }
    }

    /// Counters about the monitor itself (for logs or self-metrics).
    package struct Statistics: Sendable, Equatable {
        /// Netlink messages decoded (dumps and events).
        package var messages: Int
        /// Dumps completed (four for the initial state).
        package var dumps: Int
        /// Times the kernel reported lost events and a full re-dump was queued.
        package var lostEvents: Int
    }

    package let configuration: Configuration
    package let shared: PathMonitorShared

    package init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        shared = PathMonitorShared()
    }

    deinit { shared.requestStop() }

    package var current: PathSnapshot { shared.broadcaster.current }
    package func updates() -> AsyncStream<PathSnapshot> { shared.broadcaster.updates() }
    package var statistics: Statistics { shared.statistics }

    /// Opens the socket (inside the configured namespace), dumps the current state and starts
    /// following changes. Blocks the caller for the initial dump (about a millisecond).
    /// Calling it twice is a programmer error.
    package func start() throws(PathMonitorError) {
        let wakeFD: Int32
        do throws(Errno) { wakeFD = try EventFD.make() } catch { throw .outOfDescriptors(error) }
        precondition(shared.begin(wakeFD: wakeFD), "PathMonitor.start() called twice")
        let configuration = self.configuration
        let shared = self.shared
        startThread(name: "path-monitor") {
            PathMonitorLoop.run(configuration: configuration, shared: shared, wakeFD: wakeFD)
        }
        let seconds =
            Double(configuration.startTimeout.components.seconds)
            + Double(configuration.startTimeout.components.attoseconds) / 1e18
        guard shared.started.wait(timeout: .now() + seconds) == .success else {
            shared.requestStop()
            throw .startTimedOut
        }
        if let failure = shared.startFailure {
            throw failure
        }
    }

    /// Stops the thread, closes the socket and finishes every update stream.
    package func stop() { shared.requestStop() }

    /// Takes in a Router Advertisement read elsewhere (a raw socket after a solicitation) as if
    /// the kernel had passed its options: they show in the next snapshot.
    package func learn(_ options: RouterAdvertisementOptions, interfaceIndex: Int32) {
        shared.inject(options, interfaceIndex: interfaceIndex)
    }

    /// Test seam: while paused the thread does not read the socket, so events pile up in the
    /// kernel (used to provoke `ENOBUFS`).
    package func setReadingPaused(_ paused: Bool) { shared.setPaused(paused) }
}

/// State shared between a `PathMonitor` and its thread; all of it behind locks or atomics.
package final class PathMonitorShared: Sendable {
    package struct Control {
        package var wakeFD: Int32 = -1
        package var began = false
        package var stopRequested = false
        package var paused = false
        /// Router Advertisements read elsewhere (`PathMonitor.learn`), for the thread to apply.
        package var injected: [(RouterAdvertisementOptions, Int32)] = []
    }

    package let broadcaster = PathBroadcaster()
    package let started = DispatchSemaphore(value: 0)
    private let control = Mutex(Control())
    private let failure = Mutex<PathMonitorError?>(nil)
    package let messages = Atomic<Int>(0)
    package let dumps = Atomic<Int>(0)
    package let lostEvents = Atomic<Int>(0)

    package var statistics: PathMonitor.Statistics {
        .init(
            messages: messages.load(ordering: .relaxed), dumps: dumps.load(ordering: .relaxed),
            lostEvents: lostEvents.load(ordering: .relaxed))
    }

    package var startFailure: PathMonitorError? { failure.withLock { $0 } }
    package var stopRequested: Bool { control.withLock { $0.stopRequested } }
    package var paused: Bool { control.withLock { $0.paused } }

    package func begin(wakeFD: Int32) -> Bool {
        control.withLock { c in
            guard !c.began else { return false }
            c.began = true
            c.wakeFD = wakeFD
            return true
        }
    }

    /// Called by the thread once: either the first snapshot is published or start failed.
    package func reportStarted(_ error: PathMonitorError?) {
        failure.withLock { $0 = error }
        started.signal()
    }

    package func requestStop() {
        control.withLock { c in
            c.stopRequested = true
            wake(c.wakeFD)
        }
    }

    package func inject(_ options: RouterAdvertisementOptions, interfaceIndex: Int32) {
        control.withLock { c in
            guard c.injected.count < 64 else { return }
            c.injected.append((options, interfaceIndex))
            wake(c.wakeFD)
        }
    }

    /// The injected advertisements, emptied.
    package func takeInjected() -> [(RouterAdvertisementOptions, Int32)] {
        control.withLock { c in
            defer { c.injected = [] }
            return c.injected
        }
    }

    package func setPaused(_ paused: Bool) {
        control.withLock { c in
            c.paused = paused
            wake(c.wakeFD)
        }
    }

    /// Called by the thread as it exits: closes the wake descriptor under the lock so no
    /// `requestStop` can write to a closed (or reused) descriptor, then ends the streams.
    package func finish() {
        control.withLock { c in
            if c.wakeFD >= 0 { EventFD.close(c.wakeFD) }
            c.wakeFD = -1
        }
        broadcaster.finish()
    }

    private func wake(_ fd: Int32) {
        guard fd >= 0 else { return }
        EventFD.signal(fd)
    }
}
