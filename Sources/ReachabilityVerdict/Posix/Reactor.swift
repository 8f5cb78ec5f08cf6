import CShim
import Glibc
import Synchronization

/// What a wait on a descriptor came back with.
package enum Readiness: Sendable, Equatable {
    /// The descriptor is ready; `events` are the raw epoll bits (EPOLLIN, EPOLLOUT, EPOLLERR, EPOLLHUP…).
    case ready(events: UInt32)
    case timedOut
    case cancelled
}

/// One epoll loop on a dedicated thread that lets async code wait for a non-blocking descriptor
/// to become readable or writable, with a deadline, without parking the cooperative thread pool.
///
/// Contract: at most one wait per descriptor at a time; a descriptor must not be closed while a
/// wait on it is pending (close it after the wait returns). Waits are one-shot.
/// Not for: the HTTP server (it has its own threads) or blocking calls such as `getaddrinfo`.
package final class Reactor: Sendable {
    /// The process-wide reactor, started on first use.
    package static let shared = Reactor()

    private struct Waiter {
        package let fd: Int32
        package let deadline: ContinuousClock.Instant
        package let continuation: CheckedContinuation<Readiness, Never>
    }

    private struct State {
        package var nextID: UInt64 = 1
        package var waiters: [UInt64: Waiter] = [:]
        package var timers = DeadlineHeap()
    }

    private let epollFD: Int32
    private let wakeFD: Int32
    private let state = Mutex(State())

    package init() {
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        precondition(epollFD >= 0, "epoll_create1 failed: \(Errno.current)")
        wakeFD = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        precondition(wakeFD >= 0, "eventfd failed: \(Errno.current)")
        var ev = epoll_event()
        ev.events = EPOLLIN.rawValue
        ev.data.u64 = 0
        epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, &ev)
        let thread = startThread(name: "reactor") { [self] in self.loop() }
        _ = thread
    }

    /// Waits until `fd` is readable (or has an error/hang-up), the deadline passes, or the task is cancelled.
    package func waitReadable(_ fd: Int32, deadline: ContinuousClock.Instant) async -> Readiness {
        await wait(fd, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue, deadline: deadline)
    }

    /// Waits until `fd` is writable (a non-blocking connect finished), the deadline passes, or the task is cancelled.
    package func waitWritable(_ fd: Int32, deadline: ContinuousClock.Instant) async -> Readiness {
        await wait(fd, events: EPOLLOUT.rawValue, deadline: deadline)
    }

    /// Sleeps until the deadline on the reactor's timer (cheaper than a task sleep for many short waits).
    package func sleep(until deadline: ContinuousClock.Instant) async {
        _ = await wait(-1, events: 0, deadline: deadline)
    }

    private func wait(_ fd: Int32, events: UInt32, deadline: ContinuousClock.Instant) async -> Readiness {
        let idBox = Mutex<UInt64>(0)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Readiness, Never>) in
                if Task.isCancelled {
                    continuation.resume(returning: .cancelled)
                    return
                }
                let (id, earliest): (UInt64, Bool) = state.withLock { s in
                    let id = s.nextID
                    s.nextID += 1
                    s.waiters[id] = Waiter(fd: fd, deadline: deadline, continuation: continuation)
                    let earliest = s.timers.peek.map { deadline < $0 } ?? true
                    s.timers.push(deadline, id)
                    return (id, earliest)
                }
                idBox.withLock { $0 = id }
                if fd >= 0 {
                    var ev = epoll_event()
                    ev.events = events | EPOLLONESHOT.rawValue
                    ev.data.u64 = id
                    if epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, &ev) != 0 {
                        if epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &ev) != 0 {
                            // Not pollable (or closed): report it as an error event at once.
                            finish(id, with: .ready(events: EPOLLERR.rawValue))
                            return
                        }
                    }
                }
                // The loop must recompute its epoll timeout only when this deadline comes first;
                // a descriptor added to the epoll set is seen by a running epoll_wait as it is.
                // (At 1,000 probes a second this saves a thread wake-up per wait.)
                if earliest { wake() }
            }
        } onCancel: {
            let id = idBox.withLock { $0 }
            if id != 0 { finish(id, with: .cancelled) }
        }
    }

    private func finish(_ id: UInt64, with result: Readiness) {
        guard let waiter = state.withLock({ $0.waiters.removeValue(forKey: id) }) else { return }
        if case .ready = result {
        } else if waiter.fd >= 0 {
            // Disarm so a late event cannot fire for a descriptor the caller is about to close.
            epoll_ctl(epollFD, EPOLL_CTL_DEL, waiter.fd, nil)
        }
        waiter.continuation.resume(returning: result)
    }

    private func wake() {
        var one: UInt64 = 1
        _ = Glibc.write(wakeFD, &one, 8)
    }

    private func loop() {
        var events = [epoll_event](repeating: epoll_event(), count: 256)
        let clock = ContinuousClock()
        while true {
            let next = state.withLock { $0.timers.peek }
            var timeoutMS: Int32 = 1000
            if let next {
                let ms = clock.now.duration(to: next).milliseconds
                timeoutMS = Int32(max(0, min(ms + 1, 1000)))
            }
            let n = epoll_wait(epollFD, &events, Int32(events.count), timeoutMS)
            if n > 0 {
                for i in 0..<Int(n) {
                    let id = events[i].data.u64
                    if id == 0 {
                        var buf: UInt64 = 0
                        _ = Glibc.read(wakeFD, &buf, 8)
                        continue
                    }
                    finish(id, with: .ready(events: events[i].events))
                }
            }
            let now = clock.now
            while true {
                let expired: UInt64? = state.withLock { s in
                    while let (deadline, id) = s.timers.peekEntry, deadline <= now {
                        s.timers.pop()
                        if s.waiters[id] != nil { return id }
                    }
                    return nil
                }
                guard let expired else { break }
                finish(expired, with: .timedOut)
            }
            // Drop timers of waiters that already finished so the heap does not grow.
            state.withLock { s in
                while let (_, id) = s.timers.peekEntry, s.waiters[id] == nil { s.timers.pop() }
            }
        }
    }
}

/// A binary min-heap of (deadline, waiter id).
package struct DeadlineHeap {
    private var items: [(ContinuousClock.Instant, UInt64)] = []

    package var peek: ContinuousClock.Instant? { items.first?.0 }
    package var peekEntry: (ContinuousClock.Instant, UInt64)? { items.first }
    package var count: Int { items.count }

    package mutating func push(_ deadline: ContinuousClock.Instant, _ id: UInt64) {
        items.append((deadline, id))
        var i = items.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            if items[parent].0 <= items[i].0 { break }
            items.swapAt(parent, i)
            i = parent
        }
    }

    package mutating func pop() {
        guard !items.isEmpty else { return }
        items.swapAt(0, items.count - 1)
        items.removeLast()
        var i = 0
        while true {
            let l = 2 * i + 1
            let r = l + 1
            var smallest = i
            if l < items.count, items[l].0 < items[smallest].0 { smallest = l }
            if r < items.count, items[r].0 < items[smallest].0 { smallest = r }
            if smallest == i { break }
            items.swapAt(i, smallest)
            i = smallest
        }
    }
}

extension Duration {
    /// Whole milliseconds, rounded down (negative durations give negative values).
    package var milliseconds: Int64 {
        let (s, atto) = components
        return s * 1000 + atto / 1_000_000_000_000_000
    }

    /// The duration in seconds as a Double.
    package var seconds: Double {
        let (s, atto) = components
        return Double(s) + Double(atto) / 1e18
    }
}
