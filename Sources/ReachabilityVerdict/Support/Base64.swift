/// Standard base64 (RFC 4648 §4, with padding), for `Basic` credentials. An encoding, not
/// cryptography: no secret is protected by it.
package enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    package static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i < bytes.count {
            let n = min(3, bytes.count - i)
            let b0 = bytes[i]
            let b1 = n > 1 ? bytes[i + 1] : 0
            let b2 = n > 2 ? bytes[i + 2] : 0
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 0x03) << 4 | b1 >> 4)])
            out.append(n > 1 ? alphabet[Int((b1 & 0x0F) << 2 | b2 >> 6)] : UInt8(ascii: "="))
            out.append(n > 2 ? alphabet[Int(b2 & 0x3F)] : UInt8(ascii: "="))
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes standard base64 with padding (as `Basic` credentials are sent); nil when it is not.
    package static func decode(_ text: String) -> [UInt8]? {
        let bytes = Array(text.utf8)
        guard bytes.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count / 4 * 3)
        var i = 0
        while i < bytes.count {
            var quad: [UInt8] = []
            var pad = 0
            for b in bytes[i..<(i + 4)] {
                if b == UInt8(ascii: "=") {
                    pad += 1
                    quad.append(0)
                    continue
                }
                guard pad == 0, let v = value(b) else { return nil }
                quad.append(v)
            }
            guard pad <= 2, pad == 0 || i + 4 == bytes.count else { return nil }
            let n = UInt32(quad[0]) << 18 | UInt32(quad[1]) << 12 | UInt32(quad[2]) << 6 | UInt32(quad[3])
            out.append(UInt8(n >> 16))
            if pad < 2 { out.append(UInt8((n >> 8) & 0xFF)) }
            if pad < 1 { out.append(UInt8(n & 0xFF)) }
            i += 4
        }
        return out
    }

    private static func value(_ b: UInt8) -> UInt8? {
        switch b {
        case 0x41...0x5A: b - 0x41
        case 0x61...0x7A: b - 0x61 + 26
        case 0x30...0x39: b - 0x30 + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }
}
