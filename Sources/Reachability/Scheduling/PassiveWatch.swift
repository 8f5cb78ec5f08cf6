import Synchronization

/// Passive evidence, as a service: every `interval` it reads the host's TCP sockets
/// (`SockDiag`, on a thread of its own), sums them per scope (`PassiveEvidence`), publishes the
/// counts and ages, and asks the scheduler for a round at once when a scope's connections begin
/// to stall with none receiving (early evidence, sooner than the probe interval).
///
/// Mode `observe` adds metrics and the early re-check; it decides no verdict by itself.
package struct PassiveConfig: Sendable, Equatable {
    package enum Mode: String, Sendable, CaseIterable {
        /// `observe`: metrics and the early re-check. `prefer`: also, while a scope's connections
        /// receive (and none stalls), the probes of that scope pause (bound to that uplink, or
        /// through the routing table for `overall`); they run again at once when the evidence
        /// goes stale or a connection stalls.
        case off, observe, prefer
    }

    package var mode: Mode = .off
    package var interval: Duration = Self.defaultInterval
    package var evidence = PassiveEvidence.Settings()

    package static let defaultInterval = Duration.seconds(2)

    package init(mode: Mode = .off, interval: Duration = defaultInterval, evidence: PassiveEvidence.Settings = .init())
    {
        self.mode = mode
        self.interval = interval
        self.evidence = evidence
    }
}

/// The latest passive evidence per scope, read by the scheduler: under `prefer` it pauses the
/// probes of a scope it vouches for; in either mode an uplink that carries the host's traffic
/// runs its probes at the global pace instead of its own longer interval.
package final class PassiveBoard: Sendable {
    private let summaries = Mutex<[Scope: PassiveSummary]>([:])
    /// `prefer`: the evidence may pause probes.
    package let prefer: Bool

    package init(prefer: Bool = true) { self.prefer = prefer }

    package func update(_ new: [Scope: PassiveSummary]) { summaries.withLock { $0 = new } }

    /// Under `prefer`, whether the scope's own traffic vouches for it now: receiving, and
    /// nothing stalling.
    package func vouches(for scope: Scope) -> Bool {
        prefer && summaries.withLock { $0[scope].map { $0.receiving > 0 && $0.stalled == 0 } ?? false }
    }

    /// Whether the host's own connections use the scope now (receiving, or trying to).
    package func carries(_ scope: Scope) -> Bool {
        summaries.withLock { $0[scope].map { $0.receiving > 0 || $0.stalled > 0 } ?? false }
    }
}

/// What one read found, for the metrics (`PassiveMetrics`).
package struct PassiveReading: Sendable {
    package var summaries: [Scope: PassiveSummary]
    package var sockets: Int
    package var took: Duration
    /// Scopes that began to stall in this read (a round was asked for).
    package var beganStalling: [Scope]
}

package final class PassiveWatch: Service {
    package let name = "passive"
    let config: PassiveConfig
    let path: any PathGate
    let uplinks: @Sendable () -> [String]
    let recheck: @Sendable () -> Void
    let publish: @Sendable (PassiveReading) -> Void
    /// Where the scheduler reads the evidence under `prefer`.
    package let board: PassiveBoard
    /// The least time between two re-checks it asks for (the probe interval): stalls that come
    /// and go cannot multiply probe rounds.
    let recheckGap: @Sendable () -> Duration
    /// Set while a read runs: a read that outlives the interval is not queued behind again.
    private let busy = Mutex(false)
    let logger: Logger
    /// Reads the sockets (tests substitute a script).
    let read: @Sendable () -> Result<[TCPSocketInfo], Errno>
    static let pool = BlockingPool(name: "passive", threads: 1)

    package init(
        config: PassiveConfig, path: any PathGate, logger: Logger,
        uplinks: @escaping @Sendable () -> [String], recheck: @escaping @Sendable () -> Void,
        publish: @escaping @Sendable (PassiveReading) -> Void,
        recheckGap: @escaping @Sendable () -> Duration = { .zero },
        read: @escaping @Sendable () -> Result<[TCPSocketInfo], Errno> = PassiveWatch.readOthers
    ) {
        self.recheckGap = recheckGap
        self.read = read
        board = PassiveBoard(prefer: config.mode == .prefer)
        self.config = config
        self.path = path
        self.uplinks = uplinks
        self.recheck = recheck
        self.publish = publish
        self.logger = logger
    }

    /// The host's TCP sockets but this process's own (its probes' connections, whose stalls are
    /// the probes' business): its socket inodes are read before and after the dump.
    package static let readOthers: @Sendable () -> Result<[TCPSocketInfo], Errno> = {
        var own = SockDiag.ownSocketInodes()
        do throws(Errno) {
            let sockets = try SockDiag.tcpSockets()
            own.formUnion(SockDiag.ownSocketInodes())
            return .success(sockets.filter { !own.contains($0.inode) })
        } catch {
            return .failure(error)
        }
    }

    package func run() async throws {
        var stalling: Set<Scope> = []
        var warned = false
        var lastRecheck: ContinuousClock.Instant?
        while !Task.isCancelled {
            let clock = ContinuousClock()
            let start = clock.now
            let outcome: Result<[TCPSocketInfo], Errno>??
            if busy.withLock({ $0 }) {
                outcome = .some(nil)  // the last read still runs: skip this one
            } else {
                busy.withLock { $0 = true }
                outcome = await Self.pool.run(deadline: start + config.interval) { [self] in
                    defer { busy.withLock { $0 = false } }
                    return read()
                }
            }
            switch outcome.flatMap({ $0 }) {
            case .success(let sockets)?:
                warned = false
                let names = path.interfaceNames
                let summaries = PassiveEvidence.summarize(
                    sockets, settings: config.evidence, uplinks: uplinks(),
                    interfaceOfAddress: names.byAddress, interfaceOfIndex: names.byIndex)
                let now = Set(summaries.filter { $0.value.isStalling }.map(\.key))
                // A scope that begins to stall re-checks at once; one that keeps stalling does not again.
                var began = now.subtracting(stalling).sorted()
                if let last = lastRecheck, last.duration(to: clock.now) < recheckGap() { began = [] }
                if !began.isEmpty {
                    logger.info("connections stall: probing now", ("scopes", began.map(\.label).joined(separator: ",")))
                    lastRecheck = clock.now
                    recheck()
                }
                stalling = now
                board.update(summaries)
                publish(
                    PassiveReading(
                        summaries: summaries, sockets: sockets.count, took: start.duration(to: clock.now),
                        beganStalling: began))
            case .failure(let error)?:
                board.update([:])
                if !warned { logger.warn("cannot read the host's TCP sockets", ("err", error.description)) }
                warned = true
            case nil:
                if !warned { logger.warn("reading the host's TCP sockets took longer than --passive.interval") }
                warned = true
            }
            let elapsed = start.duration(to: clock.now)
            if elapsed < config.interval { try? await Task.sleep(for: config.interval - elapsed) }
        }
    }
}
