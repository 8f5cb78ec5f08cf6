import Glibc

/// The real-time clock (CLOCK_REALTIME), for values that must differ across process restarts
/// (cache-busting query values). Not for measuring durations: use `ContinuousClock`.
enum WallClock {
    /// Nanoseconds since the Unix epoch.
    static func nanosecondsSinceEpoch() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(max(0, ts.tv_sec)) &* 1_000_000_000 &+ UInt64(max(0, ts.tv_nsec))
    }
}
