import COpenSSL

extension TLSServerContext {
    /// The server side of a handshake over memory: `client` (what a client sent, in two writes
    /// split at `split`) goes to a fresh `SSL` from this context, `SSL_accept` runs after each
    /// write. What the fuzzer (fuzz/FuzzTargets.swift, target `tls-handshake`) and its replay
    /// drive: the same context settings, client-certificate checks and SAN test as a real
    /// connection, without a socket. Returns whether the handshake completed and how many
    /// bytes the server answered.
    package func acceptInMemory(_ client: [UInt8], split: Int) -> (completed: Bool, answered: Int) {
        guard let ssl = SSL_new(pointer) else { return (false, 0) }
        defer {
            SSL_free(ssl)  // frees both BIOs
            ERR_clear_error()
        }
        guard let input = BIO_new(BIO_s_mem()) else { return (false, 0) }
        guard let output = BIO_new(BIO_s_mem()) else {
            BIO_free(input)
            return (false, 0)
        }
        SSL_set_bio(ssl, input, output)
        let cut = min(max(split, 0), client.count)
        var completed = false
        for part in [client[..<cut], client[cut...]] {
            if !part.isEmpty { _ = part.withUnsafeBytes { BIO_write(input, $0.baseAddress, Int32($0.count)) } }
            ERR_clear_error()
            let rc = SSL_accept(ssl)
            if rc == 1 {
                completed = true
                _ = peerHasAllowedSAN(ssl)
                break
            }
            let code = SSL_get_error(ssl, rc)
            if code != SSL_ERROR_WANT_READ && code != SSL_ERROR_WANT_WRITE { break }
        }
        return (completed, Int(BIO_ctrl_pending(output)))
    }
}
