import Synchronization

/// What is known of one interface's captive-portal API after a round: where it was learned,
/// its URI, and the API's last answer or why there is none.
package struct CaptivePortalState: Sendable, Equatable {
    package var interface: String
    package var source: CaptivePortalSource
    /// The URI as announced (checked: `https`, at most 2,048 bytes, no control characters), or
    /// empty when the announced text was refused (then `problem` says why).
    package var api: String
    package var answer: CaptivePortalAnswer?
    package var problem: CaptivePortalProblem?
    /// Unix seconds of the answer.
    package var answeredAt: Double?

    package init(
        interface: String, source: CaptivePortalSource, api: String, answer: CaptivePortalAnswer? = nil,
        problem: CaptivePortalProblem? = nil, answeredAt: Double? = nil
    ) {
        self.interface = interface
        self.source = source
        self.api = api
        self.answer = answer
        self.problem = problem
        self.answeredAt = answeredAt
    }

    /// The network says it holds this host captive.
    package var captive: Bool { answer?.captive ?? false }

    /// The session's seconds left at `now` (the answer's count less the time since), or nil.
    package func secondsRemaining(at now: Double) -> Double? {
        guard let left = answer?.secondsRemaining else { return nil }
        return max(0, left - max(0, now - (answeredAt ?? now)))
    }
}

/// The captive-portal APIs of the interfaces a monitor's scopes use (RFC 8908, announced as RFC
/// 8910 says): each round reads the sources (`CaptivePortalSources`) and fetches the APIs that
/// are due, at once, beside the probes.
///
/// When an API is read again: at once when its URI or source changes; while it says `captive:
/// true`, every round but no more often than `minimumRefetch` (so a login shows within one
/// round); otherwise when its `seconds-remaining` or `Cache-Control: max-age` ends, but at
/// least every `maximumHold` and never more often than `minimumRefetch`; after a failure, in the
/// next round past `minimumRefetch`. A failure forgets the last answer: an API that cannot be
/// read says nothing (the probes decide) and counts in `errors`.
package final class CaptivePortalWatch: Sendable {
    package static let minimumRefetch = Duration.seconds(5)
    package static let maximumHold = Duration.seconds(300)
    /// The longest one fetch may take (less when the probes' timeout is shorter).
    package static let fetchTimeout = Duration.seconds(5)

    private struct Entry {
        package var state: CaptivePortalState
        package var announced: String
        package var next: ContinuousClock.Instant
    }

    private let state = Mutex<
        (entries: [String: Entry], errors: [CaptivePortalProblem.Kind: Int], ignored: [String])
    >(([:], [:], []))

    package init() {}

    /// Failures per kind since start (`reachability_captive_portal_api_errors_total`).
    package var errors: [CaptivePortalProblem.Kind: Int] { state.withLock { $0.errors } }
    /// Hook files present but not believed in the last round (`FileContents.readTrusted`).
    package var ignoredHookFiles: [String] { state.withLock { $0.ignored } }

    /// One interface to look after: its name and index, and whether the API is fetched bound
    /// to it (an uplink's: `SO_BINDTODEVICE`).
    package struct Interface: Sendable, Equatable {
        package var name: String
        package var index: Int?
        package var bound: Bool
        package init(name: String, index: Int?, bound: Bool) {
            self.name = name
            self.index = index
            self.bound = bound
        }
    }

    /// Reads the sources of `interfaces` and fetches the APIs due; the states of those that
    /// have an API, in the order given. `now` is the wall clock (Unix seconds).
    package func refresh(
        _ interfaces: [Interface], announcements: [RouterAnnouncement], settings: CaptivePortalSettings,
        timeout: Duration, now: Double
    ) async -> [CaptivePortalState] {
        guard settings.enabled else {
            state.withLock {
                $0.entries = [:]
                $0.ignored = []
            }
            return []
        }
        var ignored: [String] = []
        let clock = ContinuousClock.now
        var due: [(Interface, ProbeURL, CaptivePortalSource)] = []
        var found: [String] = []
        var asked: Set<String> = []
        for i in interfaces where asked.insert(i.name).inserted {
            let announced = announcements.first { $0.interfaceName == i.name }
            guard
                let (source, uri) = CaptivePortalSources.find(
                    interface: i.name, index: i.index, announced: announced, settings: settings, ignored: &ignored)
            else { continue }
            found.append(i.name)
            let text = (try? uri.get().description) ?? ""
            let key = "\(source.rawValue) \(text)"
            let fresh = state.withLock { s -> Bool in
                if let e = s.entries[i.name], e.announced == key, clock < e.next || text.isEmpty { return true }
                return false
            }
            if fresh { continue }
            switch uri {
            case .success(let url): due.append((i, url, source))
            case .failure(let problem):
                // A refused URI is counted once, when it is announced, not every round.
                state.withLock { s in
                    s.errors[problem.kind, default: 0] += 1
                    s.entries[i.name] = Entry(
                        state: CaptivePortalState(interface: i.name, source: source, api: "", problem: problem),
                        announced: key, next: clock)
                }
            }
        }
        let deadline = clock.advanced(by: min(timeout, Self.fetchTimeout))
        let caFile = settings.caFile
        let results = await withTaskGroup(
            of: (
                Interface, ProbeURL, CaptivePortalSource,
                CaptivePortalClient.Read
            ).self
        ) { group in
            for (i, url, source) in due {
                group.addTask {
                    let r = await CaptivePortalClient.fetch(
                        url, interface: i.bound ? i.name : nil, caFile: caFile, deadline: deadline)
                    return (i, url, source, r)
                }
            }
            var out:
                [(
                    Interface, ProbeURL, CaptivePortalSource,
                    CaptivePortalClient.Read
                )] = []
            for await r in group { out.append(r) }
            return out
        }
        let finished = ContinuousClock.now
        return state.withLock { s in
            // A file ignored is counted once, when it appears (again).
            s.errors[.untrusted, default: 0] += ignored.filter { !s.ignored.contains($0) }.count
            s.ignored = ignored
            for (i, url, source, result) in results {
                var st = CaptivePortalState(interface: i.name, source: source, api: url.description)
                let next: ContinuousClock.Instant
                switch result {
                case .success(let (answer, maxAge)):
                    st.answer = answer
                    st.answeredAt = now
                    next = finished.advanced(by: Self.hold(answer, maxAge: maxAge))
                case .failure(let problem):
                    st.problem = problem
                    s.errors[problem.kind, default: 0] += 1
                    next = finished.advanced(by: Self.minimumRefetch)
                }
                s.entries[i.name] = Entry(state: st, announced: "\(source.rawValue) \(url.description)", next: next)
            }
            s.entries = s.entries.filter { found.contains($0.key) }
            return found.compactMap { s.entries[$0]?.state }
        }
    }

    /// How long an answer is kept before the API is read again.
    package static func hold(_ answer: CaptivePortalAnswer, maxAge: Double?) -> Duration {
        if answer.captive { return minimumRefetch }
        let asked = [maxAge, answer.secondsRemaining].compactMap { $0 }.min() ?? maximumHold.seconds
        let bounded = min(max(asked, minimumRefetch.seconds), maximumHold.seconds)
        return .milliseconds(Int64(bounded * 1000))
    }
}
