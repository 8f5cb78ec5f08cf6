import CShim
import Dispatch
import Glibc
import Synchronization

/// A small HTTP/1.1 server on POSIX sockets: one accept thread and one thread per connection
/// (the simplest design with the steadiest tail latency on this class of machine; see
/// LINUX_SWIFT_NOTES §5), a hard bound on concurrent connections, keep-alive and pipelining,
/// and deadlines against slow or hostile clients.
///
/// Not for: serving the public internet or TLS. Handlers are synchronous and must not block for
/// long; they run on the connection's thread.
package final class HTTPServer: Sendable {
    package typealias Handler = @Sendable (HTTPRequest) -> HTTPResponse

    package struct Options: Sendable {
        /// Connections served at once; more are answered 503 and closed.
        package var maxConnections = 64
        /// Time allowed for a whole request head to arrive once its first byte has.
        package var requestTimeout: Duration = .seconds(10)
        /// How long an idle keep-alive connection is kept.
        package var idleTimeout: Duration = .seconds(60)
        /// Time allowed to write one response.
        package var writeTimeout: Duration = .seconds(10)
        package var limits = HTTPRequestParser.Limits()
        package init() {}
    }

    package let boundAddress: SocketAddress
    private let listenFD: Int32
    private let stopFD: Int32
    private let options: Options
    private let handler: Handler
    private let logger: Logger
    private let active = Atomic<Int>(0)
    private let acceptLoopDone = Atomic<Bool>(false)
    private let stopping = Atomic<Bool>(false)
    /// Signalled when the accept loop ends and when a connection ends, so `shutdown` waits for
    /// events instead of polling.
    private let somethingEnded = DispatchSemaphore(value: 0)
    /// Counters for the server's own metrics, if a registry is given.
    private let rejected: Counter?

    package init(
        listen: ListenAddress, options: Options = Options(), logger: Logger = Logger(),
        registry: MetricsRegistry? = nil, handler: @escaping Handler
    ) throws(Errno) {
        self.options = options
        self.handler = handler
        self.logger = logger
        rejected = registry?.counter(MetricCatalog.exporterHttpRejectedConnectionsTotal).labels()
        let fd = try Self.openListener(listen)
        listenFD = fd
        var storage = sockaddr_storage()
        var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        boundAddress = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress($0, length: len) }
        }
        stopFD = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        if stopFD < 0 { throw Errno.current }
    }

    private static func openListener(_ listen: ListenAddress) throws(Errno) -> Int32 {
        let wildcard = listen.host.isEmpty
        var candidates: [SocketAddress] = []
        if wildcard {
            candidates = [
                SocketAddress(ip: "::", port: listen.port)!, SocketAddress(ip: "0.0.0.0", port: listen.port)!,
            ]
        } else if let a = SocketAddress(ip: listen.host, port: listen.port) {
            candidates = [a]
        }
        var lastError = Errno(EINVAL)
        for address in candidates {
            let fd = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            if fd < 0 {
                lastError = Errno.current
                continue
            }
            do throws(Errno) {
                try setSocketOption(fd, SOL_SOCKET, SO_REUSEADDR, 1)
                if address.family == AF_INET6 && wildcard {
                    try setSocketOption(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, 0)
                }
                let rc = address.withSockAddr { bind(fd, $0, $1) }
                if rc != 0 { throw Errno.current }
                if Glibc.listen(fd, 512) != 0 { throw Errno.current }
                return fd
            } catch {
                lastError = error
                close(fd)
            }
        }
        throw lastError
    }

    /// Starts the accept thread. Call once.
    package func start() {
        startThread(name: "http-accept") { [self] in acceptLoop() }
    }

    /// Stops accepting, closes idle connections, lets in-flight responses finish for up to
    /// `grace`, then returns. Safe to call more than once.
    package func shutdown(grace: Duration = .seconds(2)) {
        if stopping.exchange(true, ordering: .acquiringAndReleasing) { return }
        var one: UInt64 = 1
        _ = write(stopFD, &one, 8)
        let deadline =
            DispatchTime.now()
            + .nanoseconds(
                Int(grace.components.seconds) * 1_000_000_000 + Int(grace.components.attoseconds / 1_000_000_000))
        while active.load(ordering: .acquiring) > 0 || !acceptLoopDone.load(ordering: .acquiring) {
            if somethingEnded.wait(timeout: deadline) == .timedOut { return }
        }
    }

    /// Connections being served now.
    package var activeConnections: Int { active.load(ordering: .relaxed) }

    private func acceptLoop() {
        defer {
            close(listenFD)
            acceptLoopDone.store(true, ordering: .releasing)
            somethingEnded.signal()
        }
        while !stopping.load(ordering: .acquiring) {
            var fds = [
                pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0),
                pollfd(fd: stopFD, events: Int16(POLLIN), revents: 0),
            ]
            let n = poll(&fds, 2, -1)
            if n < 0 {
                if errno == EINTR { continue }
                logger.error("poll on listener failed", ("err", Errno.current.description))
                return
            }
            if fds[1].revents != 0 { return }
            let fd = cshim_accept4(listenFD, nil, nil, Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue))
            if fd < 0 {
                let e = errno
                // EMFILE/ENFILE: out of descriptors; back off instead of spinning.
                if e == EMFILE || e == ENFILE {
                    logger.warn("accept failed, out of file descriptors")
                    usleep(50_000)
                }
                continue
            }
            if active.load(ordering: .relaxed) >= options.maxConnections {
                rejected?.inc()
                let busy = HTTPResponse(status: 503, text: "too many connections\n")
                _ = sendAll(
                    fd, [busy.head(keepAlive: false), busy.body], deadline: ContinuousClock.now + .milliseconds(100))
                close(fd)
                continue
            }
            active.add(1, ordering: .relaxed)
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(4))
            startThread(name: "http-conn") { [self] in
                serve(fd)
                close(fd)
                active.subtract(1, ordering: .releasing)
                somethingEnded.signal()
            }
        }
    }

    private enum ReadResult { case data, closed, timedOut, stopped }

    private func serve(_ fd: Int32) {
        let parser = HTTPRequestParser(limits: options.limits)
        let clock = ContinuousClock()
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        var requestStart: ContinuousClock.Instant?
        while true {
            switch parser.parse(buffer[...]) {
            case .request(let request, let consumed):
                buffer.removeFirst(consumed)
                requestStart = buffer.isEmpty ? nil : clock.now
                let response = handler(request)
                let keepAlive = request.keepAlive && !stopping.load(ordering: .relaxed)
                if request.method == "HEAD" {
                    // HEAD: the same headers (and length) as GET, no body.
                    let head = response.head(keepAlive: keepAlive)
                    guard sendAll(fd, [head], deadline: clock.now + options.writeTimeout) else { return }
                } else {
                    guard
                        sendAll(
                            fd, [response.head(keepAlive: keepAlive), response.body],
                            deadline: clock.now + options.writeTimeout)
                    else { return }
                }
                if !keepAlive { return }
                continue
            case .reject(let status, let message):
                let response = HTTPResponse(status: status, text: message + "\n")
                _ = sendAll(fd, [response.head(keepAlive: false), response.body], deadline: clock.now + .seconds(1))
                logger.debug("rejected request", ("status", String(status)), ("reason", message))
                return
            case .incomplete:
                break
            }
            if buffer.isEmpty && stopping.load(ordering: .relaxed) { return }
            let deadline = requestStart.map { $0 + options.requestTimeout } ?? clock.now + options.idleTimeout
            switch readMore(fd, into: &buffer, chunk: &chunk, deadline: deadline) {
            case .data:
                if requestStart == nil { requestStart = clock.now }
            case .closed, .stopped:
                return
            case .timedOut:
                if !buffer.isEmpty {
                    let response = HTTPResponse(status: 408, text: "request timeout\n")
                    _ = sendAll(
                        fd, [response.head(keepAlive: false), response.body], deadline: clock.now + .seconds(1))
                }
                return
            }
        }
    }

    private func readMore(
        _ fd: Int32, into buffer: inout [UInt8], chunk: inout [UInt8], deadline: ContinuousClock.Instant
    ) -> ReadResult {
        let clock = ContinuousClock()
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                buffer.append(contentsOf: chunk[0..<n])
                return .data
            }
            if n == 0 { return .closed }
            let e = errno
            if e == EINTR { continue }
            if e != EAGAIN && e != EWOULDBLOCK { return .closed }
            let remaining = clock.now.duration(to: deadline)
            if remaining <= .zero { return .timedOut }
            // While idle between requests, a shutdown closes the connection at once.
            var fds = [
                pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                pollfd(fd: stopFD, events: Int16(POLLIN), revents: 0),
            ]
            let watchStop = buffer.isEmpty
            let rc = poll(&fds, watchStop ? 2 : 1, Int32(clamping: remaining.milliseconds + 1))
            if rc < 0 && errno != EINTR { return .closed }
            if watchStop && fds[1].revents != 0 { return .stopped }
        }
    }

    /// Sends `parts` in order (head, then body: no copy of a multi-megabyte scrape into one
    /// buffer). All parts but the last go with MSG_MORE, so the kernel packs the head with the
    /// start of the body instead of sending a small segment that Nagle then holds up.
    private func sendAll(_ fd: Int32, _ parts: [[UInt8]], deadline: ContinuousClock.Instant) -> Bool {
        let clock = ContinuousClock()
        let last = parts.lastIndex { !$0.isEmpty }
        for (index, bytes) in parts.enumerated() where !bytes.isEmpty {
            let flags = Int32(MSG_NOSIGNAL) | (index == last ? 0 : Int32(MSG_MORE))
            var offset = 0
            while offset < bytes.count {
                let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, flags) }
                if n > 0 {
                    offset += n
                    continue
                }
                let e = errno
                if n < 0 && e == EINTR { continue }
                guard n < 0 && (e == EAGAIN || e == EWOULDBLOCK) else { return false }
                let remaining = clock.now.duration(to: deadline)
                if remaining <= .zero { return false }
                var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&p, 1, Int32(clamping: remaining.milliseconds + 1))
            }
        }
        return true
    }
}
