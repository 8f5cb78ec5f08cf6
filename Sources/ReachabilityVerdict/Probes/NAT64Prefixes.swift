import Synchronization

/// The NAT64 prefixes of the network this host is on: those its routers announce (RFC 8781
/// PREF64, in Router Advertisements) when there are any; else discovered as hosts do (RFC 7050: the
/// AAAA answers for `ipv4only.arpa`) when a DNS answer first needs them (a unique-local AAAA
/// answer), and again at most every `refreshInterval`: nothing is asked on a network without
/// unique-local answers. The question goes where the answer that needed it came from: the
/// system resolver, or the probe's own server (a DNS64 synthesizes for its clients). Shared by
/// every DNS probe of a monitor (its rounds' tasks carry it as `round`).
package final class NAT64Prefixes: Sendable {
    /// The table of the monitor whose round runs the current task; nil outside a round.
    @TaskLocal package static var round: NAT64Prefixes?
    /// How long a discovery holds (a network change shows within this).
    package static let refreshInterval = Duration.seconds(300)

    private let state = Mutex<(prefixes: [NAT64Prefix], checked: ContinuousClock.Instant?)>(([], nil))
    /// What the routers announce now (RFC 8781 PREF64): used before any discovery.
    private let announcedPrefixes = Mutex<[NAT64Prefix]>([])

    package init() {}

    /// The prefixes the routers announce (PREF64), else those found by the last discovery
    /// (empty: none, or not asked yet).
    package var current: [NAT64Prefix] {
        let announced = announcedPrefixes.withLock { $0 }
        return announced.isEmpty ? state.withLock { $0.prefixes } : announced
    }

    /// Sets what the routers announce now (each round, from the path's Router Advertisements).
    package func announce(_ prefixes: [NAT64Prefix]) {
        var unique: [NAT64Prefix] = []
        for p in prefixes where !unique.contains(p) { unique.append(p) }
        announcedPrefixes.withLock { $0 = unique }
    }

    /// Sets the prefixes (tests, and a discovery's result).
    package func set(_ prefixes: [NAT64Prefix], at now: ContinuousClock.Instant = .now) {
        state.withLock { $0 = (prefixes, now) }
    }

    /// Discovers again unless a discovery ran within `refreshInterval`; returns the prefixes.
    /// `lookup` answers AAAA for `ipv4only.arpa`: addresses, an empty list for a definite "no
    /// such address" (no DNS64 on this network, which holds for the interval too), or nil when
    /// it failed (a timeout, SERVFAIL): then the prefixes known stay and the next answer that
    /// needs them asks again.
    @discardableResult
    package func refresh(lookup: () async -> [[UInt8]]?) async -> [NAT64Prefix] {
        let announced = announcedPrefixes.withLock { $0 }
        if !announced.isEmpty { return announced }
        let now = ContinuousClock.now
        let fresh = state.withLock { s in s.checked.map { now - $0 < Self.refreshInterval } ?? false }
        if fresh { return current }
        guard let answers = await lookup() else { return current }
        let found = NAT64Prefix.discover(fromAnswers: answers)
        set(found, at: now)
        return found
    }
}
