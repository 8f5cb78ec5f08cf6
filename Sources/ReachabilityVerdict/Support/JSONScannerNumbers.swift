/// Numbers for `JSONScanner`: the strict JSON grammar, Clinger's fast path for the decimals the
/// history writes, eight digits per step.
extension JSONScanner {
    /// Reads a number (strict JSON grammar) as a finite Double.
    @inline(__always)
    package mutating func readNumber() throws(JSONScanError) -> Double {
        skipWhitespace()
        let start = pos
        var negative = false
        if pos < bytes.count, bytes[pos] == UInt8(ascii: "-") {
            negative = true
            pos += 1
        }
        var mantissa: UInt64 = 0
        var digits = 0
        var fractionDigits = 0
        guard pos < bytes.count, isDigit(bytes[pos]) else { throw fail("expected a number") }
        if bytes[pos] == UInt8(ascii: "0") {
            pos += 1
            if pos < bytes.count, isDigit(bytes[pos]) { throw fail("leading zero") }
        } else {
            eightDigitsAtATime(&mantissa, &digits, fraction: &fractionDigits, isFraction: false)
            while pos < bytes.count, isDigit(bytes[pos]) {
                if digits < 19 { mantissa = mantissa &* 10 &+ UInt64(bytes[pos] &- 0x30) }
                digits += 1
                pos += 1
            }
        }
        if pos < bytes.count, bytes[pos] == UInt8(ascii: ".") {
            pos += 1
            guard pos < bytes.count, isDigit(bytes[pos]) else { throw fail("bad fraction") }
            eightDigitsAtATime(&mantissa, &digits, fraction: &fractionDigits, isFraction: true)
            while pos < bytes.count, isDigit(bytes[pos]) {
                if digits < 19 { mantissa = mantissa &* 10 &+ UInt64(bytes[pos] &- 0x30) }
                digits += 1
                fractionDigits += 1
                pos += 1
            }
        }
        var hasExponent = false
        if pos < bytes.count, bytes[pos] | 0x20 == UInt8(ascii: "e") {
            hasExponent = true
            pos += 1
            if pos < bytes.count, bytes[pos] == UInt8(ascii: "+") || bytes[pos] == UInt8(ascii: "-") { pos += 1 }
            guard pos < bytes.count, isDigit(bytes[pos]) else { throw fail("bad exponent") }
            while pos < bytes.count, isDigit(bytes[pos]) { pos += 1 }
        }
        let value: Double
        // Clinger's fast path: an exact integer mantissa below 2^53 divided by an exact power of
        // ten is correctly rounded. Anything else takes the standard library's parser.
        if !hasExponent, digits <= 15, fractionDigits <= 22 {
            value = Double(mantissa) / Self.powerOfTen(fractionDigits)
        } else {
            let text = String(
                decoding: UnsafeBufferPointer(rebasing: bytes[(negative ? start + 1 : start)..<pos]), as: UTF8.self)
            guard let v = Double(text) else { throw fail("bad number") }
            value = v
        }
        guard value.isFinite else { throw fail("number out of range") }
        return negative ? -value : value
    }

    /// 10^n for 0 ≤ n ≤ 22, all exact in a Double.
    @inline(__always) private static func powerOfTen(_ n: Int) -> Double {
        switch n {
        case 0: 1
        case 1: 1e1
        case 2: 1e2
        case 3: 1e3
        case 4: 1e4
        case 5: 1e5
        case 6: 1e6
        case 7: 1e7
        case 8: 1e8
        case 9: 1e9
        case 10: 1e10
        case 11: 1e11
        case 12: 1e12
        case 13: 1e13
        case 14: 1e14
        case 15: 1e15
        case 16: 1e16
        case 17: 1e17
        case 18: 1e18
        case 19: 1e19
        case 20: 1e20
        case 21: 1e21
        default: 1e22
        }
    }

    /// Consumes runs of eight digits with word arithmetic while the mantissa has room.
    @inline(__always) private mutating func eightDigitsAtATime(
        _ mantissa: inout UInt64, _ digits: inout Int, fraction: inout Int, isFraction: Bool
    ) {
        guard let base = bytes.baseAddress else { return }
        while pos + 8 <= bytes.count, digits + 8 <= 19 {
            let w = UnsafeRawPointer(base + pos).loadUnaligned(as: UInt64.self)
            // Every byte '0'…'9': high nibble 3, and adding 6 does not carry out of the nibble.
            guard w & 0xF0F0_F0F0_F0F0_F0F0 == 0x3030_3030_3030_3030,
                (w &+ 0x0606_0606_0606_0606) & 0xF0F0_F0F0_F0F0_F0F0 == 0x3030_3030_3030_3030
            else { return }
            var v = w &- 0x3030_3030_3030_3030
            v = (v &* 10 &+ (v >> 8)) & 0x00FF_00FF_00FF_00FF
            v = (v &* 100 &+ (v >> 16)) & 0x0000_FFFF_0000_FFFF
            v = (v &* 10_000 &+ (v >> 32)) & 0x0000_0000_FFFF_FFFF
            mantissa = mantissa &* 100_000_000 &+ v
            digits += 8
            if isFraction { fraction += 8 }
            pos += 8
        }
    }

    @inline(__always) private func isDigit(_ b: UInt8) -> Bool { b &- 0x30 < 10 }
}
