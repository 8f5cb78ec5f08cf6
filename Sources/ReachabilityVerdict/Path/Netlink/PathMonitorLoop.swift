import CShim
import Glibc

/// The body of the `PathMonitor` thread: reads the netlink socket, keeps the `NetworkModel`
/// current, runs dumps one at a time and publishes after each drain. Confined to its thread.
///
/// Dumps and events share one socket. While a dump of one kind runs, its replies build a
/// staged model; events are applied to both the live and the staged model, so when the dump
/// ends and its component replaces the live one, nothing that happened meanwhile is lost.
/// Nothing is published while dumps are queued or running, so no half-refreshed state leaks.
package final class PathMonitorLoop {
    private struct ActiveDump {
        package var kind: DumpKind
        package var sequence: UInt32
        package var interrupted = false
    }

    private let shared: PathMonitorShared
    private let socket: NetlinkSocket
    private let wakeFD: Int32
    private let sysfs: SysfsReader?
    private var model = NetworkModel()
    private var staged = NetworkModel()
    private var active: ActiveDump?
    private var pending: [DumpKind] = []
    private var sequence: UInt32 = 0
    private var consecutiveDumpFailures = 0
    private var published: PathSnapshot?
    private var changeCount = 0
    /// The initial dump failed and `start()` was told so: the thread ends.
    private var failedToStart = false
    /// Receive errors since the last successful read; the loop gives up past a bound.
    private var consecutiveErrors = 0
    /// A second IPv4 route dump is due then (see `handle`).
    private var secondRouteDump: ContinuousClock.Instant?
    /// How long after an IPv4 address deletion the routes are dumped a second time.
    package static let secondRouteDumpDelay: Duration = .milliseconds(100)
    private var lastError = Errno(ECANCELED)

    /// Enters the namespace, opens the socket, and loops until stopped.
    package static func run(configuration: PathMonitor.Configuration, shared: PathMonitorShared, wakeFD: Int32) {
        defer { shared.finish() }
        if let path = configuration.networkNamespacePath {
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { return shared.reportStarted(.namespaceUnavailable(path: path, .current)) }
            let entered = cshim_setns_net(fd)
            let error = Errno.current
            Glibc.close(fd)
            guard entered == 0 else { return shared.reportStarted(.namespaceUnavailable(path: path, error)) }
        }
        let socket: NetlinkSocket
        do {
            socket = try NetlinkSocket(receiveBufferSize: configuration.receiveBufferSize)
        } catch {
            return shared.reportStarted(.netlinkUnavailable(error))
        }
        let readsSysfs = configuration.readsSysfs && configuration.networkNamespacePath == nil
        let loop = PathMonitorLoop(
            shared: shared, socket: socket, wakeFD: wakeFD,
            sysfs: readsSysfs ? SysfsReader() : nil)
        loop.loop()
    }

    private init(shared: PathMonitorShared, socket: NetlinkSocket, wakeFD: Int32, sysfs: SysfsReader?) {
        self.shared = shared
        self.socket = socket
        self.wakeFD = wakeFD
        self.sysfs = sysfs
    }

    private func loop() {
        queueFullDump()
        while !shared.stopRequested, !failedToStart, consecutiveErrors < Self.maximumConsecutiveErrors {
            if active == nil, !pending.isEmpty {
                startNextDump()
                continue
            }
            if active == nil { publishIfChanged() }
            var fds = [
                pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0),
                pollfd(fd: shared.paused ? -1 : socket.fd, events: Int16(POLLIN), revents: 0),
            ]
            var timeout: Int32 = -1
            let wakeAt = [secondRouteDump, model.nextAnnouncementExpiry].compactMap { $0 }.min()
            if let due = wakeAt {
                let left = ContinuousClock.now.duration(to: due)
                timeout =
                    left <= .zero
                    ? 0
                    : Int32(
                        min(
                            left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1,
                            60_000))
            }
            let n = poll(&fds, 2, timeout)
            if n < 0 && errno != EINTR { break }
            if let due = secondRouteDump, ContinuousClock.now >= due {
                secondRouteDump = nil
                queue(.ipv4Routes)
            }
            if fds[0].revents != 0 {
                var count: UInt64 = 0
                _ = read(wakeFD, &count, 8)
                for (options, index) in shared.takeInjected() {
                    model.learn(options, interfaceIndex: index, now: .now)
                }
            }
            model.expireAnnouncements(now: .now)
            if fds[1].revents != 0 { drain() }
        }
        // Stopped or broken before the first snapshot: `start()` must not wait for its timeout.
        if published == nil, !failedToStart { shared.reportStarted(.initialDumpFailed(lastError)) }
    }

    /// A socket that fails this many reads in a row (never seen in practice) is beyond repair:
    /// the thread ends and the streams finish rather than spin.
    package static let maximumConsecutiveErrors = 64

    /// Reads until the socket is empty (at most 512 datagrams, so a flood still publishes).
    private func drain() {
        for _ in 0..<512 {
            let received: NetlinkSocket.Received
            do {
                received = try socket.receive()
                consecutiveErrors = 0
            } catch {
                // Unknown socket error: what we hold may be stale, so re-dump.
                lastError = error
                consecutiveErrors += 1
                shared.lostEvents.add(1, ordering: .relaxed)
                queueFullDump()
                return
            }
            switch received {
            case .empty:
                return
            case .lost:
                shared.lostEvents.add(1, ordering: .relaxed)
                queueFullDump()
            case .messages(let messages):
                shared.messages.add(messages.count, ordering: .relaxed)
                for message in messages { handle(message) }
            }
        }
    }

    private func handle(_ message: NetlinkMessage) {
        if let dump = active, message.header.portID == socket.portID,
            message.header.sequence == dump.sequence
        {
            handleDumpReply(message, dump)
            return
        }
        if case .ndUserOption(let m) = message.payload {
            // Router Advertisements only (the kernel sends nothing else today).
            if m.icmpType == 134 {
                model.learn(RouterAdvertisementOptions(m.options), interfaceIndex: m.interfaceIndex, now: .now)
            }
            return
        }
        let followUp = model.apply(message, classify: classify)
        if active != nil { staged.apply(message, classify: classify) }
        if followUp.contains(.refreshIPv4Routes) {
            queue(.ipv4Routes)
            // The kernel sends RTM_DELADDR before it has flushed the address's routes, and a
            // route dump does not wait for that flush: a dump right away can still see a route
            // that is about to go. A second dump shortly after catches what the first missed.
            secondRouteDump = ContinuousClock.now.advanced(by: Self.secondRouteDumpDelay)
        }
    }

    private func handleDumpReply(_ message: NetlinkMessage, _ dump: ActiveDump) {
        if message.header.flags & RTNL.flagDumpInterrupted != 0 { active?.interrupted = true }
        switch message.payload {
        case .done:
            active = nil
            if dump.interrupted {
                pending.insert(dump.kind, at: 0)  // the kernel says the dump was inconsistent
            } else {
                model.replace(dump.kind, from: staged)
                consecutiveDumpFailures = 0
                shared.dumps.add(1, ordering: .relaxed)
            }
        case .error(let code):
            active = nil
            dumpFailed(dump.kind, Errno(code))
        default:
            staged.apply(message, classify: classify)
        }
    }

    private func startNextDump() {
        let kind = pending.removeFirst()
        sequence &+= 1
        if sequence == 0 { sequence = 1 }
        staged = NetworkModel()
        do {
            try socket.requestDump(kind, sequence: sequence)
            active = ActiveDump(kind: kind, sequence: sequence)
        } catch {
            dumpFailed(kind, error)
        }
    }

    /// Before the first snapshot a failed dump fails `start()`; later it is retried a few times,
    /// then the component keeps its last known state until the next full re-dump.
    private func dumpFailed(_ kind: DumpKind, _ error: Errno) {
        if published == nil {
            failedToStart = true
            shared.reportStarted(.initialDumpFailed(error))
            return
        }
        consecutiveDumpFailures += 1
        if consecutiveDumpFailures <= 3 { queue(kind) }
    }

    private func queue(_ kind: DumpKind) {
        if !pending.contains(kind) { pending.append(kind) }
    }

    private func queueFullDump() {
        for kind in DumpKind.allCases { queue(kind) }
    }

    private func publishIfChanged() {
        let snapshot = model.snapshot(changeCount: changeCount)
        guard let previous = published else {
            published = snapshot
            shared.broadcaster.publish(snapshot)
            shared.reportStarted(nil)
            return
        }
        guard !snapshot.hasSameState(as: previous) else { return }
        changeCount += 1
        var next = snapshot
        next.changeCount = changeCount
        published = next
        shared.broadcaster.publish(next)
    }

    private func classify(name: String, kind: String?, hardwareType: UInt16, index: Int32) -> InterfaceType {
        InterfaceClassifier.classify(
            name: name, kind: kind, hardwareType: hardwareType,
            sysfs: sysfs?.facts(name: name, index: index))
    }
}
