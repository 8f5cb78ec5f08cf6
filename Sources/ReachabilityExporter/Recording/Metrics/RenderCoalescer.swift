import ReachabilityVerdict
import Synchronization

/// Runs at most one render at a time and shares its result with every caller that arrived
/// before it started ("single flight"). A caller never gets a result older than its own arrival:
/// one that arrives while a render is running waits for the next one, which it shares with
/// everyone else who arrived meanwhile.
///
/// Why: rendering 26k series costs ~5 ms of CPU; sixty-four clients scraping at once would
/// otherwise take both cores of a small box and starve the probe scheduler. Coalesced, rendering
/// uses at most one core however many scrape, and concurrent scrapers get more answers per
/// second, not fewer.
///
/// Waiting is asynchronous (#33): a caller that waits for another's render suspends and holds
/// no thread. The render runs on the thread of the caller that starts it; when it ends, the
/// callers it satisfies resume with its bytes, and the first of those that arrived during it
/// (and so need a newer render) is resumed to run the next one.
final class RenderCoalescer: Sendable {
    /// One render's bytes and its serial, unique in the process: callers given the same serial
    /// got the same bytes (the web server compresses them once).
    typealias Rendered = (serial: UInt64, bytes: [UInt8])

    private static let serials = Atomic<UInt64>(0)

    private enum Turn {
        case done(Rendered)
        case renderNext
    }

    private struct Waiter {
        /// The first render number this caller may take.
        let needs: Int
        let continuation: CheckedContinuation<Turn, Never>
    }

    private struct State {
        /// How many renders have started.
        var started = 0
        var running = false
        var renders = 0
        var waiters: [Waiter] = []
    }

    private let state = Mutex(State())

    /// The output of a `render` call that started after this call began: this caller's own, or
    /// one it shares with callers that arrived while it waited. Nothing is kept between renders
    /// (at 10,000 targets a render is tens of megabytes).
    func value(_ render: () -> [UInt8]) async -> Rendered {
        let turn: Turn = await withCheckedContinuation { continuation in
            // One decision under the lock: a waiter is resumed exactly once, by the render that
            // satisfies it or hands it the next one. Any render numbered above `started` now
            // begins after this arrival.
            let now: Turn? = state.withLock { s in
                if s.running {
                    s.waiters.append(Waiter(needs: s.started + 1, continuation: continuation))
                    return nil
                }
                s.running = true
                return .renderNext
            }
            if let now { continuation.resume(returning: now) }
        }
        switch turn {
        case .done(let rendered): return rendered
        case .renderNext: return renderAndHandOver(render)
        }
    }

    /// Runs one render (`running` is already set for this caller), then resumes the waiters it
    /// satisfies and hands the next render to the first that needs a newer one.
    private func renderAndHandOver(_ render: () -> [UInt8]) -> Rendered {
        let number = state.withLock { s in
            s.started += 1
            return s.started
        }
        let bytes = render()
        let rendered = (Self.serials.add(1, ordering: .relaxed).newValue, bytes)
        let (satisfied, next) = state.withLock { s in
            s.renders += 1
            let satisfied = s.waiters.filter { $0.needs <= number }
            s.waiters.removeAll { $0.needs <= number }
            var next: Waiter?
            if !s.waiters.isEmpty {
                next = s.waiters.removeFirst()
            } else {
                s.running = false
            }
            return (satisfied, next)
        }
        for waiter in satisfied { waiter.continuation.resume(returning: .done(rendered)) }
        next?.continuation.resume(returning: .renderNext)
        return rendered
    }

    /// Callers suspended until a render finishes.
    var waitingCount: Int { state.withLock { $0.waiters.count } }

    /// The number of renders run so far.
    var renderCount: Int { state.withLock { $0.renders } }
}
