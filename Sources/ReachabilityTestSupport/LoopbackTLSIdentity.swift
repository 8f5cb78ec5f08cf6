import COpenSSL

/// A server certificate and key for `LoopbackHTTPServer`, as an OpenSSL server `SSL_CTX`.
///
/// Thread safety: configured once in `init`, then only used to create `SSL` objects, which
/// OpenSSL allows from many threads; hence `@unchecked Sendable` without a lock.
package final class LoopbackTLSIdentity: @unchecked Sendable {
    let context: OpaquePointer

    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    /// Loads a PEM certificate (chain) and its private key.
    package init(certificateFile: String, keyFile: String) throws(Failure) {
        guard let ctx = SSL_CTX_new(TLS_server_method()) else { throw Failure(description: "SSL_CTX_new failed") }
        context = ctx
        guard SSL_CTX_use_certificate_chain_file(ctx, certificateFile) == 1 else {
            throw Failure(description: "cannot load certificate \(certificateFile)")
        }
        guard SSL_CTX_use_PrivateKey_file(ctx, keyFile, SSL_FILETYPE_PEM) == 1, SSL_CTX_check_private_key(ctx) == 1
        else {
            throw Failure(description: "cannot load key \(keyFile)")
        }
    }

    deinit { SSL_CTX_free(context) }
}
