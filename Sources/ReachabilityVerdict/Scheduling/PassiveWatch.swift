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
        /// through the routing table for `overall`), for at most `PassiveBoard.maxPause`; they
        /// run again at once when the evidence goes stale, a read fails or is late, or a
        /// connection stalls.
        case off, observe, prefer
    }

    package var mode: Mode = .off
    package var interval: Duration = Self.defaultInterval
    package var evidence = PassiveEvidence.Settings()

    package static let defaultInterval = Duration.seconds(1)

    package init(mode: Mode = .off, interval: Duration = defaultInterval, evidence: PassiveEvidence.Settings = .init())
    {
        self.mode = mode
        self.interval = interval
        self.evidence = evidence
    }

    /// How recent data must be to vouch: one read interval and a quarter second for the reads'
    /// own jitter, so a download that stops stops vouching at the first or second read after.
    package static func vouchWindow(interval: Duration) -> Duration { interval + .milliseconds(250) }
}

/// The latest passive evidence per scope, read by the scheduler: under `prefer` it pauses the
/// probes of a scope it vouches for; in either mode an uplink that carries the host's traffic
/// runs its probes at the global pace instead of its own longer interval.
package final class PassiveBoard: Sendable {
    private let summaries = Mutex<(board: [Scope: PassiveSummary], at: ContinuousClock.Instant?)>(([:], nil))
    /// `prefer`: the evidence may pause probes.
    package let prefer: Bool
    /// A board older than this vouches for nothing (the watch fell behind or stopped).
    package let maxAge: Duration
    private let now: @Sendable () -> ContinuousClock.Instant

    package init(
        prefer: Bool = true, maxAge: Duration = .seconds(3),
        now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
    ) {
        self.prefer = prefer
        self.maxAge = maxAge
        self.now = now
    }

    /// The longest `prefer` pauses a scope's probes since they last ran, however well its own
    /// traffic vouches: two of its probe intervals (10 s at the default 5 s; an uplink with an
    /// `interval` of its own, two of those). Connections already open
    /// may keep receiving while new ones cannot open (a full connection table, a firewall that
    /// drops new flows); the probes open new ones.
    package static func maxPause(interval: Duration) -> Duration { interval * 2 }

    /// A new reading; an empty one (a read that failed or came too late) vouches for nothing.
    package func update(_ new: [Scope: PassiveSummary]) { summaries.withLock { $0 = (new, now()) } }

    /// Under `prefer`, whether the scope's own traffic vouches for it now: data received since
    /// about the last read, nothing stalling, and a reading no older than `maxAge`.
    package func vouches(for scope: Scope) -> Bool {
        guard prefer else { return false }
        let current = now()
        return summaries.withLock { s in
            guard let at = s.at, at.duration(to: current) <= maxAge else { return false }
            return s.board[scope]?.vouches ?? false
        }
    }

    /// Whether the host's own connections use the scope now (receiving, or trying to).
    package func carries(_ scope: Scope) -> Bool {
        summaries.withLock { $0.board[scope].map { $0.receiving > 0 || $0.stalled > 0 } ?? false }
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
    package let config: PassiveConfig
    package let path: any PathGate
    package let uplinks: @Sendable () -> [String]
    package let recheck: @Sendable () -> Void
    package let publish: @Sendable (PassiveReading) -> Void
    /// Where the scheduler reads the evidence under `prefer`.
    package let board: PassiveBoard
    /// The least time between two re-checks it asks for (the probe interval): stalls that come
    /// and go cannot multiply probe rounds.
    package let recheckGap: @Sendable () -> Duration
    /// Set while a read runs: a read that outlives the interval is not queued behind again.
    private let busy = Mutex(false)
    package let logger: Logger
    /// Reads the sockets (tests substitute a script).
    package let read: @Sendable () -> Result<[TCPSocketInfo], Errno>
    package static let pool = BlockingPool(name: "passive", threads: 1)

    package init(
        config: PassiveConfig, path: any PathGate, logger: Logger,
        uplinks: @escaping @Sendable () -> [String], recheck: @escaping @Sendable () -> Void,
        publish: @escaping @Sendable (PassiveReading) -> Void,
        recheckGap: @escaping @Sendable () -> Duration = { .zero },
        read: @escaping @Sendable () -> Result<[TCPSocketInfo], Errno> = PassiveWatch.readOthers
    ) {
        self.recheckGap = recheckGap
        self.read = read
        // A reading is late after two intervals and a half: the board stops vouching then
        // even if this service could not clear it (a read stuck in the kernel).
        board = PassiveBoard(prefer: config.mode == .prefer, maxAge: config.interval * 2 + config.interval / 2)
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
        var vouching: Set<Scope> = []
        var settings = config.evidence
        settings.vouchWindow = PassiveConfig.vouchWindow(interval: config.interval)
        /// Asks for a round at once for `scopes` (at most one per `recheckGap`); true when asked.
        var lastRecheck: ContinuousClock.Instant?
        func recheckNow(_ scopes: [Scope], _ message: String, why: String = "retransmitting") -> Bool {
            let now = ContinuousClock.now
            guard !scopes.isEmpty else { return false }
            if let last = lastRecheck, last.duration(to: now) < recheckGap() { return false }
            logger.info(message, ("scopes", scopes.map(\.label).joined(separator: ",")), ("why", why))
            lastRecheck = now
            recheck()
            return true
        }
        var warned = false
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
                let local = path.localityMatcher()
                let summaries = PassiveEvidence.summarize(
                    sockets, settings: settings, uplinks: uplinks(),
                    interfaceOfAddress: names.byAddress, interfaceOfIndex: names.byIndex,
                    isLocalPeer: { local.isLocal(bytes: $0) })
                let now = Set(summaries.filter { $0.value.isStalling }.map(\.key))
                let vouchingNow = Set(summaries.filter { $0.value.vouches }.map(\.key))
                board.update(summaries)
                // A scope that begins to stall re-checks at once; one that keeps stalling does not
                // again. Under `prefer`, so does one whose traffic stops vouching (its probes were
                // paused: a download that stopped is seen within a read or two).
                var began = now.subtracting(stalling).sorted()
                if !recheckNow(began, "connections stall: probing now") { began = [] }
                if board.prefer, began.isEmpty {
                    let stopped = vouching.subtracting(vouchingNow).sorted()
                    if recheckNow(stopped, "connections stall: probing now", why: "stopped receiving") {
                        began = stopped
                    }
                }
                stalling = now
                vouching = vouchingNow
                publish(
                    PassiveReading(
                        summaries: summaries, sockets: sockets.count, took: start.duration(to: clock.now),
                        beganStalling: began))
            case .failure(let error)?:
                // A read that fails vouches for nothing: the probes of paused scopes run again.
                board.update([:])
                if board.prefer {
                    _ = recheckNow(vouching.sorted(), "connections stall: probing now", why: "read failed")
                }
                vouching = []
                if !warned { logger.warn("cannot read the host's TCP sockets", ("err", error.description)) }
                warned = true
            case nil:
                // Late (or still running): stale counts vouch for nothing either.
                board.update([:])
                if board.prefer {
                    _ = recheckNow(vouching.sorted(), "connections stall: probing now", why: "read late")
                }
                vouching = []
                if !warned { logger.warn("reading the host's TCP sockets took longer than --passive.interval") }
                warned = true
            }
            let elapsed = start.duration(to: clock.now)
            if elapsed < config.interval { try? await Task.sleep(for: config.interval - elapsed) }
        }
    }
}
