import Glibc

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
final class RenderCoalescer: @unchecked Sendable {  // all mutable state below is guarded by `mutex`
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let done = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// How many renders have started, and the number of the newest one finished.
    private var started = 0
    private var finished = 0
    private var running = false
    private var latest: [UInt8] = []
    private var renders = 0

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(done, nil)
    }

    deinit {
        pthread_cond_destroy(done)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        done.deallocate()
    }

    /// The output of a `render` call that started after this call began: this caller's own, or
    /// one it shares with callers that arrived while it waited.
    func value(_ render: () -> [UInt8]) -> [UInt8] {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        // Any render numbered above `started` begins after our arrival.
        let needed = started + 1
        while finished < needed {
            if running {
                pthread_cond_wait(done, mutex)
                continue
            }
            running = true
            started += 1
            let number = started
            pthread_mutex_unlock(mutex)
            let bytes = render()
            pthread_mutex_lock(mutex)
            latest = bytes
            finished = number
            renders += 1
            running = false
            pthread_cond_broadcast(done)
        }
        return latest
    }

    /// The number of renders run so far.
    var renderCount: Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return renders
    }
}
