import CCrypt
import COpenSSL
import ReachabilityVerdict

/// bcrypt password checks through the system libcrypt (never a bcrypt of our own), and the
/// SHA-256 digests that key the cache of successful checks.
package enum PasswordHash {
    /// Whether `hash` looks like a bcrypt hash the toolkit accepts: `$2a$`, `$2b$` or `$2y$`,
    /// a two-digit cost 04–31, then 53 characters of salt and digest.
    package static func isBcrypt(_ hash: String) -> Bool {
        let b = Array(hash.utf8)
        guard b.count == 60, b[0] == UInt8(ascii: "$"), b[1] == UInt8(ascii: "2"),
            [UInt8(ascii: "a"), UInt8(ascii: "b"), UInt8(ascii: "y")].contains(b[2]), b[3] == UInt8(ascii: "$"),
            b[6] == UInt8(ascii: "$"), let cost = Int(String(decoding: b[4..<6], as: UTF8.self)),
            (4...31).contains(cost)
        else { return false }
        return b[7...].allSatisfy {
            ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2E
                || $0 == 0x2F
        }
    }

    /// Checks `password` against a bcrypt `hash` (costly by design: ~70 ms at cost 10).
    /// Compares in constant time.
    package static func verify(password: [UInt8], hash: String) -> Bool {
        guard isBcrypt(hash), !password.contains(0) else { return false }
        let data = UnsafeMutablePointer<crypt_data>.allocate(capacity: 1)
        defer { data.deallocate() }
        data.initialize(to: crypt_data())
        let phrase = password + [0]
        let computed: [UInt8]? = phrase.withUnsafeBufferPointer { p in
            p.withMemoryRebound(to: CChar.self) { c in
                guard let out = crypt_rn(c.baseAddress, hash, data, Int32(MemoryLayout<crypt_data>.size)) else {
                    return nil
                }
                return Array(String(cString: out).utf8)
            }
        }
        let expected = Array(hash.utf8)
        guard let computed, computed.count == expected.count else { return false }
        return CRYPTO_memcmp(computed, expected, expected.count) == 0
    }

    /// SHA-256 of `bytes`.
    package static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        _ = bytes.withUnsafeBufferPointer { SHA256($0.baseAddress, $0.count, &out) }
        return out
    }

    /// A bcrypt hash of `password` at `cost` with a fresh salt from libcrypt (for tests and
    /// tools; the exporter only verifies).
    package static func bcrypt(_ password: String, cost: Int = 10) -> String? {
        var salt = [CChar](repeating: 0, count: 64)
        guard crypt_gensalt_rn("$2b$", UInt(cost), nil, 0, &salt, Int32(salt.count)) != nil else { return nil }
        let data = UnsafeMutablePointer<crypt_data>.allocate(capacity: 1)
        defer { data.deallocate() }
        data.initialize(to: crypt_data())
        guard let out = crypt_rn(password, salt, data, Int32(MemoryLayout<crypt_data>.size)) else { return nil }
        return String(cString: out)
    }
}
