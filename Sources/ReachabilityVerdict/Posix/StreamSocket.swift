import CShim
import Glibc

/// Why a stream operation (connect, TLS handshake, read, write) stopped.
package enum StreamError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The deadline passed first.
    case timedOut
    /// The task was cancelled.
    case cancelled
    /// A system call failed; `step` names it (`socket`, `bind to device`, `connect`, `recv`, `send`).
    case system(step: String, Errno)
    /// The TLS layer failed: a handshake alert, a certificate the verifier refused, or a record error.
    case tls(String)
    /// The certificate chain verified, but for another name or address than the one asked for:
    /// a certified server answered in place of the target.
    case certificateNameMismatch(String)

    package var description: String {
        switch self {
        case .timedOut: "timed out"
        case .cancelled: "cancelled"
        case .system(let step, let errno): "\(step): \(errno)"
        case .tls(let text): text
        case .certificateNameMismatch(let text): text
        }
    }
}

extension StreamError {
    /// A coarse class of the failure, so callers above `Posix/` need no errno values.
    package enum Kind: Sendable, Equatable {
        case timedOut, cancelled, refused, reset, unreachable, permission, tls, other
    }

    package var kind: Kind {
        switch self {
        case .timedOut: return .timedOut
        case .cancelled: return .cancelled
        case .tls, .certificateNameMismatch: return .tls
        case .system(_, let errno):
            switch errno.code {
            case ECONNREFUSED: return .refused
            case ECONNRESET, EPIPE, ECONNABORTED: return .reset
            case ENETUNREACH, EHOSTUNREACH, ENETDOWN, EHOSTDOWN, EADDRNOTAVAIL, ENODEV, ENONET: return .unreachable
            case ETIMEDOUT: return .timedOut
            case EACCES, EPERM: return .permission
            default: return .other
            }
        }
    }
}

/// A byte stream the HTTP client talks through: plain TCP (`StreamSocket`) or TLS over it
/// (`TLSConnection`). One task owns a stream at a time; every call takes the round's deadline.
package protocol ByteStream: AnyObject {
    /// Writes all of `bytes` or throws.
    func write(_ bytes: [UInt8], deadline: ContinuousClock.Instant) async throws(StreamError)
    /// Reads at most `buffer.count` bytes into the front of `buffer`; returns 0 at end of stream.
    func read(into buffer: inout [UInt8], deadline: ContinuousClock.Instant) async throws(StreamError) -> Int
    /// Waits until a read would find something (data, end of stream or an error), holding no
    /// buffer meanwhile: a server waits with this, then reads.
    func waitReadable(deadline: ContinuousClock.Instant) async throws(StreamError)
}

