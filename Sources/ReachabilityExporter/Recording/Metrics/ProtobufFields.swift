import ReachabilityVerdict

/// Protobuf wire-format writing for the exposition's small schema (`io.prometheus.client`,
/// client_model's proto2 `metrics.proto`): varints, zigzag, fixed64 doubles and length-delimited
/// fields. Fields are written in field-number order and every set field is written, zero or not,
/// as client_golang's encoder does; the golden tests compare these bytes with the reference
/// encoder's (Python `protobuf`).
///
/// A nested message is written in place: `beginMessage` writes the tag and remembers where the
/// content starts, `endMessage` inserts the content's length there (a shift of the bytes after
/// it, each message a few hundred bytes).
extension ExpositionBuffer {
    private static let varint: UInt64 = 0
    private static let fixed64: UInt64 = 1
    private static let lengthDelimited: UInt64 = 2

    package mutating func writeVarint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            write(byte: UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        write(byte: UInt8(v))
    }

    private mutating func writeTag(_ field: UInt64, _ wireType: UInt64) { writeVarint(field << 3 | wireType) }

    package mutating func writeVarintField(_ field: UInt64, _ value: UInt64) {
        writeTag(field, Self.varint)
        writeVarint(value)
    }

    /// `sint32`/`sint64`: zigzag, so small negative numbers stay short.
    package mutating func writeSignedField(_ field: UInt64, _ value: Int64) {
        writeTag(field, Self.varint)
        writeVarint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    package mutating func writeDoubleField(_ field: UInt64, _ value: Double) {
        writeTag(field, Self.fixed64)
        var bits = value.bitPattern.littleEndian
        withUnsafeBytes(of: &bits) { write($0) }
    }

    package mutating func writeBytesField(_ field: UInt64, _ bytes: UnsafeRawBufferPointer) {
        writeTag(field, Self.lengthDelimited)
        writeVarint(UInt64(bytes.count))
        write(bytes)
    }

    package mutating func writeStringField(_ field: UInt64, _ text: String) {
        var text = text
        text.withUTF8 { writeBytesField(field, UnsafeRawBufferPointer($0)) }
    }

    /// Starts a length-delimited field (`field`), or with `nil` a delimited top-level message (the
    /// varint length prefix of `encoding=delimited`); returns the mark for `endMessage`.
    package mutating func beginMessage(_ field: UInt64?) -> Int {
        if let field { writeTag(field, Self.lengthDelimited) }
        return count
    }

    package mutating func endMessage(_ start: Int) {
        insertVarint(UInt64(count - start), at: start)
    }
}
