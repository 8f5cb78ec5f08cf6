/// Opens one TCP connection per round and closes it at once: proof that a SYN got out and an
/// answer came back. The host name is resolved again every round (so DNS changes and DNS
/// failures show), and the resolved addresses are tried in order until one connects.
///
/// Phases: `resolve` (always recorded; near zero for IP literals) and `connect` (the attempt
/// that decided the round). Failure reasons: `dns`, `timeout`, `refused`, `unreachable`,
/// `reset`, `permission`, `error`. Not for: sending or reading application data.
///
/// Time budget: with several addresses, each attempt may use an equal share of the time left,
/// and the last one all of it, so one black-holed address cannot starve the others; a refused
/// or unreachable attempt returns at once and leaves its share to the next.
package struct TCPProber: Prober {
    package let config: TCPProbeConfig
    package var type: ProbeType { .tcp }

    package init(config: TCPProbeConfig) { self.config = config }

    package func probe(deadline: ContinuousClock.Instant) async -> ProbeResult {
        let clock = ContinuousClock()
        let start = clock.now
        let target = config.target
        var phases: [ProbePhase: Duration] = [:]
        let addresses: [SocketAddress]
        do {
            addresses = try await Resolver.resolve(
                target.host, port: target.port, family: config.family, deadline: deadline)
            phases[.resolve] = clock.now - start
        } catch {
            phases[.resolve] = clock.now - start
            return .failure(
                error.timedOut ? .timeout : .dns, "tcp \(target): \(error.message)", duration: clock.now - start,
                phases: phases)
        }
        return await connectFirst(
            of: Array(addresses.prefix(config.maxAddresses)), start: start, phases: phases, deadline: deadline)
    }

    /// Tries `candidates` in order within the budget rule above; the first connection wins.
    func connectFirst(
        of candidates: [SocketAddress], start: ContinuousClock.Instant, phases: [ProbePhase: Duration],
        deadline: ContinuousClock.Instant
    ) async -> ProbeResult {
        let clock = ContinuousClock()
        let target = config.target
        var phases = phases
        var failures: [(address: SocketAddress, error: ConnectError)] = []
        attempts: for (index, address) in candidates.enumerated() {
            let attemptStart = clock.now
            if attemptStart >= deadline { break }
            let left = candidates.count - index
            let attemptDeadline = left == 1 ? deadline : attemptStart + (deadline - attemptStart) / left
            let outcome = await connectSocket(to: address, interface: config.interface, deadline: attemptDeadline)
            phases[.connect] = clock.now - attemptStart
            switch outcome {
            case .success(let fd):
                closeDescriptor(fd)
                return ProbeResult(
                    status: .success, detail: "tcp \(target): connected to \(address)", duration: clock.now - start,
                    phases: phases, address: address.ip, family: address.ipFamily)
            case .failure(let error):
                failures.append((address, error))
                // These would fail the same way for every address.
                if [.cancelled, .noSuchInterface].contains(error.kind) { break attempts }
            }
        }
        let tried = failures.map { "\($0.address) \($0.error)" }.joined(separator: "; ")
        var result = ProbeResult.failure(
            failures.last?.error.failureReason ?? .timeout,
            failures.isEmpty ? "tcp \(target): deadline passed before connecting" : "tcp \(target): \(tried)",
            duration: clock.now - start, phases: phases)
        result.address = failures.last?.address.ip
        result.family = failures.last?.address.ipFamily
        return result
    }
}

extension ConnectError {
    /// The probe failure reason for this error (for any connection-based probe).
    package var failureReason: FailureReason {
        switch kind {
        case .refused: .refused
        case .timedOut: .timeout
        case .unreachable: .unreachable
        case .reset: .reset
        case .permission: .permission
        case .noSuchInterface, .cancelled, .other: .error
        }
    }
}
