import COpenSSL
import CShim
import Glibc
import ReachabilityExporter
import ReachabilityVerdict

/// One accepted connection of a `LoopbackHTTPServer`, used by a behaviour on the connection's
/// own thread: blocking reads and writes (through TLS when the server has an identity) that
/// give up when the server stops. The server closes the descriptor afterwards.
package final class LoopbackConnection {
    let fd: Int32
    private unowned let server: LoopbackHTTPServer
    private let identity: LoopbackTLSIdentity?
    private var ssl: OpaquePointer?
    /// Bytes read past what `readExactly` returned so far.
    private var pending: [UInt8] = []

    init(fd: Int32, server: LoopbackHTTPServer, tls: LoopbackTLSIdentity?) {
        self.fd = fd
        self.server = server
        self.identity = tls
    }

    /// True once the server is stopping: loops in behaviours must end.
    package var isStopped: Bool { server.isStopped }

    /// Runs the TLS server handshake when the server has an identity; false if it failed
    /// (for example because the client refused the certificate).
    func acceptTLS() -> Bool {
        guard let identity else { return true }
        guard let ssl = SSL_new(identity.context) else { return false }
        self.ssl = ssl
        SSL_set_fd(ssl, fd)
        return SSL_accept(ssl) == 1
    }

    func finish() {
        if let ssl { SSL_free(ssl) }
        ssl = nil
    }

    /// Reads a request head (up to the blank line, at most 64 KiB), records it on the server
    /// and returns it; nil if the peer closed, the server stopped or 10 s passed.
    @discardableResult
    package func readRequest() -> String? {
        var head: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while head.count < 65_536 {
            guard case .data(let n) = read(into: &buffer) else { return nil }
            head.append(contentsOf: buffer[0..<n])
            if let end = head.firstRange(of: Array("\r\n\r\n".utf8)) {
                let text = String(decoding: head[..<end.lowerBound], as: UTF8.self)
                server.record(request: text)
                return text
            }
        }
        return nil
    }

    /// Reads exactly `count` bytes (buffered across calls); nil if the peer closed, the server
    /// stopped or 10 s passed first.
    package func readExactly(_ count: Int) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while pending.count < count {
            guard case .data(let n) = read(into: &buffer) else { return nil }
            pending.append(contentsOf: buffer[0..<n])
        }
        defer { pending.removeFirst(count) }
        return Array(pending.prefix(count))
    }

    /// Connects to `host:port`, sends `initial`, then copies bytes both ways until either side
    /// closes, the server stops or nothing moves for 5 s (a plain connection only: for the
    /// test forward proxy). False if the upstream connection failed.
    @discardableResult
    package func splice(toHost host: String, port: UInt16, initial: [UInt8]) -> Bool {
        guard let address = SocketAddress(ip: host, port: port) else { return false }
        let upstream = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard upstream >= 0 else { return false }
        defer { Glibc.close(upstream) }
        guard address.withSockAddr({ Glibc.connect(upstream, $0, $1) }) == 0 else { return false }
        guard Self.sendAll(upstream, initial) else { return false }
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while !isStopped {
            var fds = [
                pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                pollfd(fd: upstream, events: Int16(POLLIN), revents: 0),
                pollfd(fd: server.stopFD, events: Int16(POLLIN), revents: 0),
            ]
            guard poll(&fds, 3, 5_000) > 0, fds[2].revents == 0 else { return true }
            for (from, to) in [(fd, upstream), (upstream, fd)] {
                let i = from == fd ? 0 : 1
                guard fds[i].revents != 0 else { continue }
                let n = buffer.withUnsafeMutableBytes { Glibc.recv(from, $0.baseAddress, $0.count, 0) }
                guard n > 0, Self.sendAll(to, Array(buffer[0..<n])) else { return true }
            }
        }
        return true
    }

    private static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return false }
            offset += n
        }
        return true
    }

    /// Records a line in the server's request log (what `requests` returns).
    package func record(request: String) { server.record(request: request) }

    /// Writes all bytes; false if the peer went away or the server stopped.
    @discardableResult
    package func write(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            if isStopped { return false }
            let n: Int = bytes.withUnsafeBytes { raw in
                let start = raw.baseAddress! + offset
                if let ssl { return Int(SSL_write(ssl, start, Int32(raw.count - offset))) }
                return Glibc.send(fd, start, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if n <= 0 {
                if ssl == nil && n < 0 && errno == EINTR { continue }
                return false
            }
            offset += n
        }
        return true
    }

    @discardableResult
    package func write(_ text: String) -> Bool { write(Array(text.utf8)) }

    /// Sleeps up to `milliseconds`, waking early (and returning false) when the server stops.
    @discardableResult
    package func pause(milliseconds: Int32) -> Bool {
        var p = pollfd(fd: server.stopFD, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, milliseconds) == 0
    }

    /// Keeps the connection open and silent (discarding input) until the peer closes it, an
    /// error occurs or the server stops.
    package func holdOpen() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !isStopped {
            switch read(into: &buffer, timeoutMS: 200) {
            case .data, .timedOut: continue
            case .end, .failed: return
            }
        }
    }

    /// Makes the coming close send a TCP RST instead of a FIN (SO_LINGER with a zero timeout).
    package func resetOnClose() {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
    }

    private enum ReadOutcome {
        case data(Int)
        case end, timedOut, failed
    }

    /// Reads what is available, waiting up to `timeoutMS`; `.failed` also when the server stops.
    private func read(into buffer: inout [UInt8], timeoutMS: Int32 = 10_000) -> ReadOutcome {
        if ssl == nil || SSL_pending(ssl) == 0 {
            var fds = [
                pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                pollfd(fd: server.stopFD, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&fds, 2, timeoutMS)
            if ready == 0 { return .timedOut }
            if ready < 0 || fds[1].revents != 0 { return .failed }
        }
        let n: Int = buffer.withUnsafeMutableBytes { raw in
            if let ssl {
                let n = SSL_read(ssl, raw.baseAddress, Int32(raw.count))
                if n > 0 { return Int(n) }
                return SSL_get_error(ssl, n) == SSL_ERROR_ZERO_RETURN ? 0 : -1
            }
            return Glibc.recv(fd, raw.baseAddress, raw.count, 0)
        }
        return n > 0 ? .data(n) : n == 0 ? .end : .failed
    }
}
