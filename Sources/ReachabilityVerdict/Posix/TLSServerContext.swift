import COpenSSL
import Glibc

/// The web server's OpenSSL `SSL_CTX`, built from the web configuration's `tls_server_config`.
/// Building it is the check: a certificate or key that does not load, a key that does not
/// match its certificate, an unknown cipher or curve all fail here, naming the key.
///
/// Thread safety: configured in `init`, then only used to create `SSL` objects, which OpenSSL
/// allows from many threads; hence `@unchecked Sendable` without a lock.
package final class TLSServerContext: @unchecked Sendable {
    /// The toolkit's `client_auth_type` values (Go's `tls.ClientAuthType`).
    package enum ClientAuth: String, Sendable, CaseIterable {
        case none = "NoClientCert"
        case request = "RequestClientCert"
        case requireAny = "RequireAnyClientCert"
        case verifyIfGiven = "VerifyClientCertIfGiven"
        case requireAndVerify = "RequireAndVerifyClientCert"
    }

    /// What `tls_server_config` says, with files already read.
    package struct Settings: Sendable, Equatable {
        package var certificatePEM: [UInt8] = []
        package var keyPEM: [UInt8] = []
        package var clientAuth: ClientAuth = .none
        package var clientCAPEM: [UInt8]?
        package var clientAllowedSANs: [String] = []
        /// `TLS10` … `TLS13`.
        package var minVersion = "TLS12"
        package var maxVersion = "TLS13"
        /// Go (IANA) names of TLS 1.2 suites; empty: OpenSSL's defaults.
        package var cipherSuites: [String] = []
        package var preferServerCipherSuites = true
        /// Go names: `X25519`, `CurveP256`, `CurveP384`, `CurveP521`.
        package var curvePreferences: [String] = []
        package init() {}
    }

    /// A setting was refused: `key` is its name in `tls_server_config`.
    package struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        package let key: String
        package let message: String
        package var description: String { "\(key): \(message)" }
    }

    package let pointer: OpaquePointer
    package let settings: Settings

    package static let versions: [String: Int32] = [
        "TLS10": TLS1_VERSION, "TLS11": TLS1_1_VERSION, "TLS12": TLS1_2_VERSION, "TLS13": TLS1_3_VERSION,
    ]
    /// Go's names of the TLS 1.2 suites it offers, and OpenSSL's.
    package static let ciphers: [String: String] = [
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": "ECDHE-ECDSA-AES128-GCM-SHA256",
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256": "ECDHE-RSA-AES128-GCM-SHA256",
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": "ECDHE-ECDSA-AES256-GCM-SHA384",
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": "ECDHE-RSA-AES256-GCM-SHA384",
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-RSA-CHACHA20-POLY1305",
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305": "ECDHE-ECDSA-CHACHA20-POLY1305",
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305": "ECDHE-RSA-CHACHA20-POLY1305",
        "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA": "ECDHE-ECDSA-AES128-SHA",
        "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA": "ECDHE-RSA-AES128-SHA",
        "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA": "ECDHE-ECDSA-AES256-SHA",
        "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA": "ECDHE-RSA-AES256-SHA",
        "TLS_RSA_WITH_AES_128_GCM_SHA256": "AES128-GCM-SHA256",
        "TLS_RSA_WITH_AES_256_GCM_SHA384": "AES256-GCM-SHA384",
        "TLS_RSA_WITH_AES_128_CBC_SHA": "AES128-SHA",
        "TLS_RSA_WITH_AES_256_CBC_SHA": "AES256-SHA",
    ]
    /// TLS 1.2 suites offered when `cipher_suites` is not set (TLS 1.3 has its own, all AEAD).
    package static let defaultTLS12Ciphers =
        "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
        + "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"
    package static let curves: [String: String] = [
        "X25519": "X25519", "CurveP256": "P-256", "CurveP384": "P-384", "CurveP521": "P-521",
    ]

    // Long on purpose: every setting applied in turn, each failing with its own key.
    package init(_ s: Settings) throws(Failure) {
        guard let ctx = SSL_CTX_new(TLS_server_method()) else {
            throw Failure(key: "tls_server_config", message: "SSL_CTX_new failed")
        }
        pointer = ctx
        settings = s
        _ = cossl_ctx_set_mode(ctx, Int(SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER))
        _ = SSL_CTX_set_options(ctx, cossl_op_no_renegotiation() | cossl_op_ignore_unexpected_eof())
        _ = cossl_ctx_release_buffers(ctx)
        try Self.loadChain(ctx, s.certificatePEM)
        try Self.loadKey(ctx, s.keyPEM)
        guard SSL_CTX_check_private_key(ctx) == 1 else {
            throw Failure(
                key: "key_file", message: "the key does not match the certificate (\(TLSContext.drainErrors()))")
        }
        guard let min = Self.versions[s.minVersion] else {
            throw Failure(
                key: "min_version", message: "\(s.minVersion.debugDescription) is not one of TLS10, TLS11, TLS12, TLS13"
            )
        }
        guard let max = Self.versions[s.maxVersion] else {
            throw Failure(
                key: "max_version", message: "\(s.maxVersion.debugDescription) is not one of TLS10, TLS11, TLS12, TLS13"
            )
        }
        guard min <= max else {
            throw Failure(key: "min_version", message: "\(s.minVersion) is above max_version \(s.maxVersion)")
        }
        guard cossl_set_min_proto(ctx, min) == 1, cossl_ctx_set_max_proto(ctx, max) == 1 else {
            throw Failure(key: "min_version", message: "OpenSSL refused \(s.minVersion)…\(s.maxVersion)")
        }
        if s.cipherSuites.isEmpty {
            // Without cipher_suites, TLS 1.2 offers forward-secret AEAD suites only (ECDHE with
            // GCM or ChaCha20), as the toolkit's defaults do: no static RSA key exchange, no CBC.
            guard SSL_CTX_set_cipher_list(ctx, Self.defaultTLS12Ciphers) == 1 else {
                throw Failure(key: "cipher_suites", message: "OpenSSL refused \(Self.defaultTLS12Ciphers)")
            }
        } else {
            var names: [String] = []
            for suite in s.cipherSuites {
                guard let name = Self.ciphers[suite] else {
                    throw Failure(
                        key: "cipher_suites", message: "\(suite.debugDescription) is not a TLS 1.2 suite Go offers")
                }
                names.append(name)
            }
            guard SSL_CTX_set_cipher_list(ctx, names.joined(separator: ":")) == 1 else {
                throw Failure(key: "cipher_suites", message: "OpenSSL refused \(names.joined(separator: ":"))")
            }
        }
        if s.preferServerCipherSuites { _ = SSL_CTX_set_options(ctx, cossl_op_server_preference()) }
        if !s.curvePreferences.isEmpty {
            var names: [String] = []
            for curve in s.curvePreferences {
                guard let name = Self.curves[curve] else {
                    throw Failure(
                        key: "curve_preferences",
                        message: "\(curve.debugDescription) is not one of X25519, CurveP256, CurveP384, CurveP521")
                }
                names.append(name)
            }
            guard cossl_ctx_set_groups_list(ctx, names.joined(separator: ":")) == 1 else {
                throw Failure(key: "curve_preferences", message: "OpenSSL refused \(names.joined(separator: ":"))")
            }
        }
        try Self.applyClientAuth(ctx, s)
    }

    deinit { SSL_CTX_free(pointer) }

    private static func applyClientAuth(_ ctx: OpaquePointer, _ s: Settings) throws(Failure) {
        let verifies = s.clientAuth == .verifyIfGiven || s.clientAuth == .requireAndVerify
        if verifies, s.clientCAPEM == nil {
            throw Failure(
                key: "client_ca_file", message: "client_auth_type \(s.clientAuth.rawValue) needs client_ca_file")
        }
        if let pem = s.clientCAPEM {
            guard let store = SSL_CTX_get_cert_store(ctx) else {
                throw Failure(key: "client_ca_file", message: "no store")
            }
            let certificates = try readCertificates(pem, key: "client_ca_file")
            for cert in certificates {
                X509_STORE_add_cert(store, cert)
                SSL_CTX_add_client_CA(ctx, cert)
                X509_free(cert)
            }
        }
        if !s.clientAllowedSANs.isEmpty, s.clientAuth != .requireAny, s.clientAuth != .requireAndVerify {
            throw Failure(
                key: "client_allowed_sans",
                message: "needs client_auth_type RequireAnyClientCert or RequireAndVerifyClientCert")
        }
        let peer = SSL_VERIFY_PEER
        let required = SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT
        switch s.clientAuth {
        case .none: SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nil)
        case .request: cossl_ctx_verify_any(ctx, peer)
        case .requireAny: cossl_ctx_verify_any(ctx, required)
        case .verifyIfGiven: SSL_CTX_set_verify(ctx, peer, nil)
        case .requireAndVerify: SSL_CTX_set_verify(ctx, required, nil)
        }
    }

    private static func loadChain(_ ctx: OpaquePointer, _ pem: [UInt8]) throws(Failure) {
        let certificates = try readCertificates(pem, key: "cert_file")
        guard let leaf = certificates.first else {
            throw Failure(key: "cert_file", message: "no certificate in the PEM")
        }
        defer { for certificate in certificates { X509_free(certificate) } }
        guard SSL_CTX_use_certificate(ctx, leaf) == 1 else {
            throw Failure(key: "cert_file", message: "OpenSSL refused the certificate: \(TLSContext.drainErrors())")
        }
        for extra in certificates.dropFirst() where cossl_ctx_add1_chain_cert(ctx, extra) != 1 {
            throw Failure(key: "cert_file", message: "OpenSSL refused a chain certificate: \(TLSContext.drainErrors())")
        }
    }

    private static func loadKey(_ ctx: OpaquePointer, _ pem: [UInt8]) throws(Failure) {
        let key: OpaquePointer? = pem.withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
        }
        guard let key else {
            throw Failure(key: "key_file", message: "no private key in the PEM: \(TLSContext.drainErrors())")
        }
        defer { EVP_PKEY_free(key) }
        guard SSL_CTX_use_PrivateKey(ctx, key) == 1 else {
            throw Failure(key: "key_file", message: "OpenSSL refused the key: \(TLSContext.drainErrors())")
        }
    }

    /// Every certificate of a PEM, in order (the caller frees them).
    package static func readCertificates(_ pem: [UInt8], key: String) throws(Failure) -> [OpaquePointer] {
        var out: [OpaquePointer] = []
        pem.withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return }
            defer { BIO_free(bio) }
            while let cert = PEM_read_bio_X509(bio, nil, nil, nil) { out.append(cert) }
            ERR_clear_error()  // the read that ends the loop leaves "no start line"
        }
        guard !out.isEmpty else { throw Failure(key: key, message: "no PEM certificate in it") }
        return out
    }

    /// Whether the peer's certificate of `ssl` carries one of `clientAllowedSANs` (DNS, IP or
    /// e-mail), as the toolkit's `client_allowed_sans` requires. True when the list is empty.
    package func peerHasAllowedSAN(_ ssl: OpaquePointer) -> Bool {
        guard !settings.clientAllowedSANs.isEmpty else { return true }
        guard let cert = SSL_get1_peer_certificate(ssl) else { return false }
        defer { X509_free(cert) }
        return settings.clientAllowedSANs.contains { san in
            if SocketAddress(ip: san) != nil { return X509_check_ip_asc(cert, san, 0) == 1 }
            if san.contains("@") { return X509_check_email(cert, san, san.utf8.count, 0) == 1 }
            return X509_check_host(cert, san, san.utf8.count, UInt32(X509_CHECK_FLAG_NO_WILDCARDS), nil) == 1
        }
    }
}
