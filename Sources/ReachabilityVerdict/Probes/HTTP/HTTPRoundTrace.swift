/// What one probe round gathers across its hops: phase durations (summed over redirects, as
/// blackbox_exporter does), the address last tried, and the HTTP/TLS facts for `HTTPDetail`.
/// The phase that is open when a failure happens is closed by `closeOpenPhase()`, so a timeout
/// shows where the time went.
package struct HTTPRoundTrace {
    package let clock = ContinuousClock()
    package let start: ContinuousClock.Instant
    private(set) var phases: [ProbePhase: Duration] = [:]
    private var open: (phase: ProbePhase, since: ContinuousClock.Instant)?
    package var address: SocketAddress?
    /// Through a proxy: the family of the connection to it (the origin's address is the
    /// proxy's business), so the result still counts for that family's verdict.
    package var proxyFamily: IPFamily?
    package var detail = HTTPDetail()

    package init() { start = clock.now }

    /// Closes the open phase (if any) and opens `phase`.
    package mutating func begin(_ phase: ProbePhase) {
        let now = clock.now
        closeOpenPhase(at: now)
        open = (phase, now)
    }

    package mutating func closeOpenPhase() { closeOpenPhase(at: clock.now) }

    private mutating func closeOpenPhase(at now: ContinuousClock.Instant) {
        guard let (phase, since) = open else { return }
        phases[phase, default: .zero] += since.duration(to: now)
        open = nil
    }

    /// The finished round as a result value.
    package mutating func result(_ status: ProbeStatus, _ reason: FailureReason?, _ text: String) -> ProbeResult {
        closeOpenPhase()
        return ProbeResult(
            status: status, reason: status == .success ? nil : reason, detail: text,
            duration: start.duration(to: clock.now), phases: phases,
            address: address?.ip, family: address?.ipFamily ?? proxyFamily, http: detail)
    }
}