/// A connected non-blocking TCP socket, waited on through `Reactor.shared`. Closed on deinit.
///
/// Not for: listening sockets, or sharing between tasks (it is deliberately not `Sendable`).
package final class StreamSocket: ByteStream {
    package let fd: Int32
    package let peer: SocketAddress

    /// False for an accepted connection whose descriptor its server closes itself.
    private let ownsDescriptor: Bool
    /// The meter of the task that made it (a probe's): what the connection carried counts into
    /// it when it closes.
    private let meter: TrafficMeter?

    private init(fd: Int32, peer: SocketAddress, ownsDescriptor: Bool = true) {
        self.fd = fd
        self.peer = peer
        self.ownsDescriptor = ownsDescriptor
        meter = ownsDescriptor ? TrafficMeter.current : nil
    }

    /// A connection the web server accepted (non-blocking). The server closes `fd` itself, after
    /// it has forgotten it, so that no other connection's descriptor number is ever touched.
    package static func accepted(_ fd: Int32, peer: SocketAddress) -> StreamSocket {
        StreamSocket(fd: fd, peer: peer, ownsDescriptor: false)
    }

    /// A connection `connectSocket` made; closed on deinit.
    package static func adopting(_ fd: Int32, peer: SocketAddress) -> StreamSocket {
        StreamSocket(fd: fd, peer: peer)
    }

    deinit {
        guard ownsDescriptor else { return }
        meter?.tcpClosing(fd)
        Glibc.close(fd)
    }

    /// Connects to `address`, optionally bound to `interface` (`SO_BINDTODEVICE`, needs
    /// CAP_NET_RAW), finishing by `deadline`. The connect result comes from `SO_ERROR`.
    package static func connect(
        to address: SocketAddress, interface: String? = nil, deadline: ContinuousClock.Instant
    ) async throws(StreamError) -> StreamSocket {
        // The one non-blocking connect of the package (Posix/Connect.swift); only the error type differs.
        switch await connectSocket(to: address, interface: interface, deadline: deadline) {
        case .success(let fd):
            return StreamSocket(fd: fd, peer: address)
        case .failure(let error):
            switch error.kind {
            case .timedOut where error.errno == nil: throw .timedOut
            case .cancelled: throw .cancelled
            default: throw .system(step: error.step, error.errno ?? Errno(EIO))
            }
        }
    }

    package func write(_ bytes: [UInt8], deadline: ContinuousClock.Instant) async throws(StreamError) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if n >= 0 {
                offset += n
                continue
            }
            let err = errno
            if err == EINTR { continue }
            guard err == EAGAIN || err == EWOULDBLOCK else { throw .system(step: "send", Errno(err)) }
            try await wait(writable: true, deadline: deadline)
        }
    }

    package func read(into buffer: inout [UInt8], deadline: ContinuousClock.Instant) async throws(StreamError) -> Int {
        while true {
            let n = buffer.withUnsafeMutableBytes { raw in Glibc.recv(fd, raw.baseAddress, raw.count, 0) }
            if n >= 0 { return n }
            let err = errno
            if err == EINTR { continue }
            guard err == EAGAIN || err == EWOULDBLOCK else { throw .system(step: "recv", Errno(err)) }
            try await wait(writable: false, deadline: deadline)
        }
    }

    package func waitReadable(deadline: ContinuousClock.Instant) async throws(StreamError) {
        try await wait(writable: false, deadline: deadline)
    }

    /// Waits until the first TLS record a client sends is whole in the kernel's receive queue
    /// (or the client sent something that is not a handshake record, or closed), so that a
    /// half-sent ClientHello costs kernel buffer, not an OpenSSL connection and its 16 KiB
    /// buffers. `SO_RCVLOWAT` makes epoll report readability only then: no polling. Returns the
    /// first byte the client sent, when one came.
    @discardableResult
    package func waitForFirstTLSRecord(deadline: ContinuousClock.Instant) async throws(StreamError) -> UInt8? {
        defer { _ = try? setSocketOption(fd, SOL_SOCKET, SO_RCVLOWAT, 1) }
        var header = [UInt8](repeating: 0, count: 5)
        for want in [5, 0] {
            var lowWater = want
            if want == 0 {
                // TLSPlaintext: type 22 (handshake), version, 16-bit length (at most 2^14).
                guard header[0] == 0x16 else { return header[0] }
                let length = Int(header[3]) << 8 | Int(header[4])
                guard length <= 16_384 else { return header[0] }
                lowWater = 5 + length
            }
            _ = try? setSocketOption(fd, SOL_SOCKET, SO_RCVLOWAT, Int32(lowWater))
            try await wait(writable: false, deadline: deadline)
            let n = header.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, 5, Int32(MSG_PEEK)) }
            // End of stream, an error, or fewer bytes than asked (the peer closed): OpenSSL reports it.
            guard n == 5, want == 5 || available() >= lowWater else { return n > 0 ? header[0] : nil }
        }
        return header[0]
    }

    /// Reads and drops what is already queued (at most 64 KiB), then sends FIN.
    package func discardPendingInput() {
        var scratch = [UInt8](repeating: 0, count: 4096)
        for _ in 0..<16 {
            let n = scratch.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n <= 0 { break }
        }
        Glibc.shutdown(fd, Int32(SHUT_WR))
    }

    /// Unsent bytes a connection may queue in the kernel (`TCP_NOTSENT_LOWAT`, set at accept):
    /// past it a write waits, so a client that stops reading pins this much, not a send buffer
    /// grown to megabytes.
    package static let notSentLowWater: Int32 = 128 << 10

    /// Bounds what a server connection may leave unsent (see `notSentLowWater`).
    package func limitUnsent() {
        try? setSocketOption(fd, Int32(IPPROTO_TCP), Int32(TCP_NOTSENT_LOWAT), Self.notSentLowWater)
    }

    /// Waits until everything written so far has gone out to the peer (nothing left unsent,
    /// `SIOCOUTQNSD`), without polling: the low-water mark drops to 1 byte while waiting, so the
    /// kernel reports the socket writable exactly then. A client that pipelines requests and
    /// reads no answer so holds one answer in the kernel, not hundreds.
    package func waitUntilSent(deadline: ContinuousClock.Instant) async throws(StreamError) {
        guard unsent() > 0 else { return }
        try? setSocketOption(fd, Int32(IPPROTO_TCP), Int32(TCP_NOTSENT_LOWAT), 1)
        defer { limitUnsent() }
        while unsent() > 0 { try await wait(writable: true, deadline: deadline) }
    }

    /// Bytes written but not yet sent (SIOCOUTQNSD); 0 when unknown.
    private func unsent() -> Int {
        var count: Int32 = 0
        return ioctl(fd, UInt(0x894B), &count) == 0 ? Int(count) : 0
    }

    /// Bytes in the receive queue (FIONREAD).
    private func available() -> Int {
        var count: Int32 = 0
        return ioctl(fd, UInt(FIONREAD), &count) == 0 ? Int(count) : 0
    }

    /// Waits for the socket to become readable or writable; errors and hang-ups count as ready
    /// (the next call reports them).
    package func wait(writable: Bool, deadline: ContinuousClock.Instant) async throws(StreamError) {
        let outcome =
            writable
            ? await Reactor.shared.waitWritable(fd, deadline: deadline)
            : await Reactor.shared.waitReadable(fd, deadline: deadline)
        switch outcome {
        case .ready: return
        case .timedOut: throw .timedOut
        case .cancelled: throw .cancelled
        }
    }
}
