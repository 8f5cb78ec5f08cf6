import CShim
import Glibc
import Synchronization

/// The shared ICMP echo machinery behind every `ICMPProber`: one socket per (family, mode, bound
/// interface), opened on first use and shared by all targets, each with one receive thread. Cost
/// per echo is one `sendto`, one dictionary insert and one lookup per reply, so it scales
/// linearly with the probe rate; no thread or timer per target.
///
/// Sockets that fail to open are not cached: the next echo tries again (the operator may have
/// fixed the sysctl, or the interface may be back). A socket whose bound interface vanished is
/// replaced on the next echo.
///
/// Not for: choosing addresses or families (the prober does that), or metrics.
package final class ICMPEngine: Sendable {
    /// The process-wide engine used by probers that are not given one.
    package static let shared = ICMPEngine()

    /// Opens a socket: (domain, type, protocol) -> descriptor or errno. Tests substitute one that
    /// runs inside a network namespace or with capabilities dropped.
    package typealias Opener = @Sendable (_ domain: Int32, _ type: Int32, _ protocol: Int32) -> Result<Int32, Errno>

    package struct Key: Hashable {
        package var family: IPFamily
        package var mode: ICMPSocketMode
        package var interface: String?
        /// Don't-fragment sockets are separate: the option is per socket.
        package var dontFragment = false
        /// Hop-limited echoes (the last-hop trace) set the TTL per send: a socket of their own.
        package var hopLimited = false
        /// The bound interface's policy routing when the socket was opened (a reload that
        /// changes it opens new sockets).
        package var routing: UplinkRouting? = nil
        /// Echoes whose replies may not fit the receive thread's 2 KiB batch slots get sockets of
        /// their own, read one datagram at a time.
        package var largeReplies = false
    }

    private let opener: Opener
    private let sockets = Mutex<[Key: ICMPSocket]>([:])
    private let batched = Atomic<Int>(0)

    /// Echoes sent through `echoBatch` so far (tests check that the scheduler batches).
    package var batchedEchoes: Int { batched.load(ordering: .relaxed) }

    /// An engine whose sockets live in the current network namespace or, when `networkNamespace`
    /// is a path such as `/run/netns/NAME`, in that namespace (needs CAP_SYS_ADMIN; the process
    /// itself stays where it is).
    package convenience init(networkNamespace: String? = nil) {
        if let networkNamespace {
            self.init { domain, type, proto in
                do throws(Errno) {
                    return try NetworkNamespace.run(inNamespaceAt: networkNamespace) {
                        Self.openSocket(domain, type, proto)
                    }
                } catch {
                    return .failure(error)
                }
            }
        } else {
            self.init(opener: Self.openSocket)
        }
    }

    package init(opener: @escaping Opener) {
        self.opener = opener
    }

    deinit { close() }

    /// Raw sockets through `BorrowedCapabilities`: the only use of a capability the file grants.
    package static func openSocket(_ domain: Int32, _ type: Int32, _ proto: Int32) -> Result<Int32, Errno> {
        let fd = BorrowedCapabilities.socket(domain, type, proto)
        return fd >= 0 ? .success(fd) : .failure(Errno.current)
    }

    /// Sends one echo request to `destination` and waits for the outcome, at most until `deadline`.
    /// Never throws: a socket that cannot be opened gives `.failed` with a reason and a fix hint.
    /// `dontFragment` sends with DF set (IPv4) or without local fragmentation (IPv6), ignoring
    /// the kernel's cached path MTU, so each echo tests the path as it is now.
    /// `hopLimit` sends with that TTL (IPv4) or hop limit (IPv6), on a socket kept for such
    /// echoes; a router's ICMP error then completes the echo as `.hopError`, naming the router.
    package func echo(
        to destination: SocketAddress, mode: ICMPSocketMode = .auto, interface: String? = nil,
        payloadSize: Int = 56, dontFragment: Bool = false, hopLimit: Int? = nil, deadline: ContinuousClock.Instant
    ) async -> ICMPEchoOutcome {
        let socket: ICMPSocket
        do {
            socket = try self.socket(
                family: destination.ipFamily, mode: mode, interface: interface, dontFragment: dontFragment,
                hopLimited: hopLimit != nil, payloadSize: payloadSize)
        } catch {
            return .notSent(error.reason, error.description)
        }
        let outcome = await socket.echo(
            to: destination, payloadSize: payloadSize, hopLimit: hopLimit, deadline: deadline)
        TrafficMeter.current?.echo(outcome, payload: payloadSize, family: destination.ipFamily)
        return outcome
    }

    /// One echo of `echoBatch`.
    package struct BatchRequest: Sendable {
        package var destination: SocketAddress
        package var mode: ICMPSocketMode
        package var interface: String?
        package var payloadSize: Int
        package var dontFragment: Bool
        package var deadline: ContinuousClock.Instant

        package init(
            destination: SocketAddress, mode: ICMPSocketMode = .auto, interface: String? = nil, payloadSize: Int = 56,
            dontFragment: Bool = false, deadline: ContinuousClock.Instant
        ) {
            self.destination = destination
            self.mode = mode
            self.interface = interface
            self.payloadSize = payloadSize
            self.dontFragment = dontFragment
            self.deadline = deadline
        }
    }

    /// Sends many echoes at once, `sendmmsg` on each socket they need, and waits for all of
    /// them (`ICMPSocket.echoBatch`): what a stagger slot of single-echo ICMP probes uses. Each
    /// result is what `echo` would have returned for that request, with when it ended;
    /// `onEnded` hears of each as it ends (its index in `requests`). Nothing is charged to a
    /// `TrafficMeter` here: the caller charges each probe its own.
    package func echoBatch(_ requests: [BatchRequest], onEnded: EchoBatch.EndHandler? = nil) async
        -> [EchoBatch.Result]
    {
        batched.add(requests.count, ordering: .relaxed)
        var groups: [ObjectIdentifier: (socket: ICMPSocket, indices: [Int])] = [:]
        var results = [EchoBatch.Result?](repeating: nil, count: requests.count)
        for (index, r) in requests.enumerated() {
            do {
                let socket = try self.socket(
                    family: r.destination.ipFamily, mode: r.mode, interface: r.interface, dontFragment: r.dontFragment,
                    payloadSize: r.payloadSize)
                groups[ObjectIdentifier(socket), default: (socket, [])].indices.append(index)
            } catch {
                let result = EchoBatch.Result(outcome: .notSent(error.reason, error.description), at: .now)
                results[index] = result
                onEnded?(index, result)
            }
        }
        @Sendable func send(_ group: (socket: ICMPSocket, indices: [Int])) async -> [(Int, EchoBatch.Result)] {
            let echoes = group.indices.map {
                ICMPSocket.BatchEcho(
                    destination: requests[$0].destination, payloadSize: requests[$0].payloadSize,
                    deadline: requests[$0].deadline)
            }
            let ended = onEnded.map { handler in
                { @Sendable (k: Int, r: EchoBatch.Result) in handler(group.indices[k], r) }
            }
            return Array(zip(group.indices, await group.socket.echoBatch(echoes, onEnded: ended)))
        }
        let all = Array(groups.values)
        let answered =
            all.count == 1 ? await send(all[0]) : await boundedConcurrently(all, width: all.count, send).flatMap { $0 }
        for (index, result) in answered { results[index] = result }
        return results.map { $0 ?? .init(outcome: .abandoned("lost"), at: .now) }
    }

    /// The kind of socket that serves this family, mode and interface, opening it if needed.
    /// Throws when no socket can be opened (the error says how to fix it).
    package func socketKind(family: IPFamily, mode: ICMPSocketMode = .auto, interface: String? = nil)
        throws(ICMPSocketError) -> ICMPSocketKind
    {
        try socket(family: family, mode: mode, interface: interface).kind
    }

    /// Closes every socket; echoes in flight fail with `error`. Later echoes open new sockets.
    package func close() {
        let all = sockets.withLock { s in
            let all = Array(s.values)
            s.removeAll()
            return all
        }
        for socket in all { socket.retire() }
    }

    /// The socket for these echoes (`payloadSize`: their payload, which decides `largeReplies`).
    package func socket(
        family: IPFamily, mode: ICMPSocketMode, interface: String?, dontFragment: Bool = false,
        hopLimited: Bool = false,
        payloadSize: Int = 56
    ) throws(ICMPSocketError) -> ICMPSocket {
        let key = Key(
            family: family, mode: mode, interface: interface, dontFragment: dontFragment, hopLimited: hopLimited,
            routing: interface.flatMap(UplinkRouting.of),
            largeReplies: !ICMPSocket.Buffers.slotsFit(payload: payloadSize))
        // Opening happens under the lock so concurrent first echoes share one socket.
        return try sockets.withLock { (s: inout [Key: ICMPSocket]) throws(ICMPSocketError) -> ICMPSocket in
            if let existing = s[key], !existing.isRetired { return existing }
            let fresh = try open(key)
            s[key] = fresh
            return fresh
        }
    }

    private func open(_ key: Key) throws(ICMPSocketError) -> ICMPSocket {
        switch key.mode {
        case .datagram: return try open(.datagram, key)
        case .raw: return try open(.raw, key)
        case .auto:
            let datagramError: ICMPSocketError
            do { return try open(.datagram, key) } catch { datagramError = error }
            guard datagramError.kind == .noPermission || datagramError.kind == .unsupported else { throw datagramError }
            do {
                return try open(.raw, key)
            } catch {
                guard error.kind == .noPermission else { throw error }
                throw ICMPSocketError(
                    kind: .noPermission, family: key.family, mode: .auto, code: error.code,
                    description:
                        "ICMP \(key.family.rawValue) needs ping sockets or raw sockets, and neither is allowed "
                        + "(ping socket: \(Errno(datagramError.code ?? 0)); raw socket: \(Errno(error.code ?? 0))). "
                        + ICMPSocketError.fixHint(for: .auto))
            }
        }
    }

    private func open(_ kind: ICMPSocketKind, _ key: Key) throws(ICMPSocketError) -> ICMPSocket {
        let domain = key.family == .ipv4 ? AF_INET : AF_INET6
        let proto = key.family == .ipv4 ? Int32(IPPROTO_ICMP) : Int32(IPPROTO_ICMPV6)
        let type = Int32(kind == .raw ? SOCK_RAW.rawValue : SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        switch opener(domain, type, proto) {
        case .failure(let e):
            throw ICMPSocketError.opening(kind, family: key.family, mode: key.mode, errno: e.code)
        case .success(let fd):
            return try ICMPSocket(
                fd: fd, family: key.family, kind: kind, interface: key.interface, mode: key.mode,
                dontFragment: key.dontFragment, routing: key.routing, largeReplies: key.largeReplies)
        }
    }
}

/// The outcome of one echo request.
package enum ICMPEchoOutcome: Sendable, Equatable {
    /// The reply came back. `ttl` is the reply's TTL (IPv4) or hop limit (IPv6) when known.
    case reply(rtt: Duration, ttl: Int?)
    /// Sent, and neither a reply nor an error came back before the deadline.
    case timedOut
    /// Sent, and an ICMP error quoting it came back (destination unreachable, time exceeded…).
    case icmpError(String)
    /// Sent with a hop limit, and an ICMP error quoting it came back: which node sent it, and what.
    case hopError(ICMPHopError)
    /// Sent, and a router said it is too large for its next hop ("fragmentation needed", "packet
    /// too big"), with that hop's MTU when it gave one.
    case tooBig(mtu: Int?, String)
    /// Never sent: no socket could be opened, or `sendto` failed (no route, firewall, …).
    case notSent(FailureReason, String)
    /// Sent, then abandoned before an answer: the task was cancelled or the socket closed.
    case abandoned(String)

    /// The text of an ICMP error outcome (`.icmpError`, `.hopError`, `.tooBig`), nil for the others.
    package var errorText: String? {
        switch self {
        case .icmpError(let t), .tooBig(_, let t): t
        case .hopError(let e): e.description
        default: nil
        }
    }

    /// Whether the request left this host (everything except `.notSent`).
    package var wasSent: Bool {
        if case .notSent = self { return false }
        return true
    }

    /// The outcome for an errno from `sendto`.
    package static func sendFailure(_ code: Int32, destination: SocketAddress) -> ICMPEchoOutcome {
        let reason: FailureReason =
            switch code {
            case ENETUNREACH, EHOSTUNREACH, EADDRNOTAVAIL, ENETDOWN, EHOSTDOWN, ENODEV, ENXIO, ENONET: .unreachable
            case EPERM, EACCES: .permission
            case EMSGSIZE: .mtu
            default: .error
            }
        var text = "sending to \(destination.ip): \(Errno(code))"
        if reason == .permission { text += " (a local firewall rule rejected the packet)" }
        if reason == .mtu { text += " (larger than the interface MTU or a path MTU the kernel knows)" }
        return .notSent(reason, text)
    }
}

/// An ICMP error answering a hop-limited echo: the node that sent it (its source address, as the
/// kernel saw it) and what it said. What it proves: that node exists at that distance and sent
/// an ICMP error naming our request; never that anything beyond it works.
package struct ICMPHopError: Sendable, Equatable {
    package var kind: ICMPErrorKind
    package var reporter: String
    /// "time exceeded (type 11 code 0)", "destination unreachable (net unreachable)".
    package var text: String
    package var rtt: Duration

    package init(kind: ICMPErrorKind, reporter: String, text: String, rtt: Duration) {
        self.kind = kind
        self.reporter = reporter
        self.text = text
        self.rtt = rtt
    }

    package var description: String { "\(text) from \(reporter)" }
}

extension TrafficMeter {
    /// One ICMP echo of `payload` bytes and what answered it (nothing, when it was never sent).
    package func echo(_ outcome: ICMPEchoOutcome, payload: Int, family: IPFamily) {
        let size = UInt64(max(0, payload)) + 8 + TrafficMeter.ipHeader(family)
        var c = TrafficCount()
        switch outcome {
        case .notSent: return
        case .reply:
            c.receivedPackets = 1
            c.receivedBytes = size
        case .icmpError, .hopError, .tooBig:
            // An ICMP error quotes the echo, cut to 576 (IPv4) or 1280 (IPv6) bytes in all.
            c.receivedPackets = 1
            c.receivedBytes = min(TrafficMeter.ipHeader(family) + 8 + size, family == .ipv4 ? 576 : 1280)
        case .timedOut, .abandoned: break
        }
        c.sentPackets = 1
        c.sentBytes = size
        add(c)
    }
}
