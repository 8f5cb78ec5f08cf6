/// Why a history line is not valid JSON (or not the JSON we expect).
package struct JSONScanError: Error, Equatable {
    package let offset: Int
    package let what: String
}

/// A string token inside the scanned line: its raw bytes between the quotes, and whether they
/// contain escapes (only then must they be decoded before comparing).
package struct JSONStringToken {
    package let range: Range<Int>
    package let escaped: Bool
}

/// A strict, non-allocating pull tokenizer over one line of bytes (RFC 8259): no trailing
/// commas, no comments, no NaN/Infinity, no control characters or invalid UTF-8 in strings,
/// lone surrogates rejected, nesting bounded. Both history decoders sit on it: the full one
/// builds values, the fast path only keeps the fields it needs and validates the rest while
/// skipping it. Hostile input gives an error, never a trap or unbounded work.
///
/// Valid only inside the `withUnsafeBufferPointer` scope that produced `bytes`.
package struct JSONScanner {
    package let bytes: UnsafeBufferPointer<UInt8>
    package var pos: Int
    private var depth = 0
    package static let maxDepth = 32

    package init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        pos = 0
    }

    package func fail(_ what: String) -> JSONScanError { JSONScanError(offset: pos, what: what) }

    @inline(__always) package mutating func skipWhitespace() {
        while pos < bytes.count {
            let b = bytes[pos]
            guard b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D else { return }
            pos += 1
        }
    }

    /// The next non-blank byte, not consumed; nil at the end.
    @inline(__always) package mutating func peek() -> UInt8? {
        if pos < bytes.count, bytes[pos] > 0x20 { return bytes[pos] }
        skipWhitespace()
        return pos < bytes.count ? bytes[pos] : nil
    }

    @inline(__always) package mutating func expect(_ b: UInt8) throws(JSONScanError) {
        if pos < bytes.count, bytes[pos] == b {
            pos += 1
            return
        }
        skipWhitespace()
        guard pos < bytes.count, bytes[pos] == b else { throw fail("expected '\(Character(Unicode.Scalar(b)))'") }
        pos += 1
    }

    /// Requires that only whitespace remains.
    package mutating func expectEnd() throws(JSONScanError) {
        skipWhitespace()
        guard pos == bytes.count else { throw fail("trailing characters") }
    }

    // MARK: Containers

    @inline(__always)
    package mutating func beginObject() throws(JSONScanError) {
        try expect(UInt8(ascii: "{"))
        depth += 1
        guard depth <= Self.maxDepth else { throw fail("nested too deeply") }
    }

    @inline(__always)
    package mutating func beginArray() throws(JSONScanError) {
        try expect(UInt8(ascii: "["))
        depth += 1
        guard depth <= Self.maxDepth else { throw fail("nested too deeply") }
    }

    /// The next key of the object being read (and consumes its colon), or nil at `}`.
    /// `first` tracks whether a comma is needed; start it at true.
    @inline(__always)
    package mutating func nextKey(_ first: inout Bool) throws(JSONScanError) -> JSONStringToken? {
        if pos < bytes.count, bytes[pos] <= 0x20 { skipWhitespace() }
        guard pos < bytes.count else { throw fail("unterminated object") }
        if bytes[pos] == UInt8(ascii: "}") {
            pos += 1
            depth -= 1
            return nil
        }
        if !first { try expect(UInt8(ascii: ",")) }
        first = false
        let key = try readString()
        try expect(UInt8(ascii: ":"))
        return key
    }

    /// Whether another array element follows (consuming the comma), or false at `]`.
    @inline(__always)
    package mutating func nextElement(_ first: inout Bool) throws(JSONScanError) -> Bool {
        skipWhitespace()
        guard pos < bytes.count else { throw fail("unterminated array") }
        if bytes[pos] == UInt8(ascii: "]") {
            pos += 1
            depth -= 1
            return false
        }
        if !first { try expect(UInt8(ascii: ",")) }
        first = false
        return true
    }

    // MARK: Scalars

    /// Reads `null`; returns false (consuming nothing) if the next value is something else.
    @inline(__always)
    package mutating func readNull() throws(JSONScanError) -> Bool {
        guard peek() == UInt8(ascii: "n") else { return false }
        try literal("null")
        return true
    }

    package mutating func readBool() throws(JSONScanError) -> Bool {
        switch peek() {
        case UInt8(ascii: "t"):
            try literal("true")
            return true
        case UInt8(ascii: "f"):
            try literal("false")
            return false
        default: throw fail("expected true or false")
        }
    }

    private mutating func literal(_ word: StaticString) throws(JSONScanError) {
        let n = word.utf8CodeUnitCount
        guard pos + n <= bytes.count else { throw fail("bad literal") }
        let p = word.utf8Start
        for i in 0..<n where bytes[pos + i] != p[i] { throw fail("bad literal") }
        pos += n
    }

    /// Reads a string token, validating escapes and UTF-8 without allocating. Eight bytes are
    /// looked at per step: the closing quote is found directly when nothing special (a
    /// backslash, a control character, a non-ASCII byte) comes before it.
    @inline(__always)
    package mutating func readString() throws(JSONScanError) -> JSONStringToken {
        try expect(UInt8(ascii: "\""))
        let start = pos
        var escaped = false
        guard let base = bytes.baseAddress else { throw fail("unterminated string") }
        let count = bytes.count
        var p = pos
        while true {
            while p + 8 <= count {
                let w = UnsafeRawPointer(base + p).loadUnaligned(as: UInt64.self)
                let (quote, special) = Self.scanWord(w)
                let q = quote.trailingZeroBitCount >> 3
                let x = special.trailingZeroBitCount >> 3
                if q < x {
                    pos = p + q + 1
                    return JSONStringToken(range: start..<(p + q), escaped: escaped)
                }
                if x < 8 {
                    p += x
                    break
                }
                p += 8
            }
            guard p < count else {
                pos = p
                throw fail("unterminated string")
            }
            let b = bytes[p]
            if b == UInt8(ascii: "\"") {
                pos = p + 1
                return JSONStringToken(range: start..<p, escaped: escaped)
            }
            if b == UInt8(ascii: "\\") {
                escaped = true
                pos = p
                try skipEscape()
                p = pos
            } else if b < 0x20 {
                pos = p
                throw fail("control character in string")
            } else if b < 0x80 {
                p += 1
            } else {
                pos = p
                try skipUTF8Sequence()
                p = pos
            }
        }
    }

    /// Masks (high bit of each byte) of the quotes and of the special bytes among eight: the
    /// classic "has zero byte" / "has byte less than" word tricks, whose lowest set bit is exact.
    @inline(__always) package static func scanWord(_ w: UInt64) -> (quote: UInt64, special: UInt64) {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let q = w ^ (ones &* 0x22)
        let bs = w ^ (ones &* 0x5C)
        let quote = (q &- ones) & ~q & highs
        let backslash = (bs &- ones) & ~bs
        let control = (w &- ones &* 0x20) & ~w
        return (quote, (backslash | control | w) & highs)
    }

    private mutating func skipEscape() throws(JSONScanError) {
        guard pos + 1 < bytes.count else { throw fail("bad escape") }
        switch bytes[pos + 1] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
            UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            pos += 2
        case UInt8(ascii: "u"):
            pos += 2
            let unit = try hex4()
            if (0xD800...0xDBFF).contains(unit) {
                guard pos + 1 < bytes.count, bytes[pos] == UInt8(ascii: "\\"), bytes[pos + 1] == UInt8(ascii: "u")
                else { throw fail("lone surrogate") }
                pos += 2
                guard (0xDC00...0xDFFF).contains(try hex4()) else { throw fail("lone surrogate") }
            } else if (0xDC00...0xDFFF).contains(unit) {
                throw fail("lone surrogate")
            }
        default:
            throw fail("bad escape")
        }
    }

    private mutating func hex4() throws(JSONScanError) -> UInt32 {
        guard pos + 4 <= bytes.count else { throw fail("bad \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[pos]
            let d: UInt8
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = b - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = b - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = b - UInt8(ascii: "A") + 10
            default: throw fail("bad \\u escape")
            }
            v = v << 4 | UInt32(d)
            pos += 1
        }
        return v
    }

    /// One multi-byte UTF-8 sequence: no overlongs, no surrogates, nothing above U+10FFFF.
    private mutating func skipUTF8Sequence() throws(JSONScanError) {
        let b0 = bytes[pos]
        let n: Int
        var lo: UInt8 = 0x80
        var hi: UInt8 = 0xBF
        switch b0 {
        case 0xC2...0xDF: n = 2
        case 0xE0:
            n = 3
            lo = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: n = 3
        case 0xED:
            n = 3
            hi = 0x9F
        case 0xF0:
            n = 4
            lo = 0x90
        case 0xF1...0xF3: n = 4
        case 0xF4:
            n = 4
            hi = 0x8F
        default: throw fail("invalid UTF-8")
        }
        guard pos + n <= bytes.count else { throw fail("invalid UTF-8") }
        let b1 = bytes[pos + 1]
        guard b1 >= lo && b1 <= hi else { throw fail("invalid UTF-8") }
        for i in 2..<max(2, n) where bytes[pos + i] & 0xC0 != 0x80 { throw fail("invalid UTF-8") }
        pos += n
    }

    /// Decodes a string token to a Swift string (escapes resolved). The token was validated.
    package func string(_ t: JSONStringToken) -> String {
        let raw = UnsafeBufferPointer(rebasing: bytes[t.range])
        guard t.escaped else { return String(decoding: raw, as: UTF8.self) }
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var i = 0
        func hex(_ at: Int) -> UInt32 {
            var v: UInt32 = 0
            for k in at..<at + 4 {
                let b = raw[k]
                v = v << 4 | UInt32(b <= 0x39 ? b - 0x30 : (b | 0x20) - 0x57)
            }
            return v
        }
        while i < raw.count {
            let b = raw[i]
            guard b == UInt8(ascii: "\\") else {
                out.append(b)
                i += 1
                continue
            }
            let e = raw[i + 1]
            i += 2
            switch e {
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = hex(i)
                i += 4
                if (0xD800...0xDBFF).contains(scalar) {
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (hex(i + 2) - 0xDC00)
                    i += 6
                }
                out.append(contentsOf: Array(String(Character(Unicode.Scalar(scalar) ?? "\u{FFFD}")).utf8))
            default: out.append(e)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A token of at most eight bytes packed little-endian into a word, for comparing with
    /// `JSONScanner.pack` constants in one instruction; 0 (which no packed word equals) for
    /// longer or escaped tokens.
    @inline(__always) package func word(_ t: JSONStringToken) -> UInt64 {
        let n = t.range.count
        guard n <= 8, n > 0, !t.escaped, let base = bytes.baseAddress else { return 0 }
        let p = base + t.range.lowerBound
        if t.range.lowerBound + 8 <= bytes.count {
            let w = UnsafeRawPointer(p).loadUnaligned(as: UInt64.self)
            return n == 8 ? w : w & ((1 << (UInt64(n) * 8)) - 1)
        }
        var w: UInt64 = 0
        for i in 0..<n { w |= UInt64(p[i]) << (UInt64(i) * 8) }
        return w
    }

    /// The packed form of a word of one to eight ASCII bytes (see `word(_:)`).
    package static func pack(_ s: StaticString) -> UInt64 {
        precondition(s.utf8CodeUnitCount > 0 && s.utf8CodeUnitCount <= 8, "pack: 1 to 8 bytes")
        var w: UInt64 = 0
        for i in 0..<s.utf8CodeUnitCount { w |= UInt64(s.utf8Start[i]) << (UInt64(i) * 8) }
        return w
    }

    /// The packed form of a word of one to eight bytes, or nil for an empty or longer one.
    package static func pack(text: String) -> UInt64? {
        let bytes = Array(text.utf8)
        guard (1...8).contains(bytes.count) else { return nil }
        var w: UInt64 = 0
        for (i, b) in bytes.enumerated() { w |= UInt64(b) << (UInt64(i) * 8) }
        return w
    }

    /// Whether the token equals an ASCII word (escaped tokens are decoded first).
    @inline(__always) package func equals(_ t: JSONStringToken, _ word: StaticString) -> Bool {
        if t.escaped { return string(t) == word.description }
        let n = word.utf8CodeUnitCount
        guard t.range.count == n else { return false }
        let p = word.utf8Start
        var i = 0
        while i < n {
            if bytes[t.range.lowerBound + i] != p[i] { return false }
            i += 1
        }
        return true
    }

    // MARK: Skipping

    /// Validates and skips any value.
    package mutating func skipValue() throws(JSONScanError) {
        switch peek() {
        case UInt8(ascii: "{"):
            try beginObject()
            var first = true
            while try nextKey(&first) != nil { try skipValue() }
        case UInt8(ascii: "["):
            try beginArray()
            var first = true
            while try nextElement(&first) { try skipValue() }
        case UInt8(ascii: "\""): _ = try readString()
        case UInt8(ascii: "t"), UInt8(ascii: "f"): _ = try readBool()
        case UInt8(ascii: "n"): _ = try readNull()
        case nil: throw fail("expected a value")
        default: _ = try readNumber()
        }
    }
}
