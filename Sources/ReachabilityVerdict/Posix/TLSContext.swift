import COpenSSL
import Synchronization

/// A client-side OpenSSL `SSL_CTX` for one trust setting, created once and cached for the life
/// of the process (there are as many as distinct probe configurations, a handful).
///
/// Thread safety: the context is fully configured in `init` and only read afterwards;
/// `SSL_new` from many threads on a configured context is safe in OpenSSL 3, so the class is
/// `@unchecked Sendable` with no lock of its own.
package final class TLSContext: @unchecked Sendable {
    /// What decides the trust setting, and so the cache key.
    package struct Options: Hashable, Sendable {
        /// PEM file of trusted CAs; nil means the system store (`SSL_CTX_set_default_verify_paths`).
        package var caFile: String?
        /// Accept any certificate (no chain, expiry or host-name check). Details are still recorded.
        package var insecureSkipVerify: Bool

        package init(caFile: String? = nil, insecureSkipVerify: Bool = false) {
            self.caFile = caFile
            self.insecureSkipVerify = insecureSkipVerify
        }
    }

    /// A context could not be built: an unreadable or empty CA file, or an OpenSSL failure.
    package struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        package let message: String
        package var description: String { message }
    }

    package let pointer: OpaquePointer
    package let options: Options

    private static let cache = Mutex<[Options: TLSContext]>([:])

    /// The cached context for `options`, building it on first use.
    package static func shared(_ options: Options) throws(Failure) -> TLSContext {
        if let hit = cache.withLock({ $0[options] }) { return hit }
        let made = try TLSContext(options)
        // Two racing first users may both build one; keep the first stored and drop the other.
        return cache.withLock { c in
            if let existing = c[options] { return existing }
            c[options] = made
            return made
        }
    }

    private init(_ options: Options) throws(Failure) {
        guard let ctx = SSL_CTX_new(TLS_client_method()) else {
            throw Failure(message: "SSL_CTX_new failed: \(TLSContext.drainErrors())")
        }
        pointer = ctx
        self.options = options
        _ = cossl_set_min_proto(ctx, TLS1_2_VERSION)
        _ = SSL_CTX_set_options(ctx, cossl_op_ignore_unexpected_eof())
        if options.insecureSkipVerify {
            SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nil)
        } else {
            SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nil)
        }
        ERR_clear_error()
        if let caFile = options.caFile {
            // OpenSSL opens the file with a blocking fopen: a FIFO there would hang the reload.
            do throws(Errno) { _ = try FileContents.read(caFile, limit: 16 << 20) } catch {
                throw Failure(
                    message: "cannot load CA file \(caFile): \(FileContents.describe(error, limit: 16 << 20))")
            }
            if SSL_CTX_load_verify_locations(ctx, caFile, nil) != 1 {
                throw Failure(message: "cannot load CA file \(caFile): \(TLSContext.drainErrors())")
            }
        } else {
            try Self.loadSystemTrust(ctx)
        }
    }

    deinit { SSL_CTX_free(pointer) }

    /// The system's trust store where the distribution keeps it (`SystemTrust`); OpenSSL's
    /// compiled-in default when none of those paths exists.
    private static func loadSystemTrust(_ ctx: OpaquePointer) throws(Failure) {
        let (file, directories) = SystemTrust.locations()
        guard file != nil || !directories.isEmpty else {
            if SSL_CTX_set_default_verify_paths(ctx) != 1 {
                throw Failure(message: "cannot load the system trust store: \(TLSContext.drainErrors())")
            }
            return
        }
        if let file {
            do throws(Errno) { _ = try FileContents.read(file, limit: 16 << 20) } catch {
                throw Failure(
                    message:
                        "cannot load the system trust store \(file): \(FileContents.describe(error, limit: 16 << 20))")
            }
            if SSL_CTX_load_verify_locations(ctx, file, nil) != 1 {
                throw Failure(message: "cannot load the system trust store \(file): \(TLSContext.drainErrors())")
            }
        }
        for directory in directories where SSL_CTX_load_verify_locations(ctx, nil, directory) != 1 {
            ERR_clear_error()  // a directory that went away: the others and the bundle stand
        }
    }

    /// The reasons on this thread's OpenSSL error queue, oldest first, and clears it.
    package static func drainErrors() -> String {
        var parts: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            if parts.count < 4 { parts.append(errorText(code)) }
        }
        return parts.isEmpty ? "unknown error" : parts.joined(separator: "; ")
    }

    package static func errorText(_ code: UInt) -> String {
        if let reason = ERR_reason_error_string(code) { return String(cString: reason) }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
