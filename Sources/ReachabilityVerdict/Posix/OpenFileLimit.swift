import Glibc

/// The process's open-file limit. Like Go programs since 1.19, the exporter raises its soft
/// limit to the hard one at start: systemd's default soft limit (1,024) is below what
/// `--web.max-connections` (1,024 by default) plus the probes' sockets need.
package enum OpenFileLimit {
    /// Raises the soft limit to the hard one (capped at `cap`); the soft limit in force after.
    @discardableResult
    package static func raise(cap: UInt64 = 1 << 20) -> UInt64 {
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return 0 }
        let wanted = min(UInt64(limit.rlim_max), cap)
        if UInt64(limit.rlim_cur) < wanted {
            var raised = limit
            raised.rlim_cur = rlim_t(wanted)
            if setrlimit(resource, &raised) == 0 { return wanted }
        }
        return UInt64(limit.rlim_cur)
    }

    private static var resource: __rlimit_resource_t { __rlimit_resource_t(RLIMIT_NOFILE.rawValue) }
}
