import COpenSSL
import Glibc

/// TLS (OpenSSL) over a connected non-blocking `StreamSocket`. OpenSSL's `SSL_ERROR_WANT_READ` /
/// `WANT_WRITE` turn into `Reactor` waits, so no call blocks a thread and every step honours the
/// round's deadline. Owns the socket; frees the `SSL` and closes the socket on deinit.
///
/// Not for: servers, session reuse or renegotiation. Not `Sendable`: one task owns it.
package final class TLSConnection: ByteStream {
    /// What the handshake settled on, for `HTTPDetail`.
    package struct Summary: Sendable, Equatable {
        /// `TLSv1.3`, `TLSv1.2`.
        package var version: String
        package var cipher: String
        /// The leaf certificate's notAfter in seconds since the Unix epoch, when a certificate came.
        package var certificateNotAfter: Double?
    }

    private let ssl: OpaquePointer
    private let socket: StreamSocket
    /// False under insecure-skip-verify, where a recorded verify result must not be blamed.
    private let verifies: Bool
    /// Filled by `handshake(deadline:)`.
    package private(set) var summary = Summary(version: "", cipher: "", certificateNotAfter: nil)

    /// Prepares TLS over `socket` (which it takes over). `serverName` is sent as SNI (unless it is
    /// an IP literal) and is the name or IP the certificate must match when the context verifies.
    package init(over socket: StreamSocket, context: TLSContext, serverName: String) throws(StreamError) {
        guard let ssl = SSL_new(context.pointer) else {
            throw .tls("SSL_new failed: \(TLSContext.drainErrors())")
        }
        self.ssl = ssl
        self.socket = socket
        self.verifies = !context.options.insecureSkipVerify
        if SocketAddress(ip: serverName) == nil {
            _ = cossl_set_sni(ssl, serverName)
        }
        if verifies, SSL_set1_host(ssl, serverName) != 1 {
            throw .tls("cannot set the verification host \(serverName)")
        }
        guard SSL_set_fd(ssl, socket.fd) == 1 else { throw .tls("SSL_set_fd failed") }
    }

    /// Prepares the server side of TLS over an accepted `socket`, for `acceptHandshake`.
    package init(serverOver socket: StreamSocket, context: TLSServerContext) throws(StreamError) {
        guard let ssl = SSL_new(context.pointer) else {
            throw .tls("SSL_new failed: \(TLSContext.drainErrors())")
        }
        self.ssl = ssl
        self.socket = socket
        self.verifies = false
        guard SSL_set_fd(ssl, socket.fd) == 1 else { throw .tls("SSL_set_fd failed") }
    }

    deinit { SSL_free(ssl) }  // the socket closes its descriptor after this

    /// Runs the server handshake by `deadline` (the web server's side).
    package func acceptHandshake(deadline: ContinuousClock.Instant) async throws(StreamError) {
        while true {
            ERR_clear_error()
            let rc = SSL_accept(ssl)
            let savedErrno = errno
            if rc == 1 { return }
            try await handle(SSL_get_error(ssl, rc), errno: savedErrno, during: "handshake", deadline: deadline)
        }
    }

    /// Whether the client's certificate has one of the SANs `context` allows.
    package func peerHasAllowedSAN(_ context: TLSServerContext) -> Bool { context.peerHasAllowedSAN(ssl) }

    /// Runs the client handshake by `deadline`. Verification failures throw `.tls` with OpenSSL's
    /// verify error text. Afterwards — also after a failure — `summary` holds what is known: on a
    /// refused certificate, its notAfter (so an expired certificate still reports its expiry).
    package func handshake(deadline: ContinuousClock.Instant) async throws(StreamError) {
        defer { summary = readSummary() }
        while true {
            ERR_clear_error()
            let rc = SSL_connect(ssl)
            let savedErrno = errno
            if rc == 1 { return }
            try await handle(SSL_get_error(ssl, rc), errno: savedErrno, during: "handshake", deadline: deadline)
        }
    }

    package func write(_ bytes: [UInt8], deadline: ContinuousClock.Instant) async throws(StreamError) {
        guard !bytes.isEmpty else { return }
        while true {
            ERR_clear_error()
            // A retried SSL_write must repeat the same arguments; `bytes` does not change.
            let rc = bytes.withUnsafeBytes { SSL_write(ssl, $0.baseAddress, Int32($0.count)) }
            let savedErrno = errno
            if rc > 0 { return }
            try await handle(SSL_get_error(ssl, rc), errno: savedErrno, during: "write", deadline: deadline)
        }
    }

    package func read(into buffer: inout [UInt8], deadline: ContinuousClock.Instant) async throws(StreamError) -> Int {
        while true {
            ERR_clear_error()
            let rc = buffer.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32(clamping: $0.count)) }
            let savedErrno = errno
            if rc > 0 { return Int(rc) }
            let code = SSL_get_error(ssl, rc)
            if code == SSL_ERROR_ZERO_RETURN { return 0 }
            if code == SSL_ERROR_SYSCALL && savedErrno == 0 { return 0 }  // EOF without close_notify
            try await handle(code, errno: savedErrno, during: "read", deadline: deadline)
        }
    }

    /// Waits when OpenSSL asks to, or throws the failure the error code stands for.
    package func waitReadable(deadline: ContinuousClock.Instant) async throws(StreamError) {
        if cossl_has_pending(ssl) != 0 { return }
        try await socket.waitReadable(deadline: deadline)
    }

    private func handle(_ code: Int32, errno savedErrno: Int32, during step: String, deadline: ContinuousClock.Instant)
        async throws(StreamError)
    {
        switch code {
        case SSL_ERROR_WANT_READ:
            try await socket.wait(writable: false, deadline: deadline)
        case SSL_ERROR_WANT_WRITE:
            try await socket.wait(writable: true, deadline: deadline)
        case SSL_ERROR_SYSCALL:
            if savedErrno != 0 { throw .system(step: "tls \(step)", Errno(savedErrno)) }
            throw .tls("connection closed during TLS \(step)")
        case SSL_ERROR_ZERO_RETURN:
            throw .tls("peer closed the TLS session during \(step)")
        default:
            let verify = SSL_get_verify_result(ssl)
            if verifies, verify != X509_V_OK {
                let text = X509_verify_cert_error_string(verify).map { String(cString: $0) } ?? "error \(verify)"
                ERR_clear_error()
                // OpenSSL checks the name only after the chain verified: a mismatch means a
                // trusted certificate for someone else.
                if verify == X509_V_ERR_HOSTNAME_MISMATCH || verify == X509_V_ERR_IP_ADDRESS_MISMATCH {
                    throw .certificateNameMismatch("certificate verify failed: \(text)")
                }
                throw .tls("certificate verify failed: \(text)")
            }
            throw .tls("TLS \(step) failed: \(TLSContext.drainErrors())")
        }
    }

    private func readSummary() -> Summary {
        let version = SSL_get_version(ssl).map { String(cString: $0) } ?? "unknown"
        let cipher =
            SSL_get_current_cipher(ssl).flatMap { SSL_CIPHER_get_name($0) }.map { String(cString: $0) } ?? "unknown"
        // The verified peer certificate, or else the leaf the server sent (set even when the
        // chain was refused: the client's peer chain starts with the leaf).
        var leaf = SSL_get0_peer_certificate(ssl)
        if leaf == nil, let chain = SSL_get_peer_cert_chain(ssl), OPENSSL_sk_num(chain) > 0 {
            leaf = OpaquePointer(OPENSSL_sk_value(chain, 0))
        }
        var notAfter: Double?
        var tm = Glibc.tm()
        if let leaf, let time = X509_get0_notAfter(leaf), ASN1_TIME_to_tm(time, &tm) == 1 {
            notAfter = Double(timegm(&tm))
        }
        return Summary(version: version, cipher: cipher, certificateNotAfter: notAfter)
    }
}
