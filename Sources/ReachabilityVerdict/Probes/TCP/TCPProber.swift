/// Opens one TCP connection per round and closes it at once: proof that a SYN got out and an
/// answer came back. The host name is resolved again every round (so DNS changes and DNS
/// failures show), and the resolved addresses are tried in order until one connects.
///
/// Phases: `resolve` (always recorded; near zero for IP literals) and `connect` (the attempt
/// that decided the round). Failure reasons: `dns`, `timeout`, `refused`, `unreachable`,
/// `reset`, `permission`, `error`, and the two cross-checks below. Not for: sending data.
///
/// A completed handshake proves only that something answered: a box on the path can complete
/// every handshake itself (a DNAT to a local listener). So each connection is checked:
/// - with `expect`, the server's first bytes must match it (`SSH-2.0-`): a middlebox that
///   accepts and stays silent, or says something else, fails with `banner_mismatch`;
/// - otherwise a canary: a connect to a port of the same address that should be closed
///   (`canary_port`, default 1; none on ports 53, 80 and 443, whose connections prove nothing
///   anyway). A real server refuses it (or a firewall drops it); if it
///   connects too, the probe fails with `intercepted`. It waits at most twice the probe's own
///   connect time (at least 100 ms), and the probe's `duration` leaves it out.
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
    package func connectFirst(
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
                let connected = clock.now
                var result = ProbeResult(
                    status: .success, detail: "tcp \(target): connected to \(address)", duration: connected - start,
                    phases: phases, address: address.ip, family: address.ipFamily)
                if let dialog = config.dialog {
                    let socket = StreamSocket.adopting(fd, peer: address)
                    do throws(TCPDialog.Failure) {
                        try await dialog.run(socket, host: target.host, deadline: deadline, result: &result)
                    } catch {
                        result.status = .failure
                        result.reason = error.reason
                        result.detail += ", but \(error.message)"
                    }
                    result.duration = clock.now - start
                } else if let expect = config.expect {
                    let socket = StreamSocket.adopting(fd, peer: address)
                    await Self.readBanner(socket, expect: expect, deadline: deadline, into: &result)
                    result.duration = clock.now - start
                } else {
                    closeDescriptor(fd)
                    if let port = config.canaryPort {
                        let wait = max(.milliseconds(100), (connected - attemptStart) * 2)
                        await canary(address, port: port, deadline: min(deadline, clock.now + wait), into: &result)
                    }
                }
                return result
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

extension TCPProber {
    /// The most a banner is read for (bytes): enough for any greeting line.
    package static let bannerLimit = 4096

    /// Reads until the bytes so far match `expect`, the stream ends, `bannerLimit` bytes came,
    /// or the deadline; a miss turns `result` into a `banner_mismatch` failure. The pattern is
    /// tried when a line ends and once at the end, not after every read: a peer that sends one
    /// byte at a time costs one match per line, not one per byte.
    package static func readBanner(
        _ socket: StreamSocket, expect: String, deadline: ContinuousClock.Instant, into result: inout ProbeResult
    ) async {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        var ending = "before the deadline"
        let regex = try? Regex(expect)
        func matches() -> Bool {
            guard let regex, !received.isEmpty else { return false }
            return (try? regex.firstMatch(in: String(decoding: received, as: UTF8.self))) != nil
        }
        while received.count < bannerLimit {
            do throws(StreamError) {
                let n = try await socket.read(into: &buffer, deadline: deadline)
                if n == 0 {
                    ending = "before the server closed the connection"
                    break
                }
                let chunk = buffer.prefix(min(n, bannerLimit - received.count))
                received += chunk
                guard chunk.contains(0x0A) || chunk.contains(0x0D) else { continue }
            } catch {
                ending = error == .timedOut ? "before the deadline" : "(\(error))"
                break
            }
            if matches() {
                result.detail += ", banner \(Self.shown(received)) matches /\(expect)/"
                return
            }
        }
        if matches() {
            result.detail += ", banner \(Self.shown(received)) matches /\(expect)/"
            return
        }
        result.status = .failure
        result.reason = .bannerMismatch
        result.detail +=
            received.isEmpty
            ? ", but no byte came \(ending) (expected /\(expect)/): something on the path may have completed the handshake"
            : ", but its banner \(Self.shown(received)) does not match /\(expect)/ \(ending)"
    }

    /// The first line of a banner, quoted and clipped, control characters escaped.
    package static func shown(_ bytes: [UInt8]) -> String {
        let line = bytes.prefix { $0 != 0x0A && $0 != 0x0D }.prefix(80)
        return String(decoding: line, as: UTF8.self).escapingControlCharacters.debugDescription
    }

    /// The canary: `port` of the same address, which should not connect.
    package func canary(
        _ address: SocketAddress, port: UInt16, deadline: ContinuousClock.Instant, into result: inout ProbeResult
    ) async {
        var canary = address
        canary.port = port
        switch await connectSocket(to: canary, interface: config.interface, deadline: deadline) {
        case .success(let fd):
            closeDescriptor(fd)
            result.status = .failure
            result.reason = .intercepted
            result.detail +=
                ", but port \(port) (which no server offers) connected too: something on the path completes every handshake"
        case .failure:
            return
        }
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
