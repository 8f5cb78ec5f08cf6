/// What one probe round gathers across its hops: phase durations (summed over redirects, as
/// blackbox_exporter does), the address last tried, and the HTTP/TLS facts for `HTTPDetail`.
/// The phase that is open when a failure happens is closed by `closeOpenPhase()`, so a timeout
/// shows where the time went.
struct HTTPRoundTrace {
    let clock = ContinuousClock()
    let start: ContinuousClock.Instant
    private(set) var phases: [ProbePhase: Duration] = [:]
    private var open: (phase: ProbePhase, since: ContinuousClock.Instant)?
    var address: SocketAddress?
    var detail = HTTPDetail()

    init() { start = clock.now }

    /// Closes the open phase (if any) and opens `phase`.
    mutating func begin(_ phase: ProbePhase) {
        let now = clock.now
        closeOpenPhase(at: now)
        open = (phase, now)
    }

    mutating func closeOpenPhase() { closeOpenPhase(at: clock.now) }

    private mutating func closeOpenPhase(at now: ContinuousClock.Instant) {
        guard let (phase, since) = open else { return }
        phases[phase, default: .zero] += since.duration(to: now)
        open = nil
    }

    /// The finished round as a result value.
    mutating func result(_ status: ProbeStatus, _ reason: FailureReason?, _ text: String) -> ProbeResult {
        closeOpenPhase()
        return ProbeResult(
            status: status, reason: status == .success ? nil : reason, detail: text,
            duration: start.duration(to: clock.now), phases: phases,
            address: address?.ip, family: address?.ipFamily, http: detail)
    }
}

/// A hop failed before a response could be judged.
struct HTTPHopFailure: Error {
    let reason: FailureReason
    let message: String

    init(_ reason: FailureReason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    init(_ error: StreamError, context: String) {
        switch error {
        case .timedOut: self.init(.timeout, "\(context): timed out")
        case .cancelled: self.init(.error, "\(context): cancelled")
        case .tls(let text): self.init(.tls, "\(context): \(text)")
        case .system(let step, let errno): self.init(Self.reason(for: error.kind), "\(context): \(step): \(errno)")
        }
    }

    init(_ failure: HTTPResponseParser.Failure) {
        switch failure {
        case .headTooLarge, .tooManyFields: self.init(.tooLarge, failure.description)
        case .malformed, .truncated: self.init(.protocolError, failure.description)
        }
    }

    private static func reason(for kind: StreamError.Kind) -> FailureReason {
        switch kind {
        case .timedOut: .timeout
        case .refused: .refused
        case .reset: .reset
        case .unreachable: .unreachable
        case .permission: .permission
        case .tls: .tls
        case .cancelled, .other: .error
        }
    }
}
