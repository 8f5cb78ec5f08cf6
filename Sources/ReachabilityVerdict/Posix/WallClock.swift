import Glibc

/// The real-time clock (CLOCK_REALTIME), for values that must differ across process restarts
/// (cache-busting query values). Not for measuring durations: use `ContinuousClock`.
package enum WallClock {
    /// Nanoseconds since the Unix epoch.
    package static func nanosecondsSinceEpoch() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(max(0, ts.tv_sec)) &* 1_000_000_000 &+ UInt64(max(0, ts.tv_nsec))
    }
}

/// Wall-clock Unix seconds (CLOCK_REALTIME), for timestamps people and Prometheus read.
package func unixNow() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
