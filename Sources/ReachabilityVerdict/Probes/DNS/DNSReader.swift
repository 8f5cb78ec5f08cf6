/// A bounds-checked cursor over a received DNS message. Every read checks what remains and
/// throws `DNSMessageError.truncated` instead of trapping; names follow compression pointers
/// under rules that make loops impossible.
package struct DNSReader {
    /// Longest name on the wire (RFC 1035 §3.1), counting length bytes.
    package static let maxNameBytes = 255
    /// A legitimate name needs at most ~127 pointers; anything past this is hostile.
    package static let maxJumps = 64

    package let bytes: [UInt8]
    private(set) var offset: Int

    package init(_ bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    package var remaining: Int { max(0, bytes.count - offset) }

    package mutating func u8() throws(DNSMessageError) -> UInt8 {
        guard offset < bytes.count else { throw .truncated(at: offset) }
        defer { offset += 1 }
        return bytes[offset]
    }

    package mutating func u16() throws(DNSMessageError) -> UInt16 {
        guard offset + 2 <= bytes.count else { throw .truncated(at: offset) }
        defer { offset += 2 }
        return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    package mutating func u32() throws(DNSMessageError) -> UInt32 {
        let hi = try u16()
        let lo = try u16()
        return UInt32(hi) << 16 | UInt32(lo)
    }

    package mutating func take(_ count: Int) throws(DNSMessageError) -> ArraySlice<UInt8> {
        guard count >= 0, count <= remaining else { throw .truncated(at: offset) }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    /// Reads a possibly compressed name at the cursor and moves the cursor past it (past the
    /// first pointer, if any). Returns the lower-cased presentation form.
    ///
    /// Loop protection: a pointer must point strictly before the start of the label run that
    /// contains it, so successive jump targets strictly decrease and the walk must end; the
    /// jump count and the 255-byte name limit are checked as well.
    package mutating func readName() throws(DNSMessageError) -> String {
        var position = offset
        var runStart = offset
        var end: Int?
        var jumps = 0
        var wireLength = 1  // the final zero byte
        var labels: [ArraySlice<UInt8>] = []
        while true {
            guard position < bytes.count else { throw .truncated(at: position) }
            let length = bytes[position]
            switch length & 0xC0 {
            case 0xC0:
                guard position + 1 < bytes.count else { throw .truncated(at: position) }
                let target = Int(length & 0x3F) << 8 | Int(bytes[position + 1])
                guard target < runStart, jumps < Self.maxJumps else { throw .badPointer(at: position) }
                if end == nil { end = position + 2 }
                jumps += 1
                position = target
                runStart = target
            case 0x00:
                if length == 0 {
                    offset = end ?? position + 1
                    return Self.presentation(labels)
                }
                let count = Int(length)
                guard position + 1 + count <= bytes.count else { throw .truncated(at: position) }
                wireLength += 1 + count
                guard wireLength <= Self.maxNameBytes else { throw .nameTooLong(at: position) }
                labels.append(bytes[position + 1..<position + 1 + count])
                position += 1 + count
            default:
                throw .badLabelType(at: position)
            }
        }
    }

    /// Joins labels with dots, lower-casing ASCII letters and escaping dots, backslashes and
    /// non-printable bytes as `\DDD` so a hostile label cannot forge a different name.
    package static func presentation(_ labels: [ArraySlice<UInt8>]) -> String {
        if labels.isEmpty { return "." }
        var out: [UInt8] = []
        for (i, label) in labels.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ".")) }
            for b in label {
                switch b {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"): out.append(b + 32)
                case UInt8(ascii: "."), UInt8(ascii: "\\"):
                    out.append(UInt8(ascii: "\\"))
                    out.append(b)
                case 0x21...0x7E: out.append(b)
                default:
                    out.append(UInt8(ascii: "\\"))
                    out.append(UInt8(ascii: "0") + b / 100)
                    out.append(UInt8(ascii: "0") + (b / 10) % 10)
                    out.append(UInt8(ascii: "0") + b % 10)
                }
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
