import CShim
import Dispatch
import Glibc
import ReachabilityVerdict
import Synchronization

/// The exporter's HTTP/1.1 server: connections are tasks waiting on the epoll `Reactor` (an
/// idle or slow connection costs a descriptor, a suspended task and the bytes it sent so far,
/// not a thread; a half-sent TLS ClientHello waits in the kernel's queue, not in OpenSSL), run
/// by a small pool of threads that grows with the work (`ThreadPoolExecutor`, up to `workers`;
/// one when idle) and also runs the handlers; TLS and basic auth come from the web configuration (`WebSecurity`).
///
/// Limits: `maxConnections` in all and `maxConnectionsPerIP` from one address. When a limit is
/// reached, the oldest connection that is not being answered (a handshake, a half-sent request,
/// an idle keep-alive) gives way to the new one, so no number of slow clients can keep a
/// scrape out; only when every connection is being answered is the new one refused with 503.
/// Deadlines: a TLS handshake and a request head must complete within `requestTimeout` of
/// their first byte (408 for a partial head), an idle keep-alive connection is closed after
/// `idleTimeout`, a response must be written within `writeTimeout`.
///
/// Not for: HTTP/2, request bodies beyond `limits.maxBodyBytes`, or handlers that block for
/// long (they hold one of the pool's threads).
package final class HTTPServer: Sendable {
    package typealias Handler = @Sendable (HTTPRequest) async -> HTTPResponse

    package struct Options: Sendable {
        /// Connections open at once, in all.
        package var maxConnections = 1024
        /// Connections open at once from one IP address.
        package var maxConnectionsPerIP = 256
        /// Time allowed for a TLS handshake, and for a whole request head once its first byte came.
        package var requestTimeout: Duration = .seconds(10)
        /// How long an idle keep-alive connection is kept.
        package var idleTimeout: Duration = .seconds(60)
        /// Time allowed to produce and write one response.
        package var writeTimeout: Duration = .seconds(10)
        /// Threads, at most, that run the connections and their handlers (and bcrypt checks); the
        /// pool starts one more only when a job finds none idle, and lets them go after 30 s idle.
        /// A scrape waiting for a shared render (`RenderCoalescer`) holds none; more than the
        /// cores so that blocking work (bcrypt, a render) cannot hold up the rest.
        package var workers = 16
        package var limits = HTTPRequestParser.Limits()
        package init() {}
    }

    /// Where each listener is bound, in the order given (port 0 resolved).
    package let boundAddresses: [SocketAddress]
    package var boundAddress: SocketAddress { boundAddresses[0] }
    private let listenFDs: [Int32]
    private let stopFD: Int32
    private let options: Options
    let handler: Handler
    let security: WebSecurity?
    private let logger: Logger
    private let executor: ThreadPoolExecutor
    private let table = Mutex(Table())
    private let acceptLoopDone = Atomic<Bool>(false)
    private let somethingEnded = DispatchSemaphore(value: 0)
    private let rejected: Counter?
    /// The last body compressed and its gzip (`compressed`, in HTTPServer+Encoding.swift).
    let lastGzip = Mutex(SharedGzip())

    /// Every open connection, for the limits and for shutdown. A descriptor is shut down (never
    /// closed) through this table, under its lock, and closed only after it left the table.
    private struct Table {
        struct Entry {
            let fd: Int32
            let ip: String
            let since: UInt64
            var answering = false
        }
        var entries: [UInt64: Entry] = [:]
        var perIP: [String: Int] = [:]
        var nextID: UInt64 = 0
        var stopping = false

        mutating func remove(_ id: UInt64) -> Bool {
            guard let e = entries.removeValue(forKey: id) else { return false }
            perIP[e.ip, default: 1] -= 1
            if perIP[e.ip] == 0 { perIP[e.ip] = nil }
            return true
        }

        /// The oldest connection not being answered, among those `matching`.
        func victim(_ matching: (Entry) -> Bool) -> UInt64? {
            entries.filter { !$0.value.answering && matching($0.value) }.min { $0.value.since < $1.value.since }?.key
        }
    }

    package convenience init(
        listen: ListenAddress, options: Options = Options(), security: WebSecurity? = nil, logger: Logger = Logger(),
        registry: MetricsRegistry? = nil, handler: @escaping Handler
    ) throws(Errno) {
        try self.init(
            listeners: [.address(listen)], options: options, security: security, logger: logger, registry: registry,
            handler: handler)
    }

    /// Serves on every listener (at least one); a listener that cannot be opened closes those
    /// opened before it and throws.
    package init(
        listeners: [Listener], options: Options = Options(), security: WebSecurity? = nil, logger: Logger = Logger(),
        registry: MetricsRegistry? = nil, handler: @escaping Handler
    ) throws(Errno) {
        precondition(!listeners.isEmpty, "HTTPServer needs a listener")
        self.options = options
        self.handler = handler
        self.security = security
        self.logger = logger
        executor = ThreadPoolExecutor(name: "http-worker", threads: options.workers)
        rejected = registry?.counter(MetricCatalog.exporterHttpRejectedConnectionsTotal).labels()
        var fds: [Int32] = []
        do throws(Errno) {
            for listener in listeners { fds.append(try listener.open()) }
            stopFD = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
            if stopFD < 0 { throw Errno.current }
        } catch {
            for fd in fds { close(fd) }
            throw error
        }
        listenFDs = fds
        boundAddresses = fds.map(Self.localAddress)
    }

    /// Starts the accept thread. Call once.
    package func start() {
        startThread(name: "http-accept") { [self] in acceptLoop() }
    }

    /// Stops accepting, closes connections that are not being answered, lets answers in
    /// flight finish for up to `grace`, then returns. Safe to call more than once.
    package func shutdown(grace: Duration = .seconds(2)) {
        let first = table.withLock { t in
            if t.stopping { return false }
            t.stopping = true
            for e in t.entries.values where !e.answering { Glibc.shutdown(e.fd, Int32(SHUT_RDWR)) }
            return true
        }
        guard first else { return }
        var one: UInt64 = 1
        _ = write(stopFD, &one, 8)
        let deadline =
            DispatchTime.now()
            + .nanoseconds(
                Int(grace.components.seconds) * 1_000_000_000 + Int(grace.components.attoseconds / 1_000_000_000))
        while activeConnections > 0 || !acceptLoopDone.load(ordering: .acquiring) {
            if somethingEnded.wait(timeout: deadline) == .timedOut { break }
        }
        // Past the grace: whatever is left is cut.
        table.withLock { t in for e in t.entries.values { Glibc.shutdown(e.fd, Int32(SHUT_RDWR)) } }
    }

    /// Connections open now.
    package var activeConnections: Int { table.withLock { $0.entries.count } }

    // MARK: - Accepting

    private func acceptLoop() {
        defer {
            for fd in listenFDs { close(fd) }
            acceptLoopDone.store(true, ordering: .releasing)
            somethingEnded.signal()
        }
        var lastDescriptorWarning: ContinuousClock.Instant?
        while true {
            var fds =
                [pollfd(fd: stopFD, events: Int16(POLLIN), revents: 0)]
                + listenFDs.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let n = poll(&fds, nfds_t(fds.count), -1)
            if n < 0 {
                if errno == EINTR { continue }
                logger.error("poll on listener failed", ("err", Errno.current.description))
                return
            }
            if fds[0].revents != 0 { return }
            // Drain what is queued on each ready listener, a bounded number per wake-up.
            for ready in fds.dropFirst() where ready.revents != 0 {
                drain(ready.fd, lastDescriptorWarning: &lastDescriptorWarning)
            }
        }
    }

    /// Accepts what is queued on one listener, at most 64 connections.
    private func drain(_ listenFD: Int32, lastDescriptorWarning: inout ContinuousClock.Instant?) {
        for _ in 0..<64 {
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    cshim_accept4(
                        listenFD, $0, &length, Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue))
                }
            }
            if fd < 0 {
                // EMFILE/ENFILE: out of descriptors; back off instead of spinning, and say so
                // once a minute, not at every try.
                if errno == EMFILE || errno == ENFILE {
                    let now = ContinuousClock.now
                    if lastDescriptorWarning.map({ now - $0 >= .seconds(60) }) ?? true {
                        lastDescriptorWarning = now
                        logger.warn("accept failed, out of file descriptors (logged once a minute)")
                    }
                    usleep(50_000)
                }
                break
            }
            let peer = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress($0, length: length) }
            }
            admit(fd, peer: peer)
        }
    }

    /// Makes room for `fd` (evicting the oldest unanswered connection when a limit is reached)
    /// and starts serving it, or refuses it with 503 when every connection is being answered.
    private func admit(_ fd: Int32, peer: SocketAddress) {
        let ip = peer.ip
        let admitted: UInt64? = table.withLock { t in
            if t.stopping { return nil }
            var victim: UInt64?
            if t.perIP[ip, default: 0] >= options.maxConnectionsPerIP {
                guard let v = t.victim({ $0.ip == ip }) else { return nil }
                victim = v
            } else if t.entries.count >= options.maxConnections {
                guard let v = t.victim({ _ in true }) else { return nil }
                victim = v
            }
            if let victim, let e = t.entries[victim] {
                Glibc.shutdown(e.fd, Int32(SHUT_RDWR))
                // Its task sees the shutdown, finds itself gone from the table, and closes the descriptor.
                _ = t.remove(victim)
            }
            let id = t.nextID
            t.nextID += 1
            t.entries[id] = Table.Entry(fd: fd, ip: ip, since: id)
            t.perIP[ip, default: 0] += 1
            return id
        }
        guard let id = admitted else {
            rejected?.inc()
            let busy = HTTPResponse(status: 503, text: "too many connections\n")
            let bytes = busy.head(keepAlive: false) + busy.body
            _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            close(fd)
            return
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(4))
        let config = security?.current()
        Task(executorPreference: executor) { [self] in
            await serve(id, fd: fd, peer: peer, config: config)
            // Forget, then close: an eviction never touches a reused descriptor number.
            table.withLock { t in _ = t.remove(id) }
            close(fd)
            somethingEnded.signal()
        }
    }

    private func setAnswering(_ id: UInt64, _ on: Bool) -> Bool {
        table.withLock { t in
            guard t.entries[id] != nil else { return false }
            t.entries[id]?.answering = on
            return true
        }
    }

    private var isStopping: Bool { table.withLock { $0.stopping } }

    // MARK: - Serving one connection

    // Long on purpose: the life of a connection in one place (handshake, read, answer, keep-alive).
    private func serve(_ id: UInt64, fd: Int32, peer: SocketAddress, config: WebConfig?) async {
        let clock = ContinuousClock()
        let socket = StreamSocket.accepted(fd, peer: peer)
        socket.limitUnsent()
        var stream: any ByteStream = socket
        if let tls = config?.tls {
            do throws(StreamError) {
                let deadline = clock.now + options.requestTimeout
                let first = try await socket.waitForFirstTLSRecord(deadline: deadline)
                if let first, first >= UInt8(ascii: "A") && first <= UInt8(ascii: "Z") {
                    // Plain HTTP on the TLS port: say so in plain HTTP (as Go's servers do), serve nothing.
                    try? await socket.write(Self.plainHTTPOnTLSPort, deadline: clock.now + .seconds(1))
                    // Read what it sent (only peeked so far), so the close is a FIN, not a reset
                    // that could discard the answer before the client reads it.
                    socket.discardPendingInput()
                    return
                }
                let connection = try TLSConnection(serverOver: socket, context: tls)
                try await connection.acceptHandshake(deadline: deadline)
                guard connection.peerHasAllowedSAN(tls) else {
                    security?.countRefusedCertificate()
                    logger.debug("client certificate without an allowed SAN", ("peer", peer.ip))
                    return
                }
                stream = connection
            } catch {
                logger.debug("TLS handshake failed", ("peer", peer.ip), ("err", error.description))
                return
            }
        }
        let parser = HTTPRequestParser(limits: options.limits)
        var buffer: [UInt8] = []
        // Where the parse of the request being read stopped: each read costs what it brought.
        var progress = HTTPRequestParser.Progress()
        var requestStart: ContinuousClock.Instant?
        var sentContinue = false
        var answeredBefore = false
        while true {
            switch parser.parse(buffer[...], resuming: &progress) {
            case .request(let request, let consumed):
                buffer.removeFirst(consumed)
                sentContinue = false
                requestStart = buffer.isEmpty ? nil : clock.now
                // Answered only once the previous answer has left (at once for a client that reads):
                // a client that pipelines and never reads holds at most one answer in the kernel.
                if answeredBefore {
                    do throws(StreamError) {
                        try await socket.waitUntilSent(deadline: clock.now + options.writeTimeout)
                    } catch {
                        return
                    }
                }
                guard setAnswering(id, true) else { return }
                let keepAlive = request.keepAlive && !isStopping
                let parts = await respond(request, config: config, client: peer.ip, keepAlive: keepAlive)
                // From when the answer is ready: a handler that waited (a reload behind a round)
                // still gets its whole write time.
                let deadline = clock.now + options.writeTimeout
                do throws(StreamError) {
                    try await stream.write(parts.head, deadline: deadline)
                    if !parts.body.isEmpty { try await stream.write(parts.body, deadline: deadline) }
                } catch {
                    return
                }
                guard setAnswering(id, false), keepAlive else { return }
                answeredBefore = true
                continue
            case .reject(let status, let message):
                let response = HTTPResponse(status: status, text: message + "\n")
                try? await stream.write(
                    Self.serialize(response, head: false, keepAlive: false), deadline: clock.now + .seconds(1))
                logger.debug("rejected request", ("status", status), ("reason", message))
                return
            case .continueBody:
                if !sentContinue {
                    sentContinue = true
                    do throws(StreamError) {
                        try await stream.write(Self.continueResponse, deadline: clock.now + options.writeTimeout)
                    } catch {
                        return
                    }
                }
            case .incomplete:
                break
            }
            if buffer.isEmpty && isStopping { return }
            let deadline = requestStart.map { $0 + options.requestTimeout } ?? clock.now + options.idleTimeout
            do throws(StreamError) {
                // No read buffer is held while waiting: an idle or slow connection costs its
                // descriptor, its task and what it has sent so far.
                try await stream.waitReadable(deadline: deadline)
                var chunk = [UInt8](repeating: 0, count: 4096)
                let n = try await stream.read(into: &chunk, deadline: deadline)
                if n == 0 { return }
                if buffer.isEmpty { requestStart = clock.now }
                buffer.append(contentsOf: chunk[0..<n])
            } catch {
                if error == .timedOut, !buffer.isEmpty {
                    let response = HTTPResponse(status: 408, text: "request timeout\n")
                    try? await stream.write(
                        Self.serialize(response, head: false, keepAlive: false), deadline: clock.now + .seconds(1))
                }
                return
            }
        }
    }
}
