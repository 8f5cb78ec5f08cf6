import CShim
import Glibc
import Synchronization

/// One ICMP socket (one family, one kind, optionally bound to one interface) shared by every
/// target that probes through it, with its own receive thread.
///
/// Each echo takes a sequence number unique among the echoes in flight on this socket (a 16-bit
/// counter that skips numbers still pending, so wrapping is safe) and a 64-bit nonce carried in the
/// payload. A reply completes the pending echo whose identifier, sequence, nonce and source
/// address all match: one dictionary lookup per packet, whatever the number of targets. The
/// receive thread also keeps the deadlines (a heap), so timeouts cost no task or timer per echo.
///
/// Contract: thread-safe; `echo` returns by its deadline (plus scheduling slack). After
/// `retire()` (or a vanished bound interface) new echoes fail at once, pending ones fail with
/// `error`, and the thread closes the descriptor once no send is using it.
package final class ICMPSocket: Sendable {
    package let family: IPFamily
    package let kind: ICMPSocketKind
    package let interface: String?
    /// The ICMP identifier of our echoes: chosen by the kernel for datagram sockets (the socket's
    /// "port"), random for raw sockets.
    package let identifier: UInt16

    package let fd: Int32
    package let wakeFD: Int32
    package let layout: ICMPPacket.Layout
    /// Whether the receive thread reads with `recvmmsg` into 2 KiB slots: only for sockets whose
    /// echoes all have replies that fit one (`ICMPEngine.Key.largeReplies` keeps the others
    /// apart), so a reply is never cut short.
    package let readsInBatches: Bool
    package let secret: UInt64
    package let clock = ContinuousClock()
    package let state: Mutex<State>
    /// Held from setting the hop limit to the end of that echo's `sendto`, so concurrent
    /// hop-limited echoes cannot send with each other's limit.
    private let hopLock = Mutex<Int32>(-1)

    package struct Pending {
        package let token: UInt64
        package let nonce: UInt64
        package let checksNonce: Bool
        /// Sent with a hop limit: an ICMP error completes it as `.hopError`.
        package let hopLimited: Bool
        package let destination: ICMPAddressKey
        /// Stamped again right before the send call for batched echoes (`echoBatch`).
        package var sentAt: ContinuousClock.Instant
        package var sentRealtimeNanos: Int64
        package let waiter: Waiter
    }

    /// Who waits for a pending echo: its own task, or entry `index` of a batch (`echoBatch`).
    package enum Waiter {
        case one(CheckedContinuation<ICMPEchoOutcome, Never>)
        case batch(id: UInt64, index: Int)
    }

    package struct State {
        package var pending: [UInt16: Pending] = [:]
        package var nextSequence: UInt16
        package var counter: UInt64 = 0
        package var timers = DeadlineHeap()
        /// When the receive thread will wake by itself; a new earlier deadline must wake it.
        package var wakeAt: ContinuousClock.Instant?
        package var retired = false
        /// Sends between registration and the end of `sendto`; the descriptor stays open for them.
        package var sendsInFlight = 0
        package var threadDone = false
        package var closed = false
        /// Batches with echoes still pending, by id (`echoBatch`).
        package var batches: [UInt64: EchoBatch] = [:]
        package var nextBatch: UInt64 = 0

    }

    /// Wraps a freshly opened ICMP socket `fd` (ownership passes here, also on error), configures
    /// it and starts its receive thread.
    package init(
        fd: Int32, family: IPFamily, kind: ICMPSocketKind, interface: String?, mode: ICMPSocketMode,
        dontFragment: Bool = false, routing: UplinkRouting? = nil, largeReplies: Bool = false
    ) throws(ICMPSocketError) {
        readsInBatches = !largeReplies
        self.family = family
        self.kind = kind
        self.interface = interface
        self.fd = fd
        layout = family == .ipv6 ? .ipv6 : (kind == .raw ? .ipv4Raw : .ipv4Datagram)
        secret = UInt64.random(in: .min ... .max)
        func fail(_ k: ICMPSocketError.Kind, _ what: String, _ code: Int32) -> ICMPSocketError {
            Glibc.close(fd)
            return ICMPSocketError(
                kind: k, family: family, mode: mode, code: code, description: "\(what): \(Errno(code))")
        }
        do throws(Errno) {
            try Self.configure(fd, family: family, kind: kind, interface: interface, dontFragment: dontFragment)
            if let mark = routing?.mark {
                var value = mark
                if setsockopt(fd, SOL_SOCKET, SO_MARK, &value, 4) != 0 { throw Errno.current }
            }
        } catch {
            let k: ICMPSocketError.Kind =
                interface != nil && (error.code == ENODEV || error.code == EINVAL) ? .badInterface : .system
            throw fail(
                k, interface.map { "binding an ICMP socket to interface \($0)" } ?? "configuring an ICMP socket",
                error.code)
        }
        let source = routing?.source(for: family)
        if kind == .raw, let source, source.withSockAddr({ Glibc.bind(fd, $0, $1) }) != 0 {
            throw fail(.system, "binding an ICMP socket to \(source.ip)", errno)
        }
        if kind == .datagram {
            switch Self.boundIdentifier(fd, family: family, source: source) {
            case .success(let id): identifier = id
            case .failure(let e): throw fail(.system, "binding a ping socket", e.code)
            }
        } else {
            identifier = UInt16.random(in: .min ... .max)
        }
        wakeFD = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        if wakeFD < 0 { throw fail(.system, "eventfd", errno) }
        state = Mutex(State(nextSequence: UInt16.random(in: .min ... .max)))
        startThread(name: "icmp-\(family == .ipv4 ? "v4" : "v6")-\(kind.rawValue)") { [self] in receiveLoop() }
    }

    /// Socket options: receive stamps and TTL, a larger receive buffer, error queue (datagram),
    /// kernel-side type filters (raw), the bound device.
    private static func configure(
        _ fd: Int32, family: IPFamily, kind: ICMPSocketKind, interface: String?, dontFragment: Bool
    ) throws(Errno) {
        if let interface {
            guard InterfaceName.problem(interface) == nil else { throw Errno(EINVAL) }
            let rc = interface.withCString {
                setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, $0, socklen_t(strlen($0) + 1))
            }
            if rc != 0 { throw Errno.current }
        }
        try setSocketOption(fd, SOL_SOCKET, SO_TIMESTAMPNS, 1)
        if dontFragment {
            // PMTUDISC_PROBE: DF set (IPv4) / never fragmented here (IPv6), and the cached path
            // MTU ignored, so every echo tests the path now; larger than the interface: EMSGSIZE.
            if family == .ipv4 {
                try setSocketOption(fd, Int32(IPPROTO_IP), IP_MTU_DISCOVER, IP_PMTUDISC_PROBE)
            } else {
                try setSocketOption(fd, Int32(IPPROTO_IPV6), IPV6_MTU_DISCOVER, IPV6_PMTUDISC_PROBE)
                try setSocketOption(fd, Int32(IPPROTO_IPV6), IPV6_DONTFRAG, 1)
            }
        }
        // Bursts of replies from many targets: a deeper queue (forced past rmem_max when privileged).
        if (try? setSocketOption(fd, SOL_SOCKET, SO_RCVBUFFORCE, 1 << 21)) == nil {
            try? setSocketOption(fd, SOL_SOCKET, SO_RCVBUF, 1 << 21)
        }
        switch (family, kind) {
        case (.ipv4, .datagram):
            try setSocketOption(fd, Int32(IPPROTO_IP), IP_RECVTTL, 1)
            try setSocketOption(fd, Int32(IPPROTO_IP), IP_RECVERR, 1)
        case (.ipv6, .datagram):
            try setSocketOption(fd, Int32(IPPROTO_IPV6), IPV6_RECVHOPLIMIT, 1)
            try setSocketOption(fd, Int32(IPPROTO_IPV6), IPV6_RECVERR, 1)
        case (.ipv4, .raw):
            // ICMP_FILTER (SOL_RAW, 1): a set bit blocks that type. Pass echo reply, unreachable, time exceeded.
            var blocked: UInt32 = ~(1 << 0 | 1 << 3 | 1 << 11)
            if setsockopt(fd, 255, 1, &blocked, 4) != 0 { throw Errno.current }
        case (.ipv6, .raw):
            try setSocketOption(fd, Int32(IPPROTO_IPV6), IPV6_RECVHOPLIMIT, 1)
            // ICMP6_FILTER: a set bit blocks that type. Pass echo reply and the four error types.
            var filter = [UInt32](repeating: .max, count: 8)
            for type in [1, 2, 3, 4, 129] { filter[type >> 5] &= ~(1 << UInt32(type & 31)) }
            let rc = filter.withUnsafeBytes { setsockopt(fd, Int32(IPPROTO_ICMPV6), ICMP6_FILTER, $0.baseAddress, 32) }
            if rc != 0 { throw Errno.current }
        }
    }

    /// Binds a ping socket to the wildcard address (or the uplink's source address) and reads
    /// back the identifier the kernel chose.
    private static func boundIdentifier(_ fd: Int32, family: IPFamily, source: SocketAddress? = nil) -> Result<
        UInt16, Errno
    > {
        guard let any = source ?? SocketAddress(ip: family == .ipv4 ? "0.0.0.0" : "::") else {
            return .failure(Errno(EINVAL))
        }
        if any.withSockAddr({ Glibc.bind(fd, $0, $1) }) != 0 { return .failure(Errno.current) }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        if rc != 0 { return .failure(Errno.current) }
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress($0, length: length) }
        }
        return .success(bound.port)
    }

    /// Sends one echo request to `destination` and waits for its reply, an ICMP error quoting it,
    /// or the deadline. Never throws; cancellation completes it at once (`.abandoned`).
    // Long on purpose: one echo from send to reply or deadline, every errno path in place.
    package func echo(
        to destination: SocketAddress, payloadSize: Int, hopLimit: Int? = nil, deadline: ContinuousClock.Instant
    ) async -> ICMPEchoOutcome {
        if clock.now >= deadline { return .notSent(.timeout, "the deadline passed before sending") }
        let tokenBox = Mutex<UInt64>(0)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<ICMPEchoOutcome, Never>) in
                if Task.isCancelled {
                    continuation.resume(returning: .notSent(.error, "cancelled"))
                    return
                }
                let key = ICMPAddressKey(destination)
                let realtime = Self.realtimeNanos()
                let now = clock.now
                var others = 0  // echoes already pending: each may latch an error before this send
                let registration: (token: UInt64, sequence: UInt16, nonce: UInt64, wake: Bool)? = state.withLock { s in
                    guard !s.retired, s.pending.count < Int(UInt16.max) else { return nil }
                    others = s.pending.count
                    let (token, sequence, nonce) = s.register(
                        to: key, payloadSize: payloadSize, hopLimited: hopLimit != nil, deadline: deadline,
                        sentAt: now, realtime: realtime, secret: secret, waiter: .one(continuation))
                    s.sendsInFlight += 1
                    let wake = s.wakeAt.map { deadline < $0 } ?? true
                    if wake { s.wakeAt = deadline }
                    return (token, sequence, nonce, wake)
                }
                guard let registration else {
                    continuation.resume(returning: .notSent(.error, "ICMP socket closed or saturated"))
                    return
                }
                tokenBox.withLock { $0 = registration.token }
                if registration.wake { wake() }
                let packet = ICMPPacket.echoRequest(
                    family: family, identifier: identifier, sequence: registration.sequence,
                    nonce: registration.nonce, payloadSize: payloadSize)
                var sendErrno: Int32 = 0
                var retries = 0
                while true {
                    let send = {
                        packet.withUnsafeBytes { bytes in
                            destination.withSockAddr {
                                sendto(self.fd, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT), $0, $1)
                            }
                        }
                    }
                    let rc: Int
                    if let hopLimit {
                        rc = hopLock.withLock { current in
                            let limit = Int32(clamping: min(max(hopLimit, 1), 255))
                            if current != limit {
                                guard setHopLimit(limit) else { return -1 }
                                current = limit
                            }
                            return send()
                        }
                    } else {
                        rc = send()
                    }
                    if rc >= 0 {
                        sendErrno = 0
                        break
                    }
                    sendErrno = errno
                    if sendErrno == EINTR { continue }
                    // A ping socket with IP_RECVERR also latches each ICMP error in sk_err, and the
                    // next send on the socket fails with it (unsent), whatever its destination. Reading
                    // the error clears it: a latched error does not repeat, a genuine one does. Each
                    // echo already pending on the socket may latch one error meanwhile (capped).
                    if kind == .datagram, retries < 3 + min(others, 64),
                        Self.latchableErrors.contains(sendErrno)
                    {
                        retries += 1
                        continue
                    }
                    break
                }
                sendFinished()
                if sendErrno != 0 {
                    complete(registration.token, .sendFailure(sendErrno, destination: destination))
                    // A bound interface that vanished (or was re-created with a new index) leaves the
                    // socket useless: retire it so the engine opens a fresh one next time.
                    if interface != nil, sendErrno == ENODEV || sendErrno == ENXIO { retire() }
                }
            }
        } onCancel: {
            let token = tokenBox.withLock { $0 }
            if token != 0 { complete(token, .abandoned("cancelled")) }
        }
    }

    /// Sets the socket's unicast TTL (IPv4) or hop limit (IPv6); false with errno set.
    private func setHopLimit(_ limit: Int32) -> Bool {
        var value = limit
        let rc =
            family == .ipv4
            ? setsockopt(fd, Int32(IPPROTO_IP), IP_TTL, &value, 4)
            : setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_UNICAST_HOPS, &value, 4)
        return rc == 0
    }

    /// The errnos ICMP errors turn into (icmp_err_convert, icmpv6_err_convert).
    package static let latchableErrors: Set<Int32> = [
        ENETUNREACH, EHOSTUNREACH, ENOPROTOOPT, ECONNREFUSED, EMSGSIZE, EOPNOTSUPP, EHOSTDOWN, ENONET, EACCES, EPROTO,
    ]

    /// Completes the pending echo `token` (if it is still pending) with `outcome`.
    package func complete(_ token: UInt64, _ outcome: ICMPEchoOutcome) {
        let settled: Settled = state.withLock { s in
            var settled = Settled()
            let sequence = UInt16(truncatingIfNeeded: token)
            guard let p = s.pending[sequence], p.token == token else { return settled }
            s.pending[sequence] = nil
            s.settle(p, outcome, into: &settled)
            return settled
        }
        settled.resume()
    }

    /// Ends a send; closes the descriptor if the receive thread already finished and this was the last send.
    private func sendFinished() {
        state.withLock { s in
            s.sendsInFlight -= 1
            closeIfUnused(&s)
        }
    }

    /// Closes both descriptors once the receive thread is done and no send uses them. Runs under
    /// the state lock, so no `wake()` or `sendto` can race with the close and hit a reused number.
    package func closeIfUnused(_ s: inout State) {
        guard s.threadDone, s.sendsInFlight == 0, !s.closed else { return }
        s.closed = true
        Glibc.close(fd)
        Glibc.close(wakeFD)
    }

    package static func realtimeNanos() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    /// True once the socket no longer accepts echoes (closed, or its interface vanished).
    package var isRetired: Bool { state.withLock { $0.retired } }

    /// Echoes in flight (tests check that nothing leaks).
    package var pendingCount: Int { state.withLock { $0.pending.count } }

    /// Stops the socket: new echoes fail, pending echoes fail, the thread closes the descriptor.
    package func retire() {
        state.withLock { s in
            s.retired = true
            if !s.closed { wake() }
        }
    }

    package func wake() {
        var one: UInt64 = 1
        _ = Glibc.write(wakeFD, &one, 8)
    }
}

/// An IP address as two words, for matching replies without allocating.
package struct ICMPAddressKey: Hashable, Sendable {
    package var high: UInt64 = 0
    package var low: UInt64 = 0

    /// Reads the address of a `sockaddr_in`/`sockaddr_in6`; zero for other families.
    package init(sockaddr raw: UnsafeRawPointer) {
        switch Int32(raw.loadUnaligned(as: sa_family_t.self)) {
        case AF_INET: high = UInt64(raw.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
        case AF_INET6:
            high = raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            low = raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self)
        default: break
        }
    }

    package init(_ address: SocketAddress) {
        self = address.withSockAddr { p, _ in ICMPAddressKey(sockaddr: UnsafeRawPointer(p)) }
    }

    /// From raw address bytes (4 or 16), in the same layout as from a sockaddr.
    package init(bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            if raw.count == 4 { high = UInt64(raw.loadUnaligned(as: UInt32.self)) }
            if raw.count == 16 {
                high = raw.loadUnaligned(as: UInt64.self)
                low = raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            }
        }
    }
}
