/// Runs at most one render at a time and shares its result with every caller that arrived
/// before it started ("single flight"). A caller never gets a result older than its own arrival:
/// one that arrives while a render is running waits for the next one, which it shares with
/// everyone else who arrived meanwhile.
///
/// Why: each scrape runs on its own connection thread. Rendering 26k series costs ~5 ms of CPU;
/// sixty-four clients scraping at once would otherwise take both cores of a small box and starve
/// the probe scheduler. Coalesced, rendering uses at most one core however many scrape, and
/// concurrent scrapers get more answers per second, not fewer.
///
/// Callers are OS threads (the HTTP server's connection threads), so waiting blocks on a
/// condition variable. From the cooperative pool it is safe (a render never awaits) but blocks a
/// pool thread while another caller's render finishes.
final class RenderCoalescer: @unchecked Sendable {  // all mutable state below is guarded by `lock`
    private let lock = ConditionLock()
    /// How many renders have started, and the number of the newest one finished.
    private var started = 0
    private var finished = 0
    private var running = false
    private var latest: [UInt8] = []
    private var renders = 0

    /// The output of a `render` call that started after this call began: this caller's own, or
    /// one it shares with callers that arrived while it waited.
    func value(_ render: () -> [UInt8]) -> [UInt8] {
        lock.lock()
        defer { lock.unlock() }
        // Any render numbered above `started` begins after our arrival.
        let needed = started + 1
        while finished < needed {
            if running {
                lock.wait()
                continue
            }
            running = true
            started += 1
            let number = started
            lock.unlock()
            let bytes = render()
            lock.lock()
            latest = bytes
            finished = number
            renders += 1
            running = false
            lock.broadcast()
        }
        return latest
    }

    /// The number of renders run so far.
    var renderCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return renders
    }
}
