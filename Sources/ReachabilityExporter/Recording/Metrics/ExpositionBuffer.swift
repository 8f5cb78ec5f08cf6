import ReachabilityVerdict

/// A growable byte buffer for rendering the exposition text: raw memory, so the per-line work
/// is a `memcpy` and some digit writing with no reference counting or uniqueness checks
/// (which dominated a profile of the `[UInt8]`-based renderer).
///
/// Contract: single owner; call `finish()` exactly once to get the bytes and free the memory.
package struct ExpositionBuffer: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    package private(set) var count = 0

    package init(capacity: Int) {
        self.capacity = max(capacity, 256)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    @inline(__always)
    private mutating func reserve(_ extra: Int) {
        if count + extra <= capacity { return }
        var newCapacity = capacity * 2
        while newCapacity < count + extra { newCapacity *= 2 }
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        grown.update(from: base, count: count)
        base.deallocate()
        base = grown
        capacity = newCapacity
    }

    @inline(__always)
    package mutating func write(_ bytes: UnsafeRawBufferPointer) {
        reserve(bytes.count)
        if let src = bytes.baseAddress {
            (base + count).update(from: src.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        }
        count += bytes.count
    }

    package mutating func write(_ bytes: [UInt8]) { bytes.withUnsafeBytes { write($0) } }

    @inline(__always)
    package mutating func write(byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    /// Writes a non-negative or negative integer in decimal.
    package mutating func writeInteger(_ value: Int64) {
        reserve(21)
        if value == 0 {
            base[count] = 0x30
            count += 1
            return
        }
        var v = value.magnitude
        if value < 0 {
            base[count] = UInt8(ascii: "-")
            count += 1
        }
        var digits = 0
        var t = v
        while t > 0 {
            digits += 1
            t /= 10
        }
        var i = count + digits - 1
        while v > 0 {
            base[i] = UInt8(truncatingIfNeeded: v % 10) + 0x30
            v /= 10
            i -= 1
        }
        count += digits
    }

    /// Writes a sample value: `+Inf`, `-Inf`, `NaN`, integers without a fraction, else the
    /// shortest round-tripping decimal.
    package mutating func writeValue(_ v: Double) {
        if v.isNaN {
            write(staticBytes: "NaN")
            return
        }
        if v.isInfinite {
            write(staticBytes: v > 0 ? "+Inf" : "-Inf")
            return
        }
        if v == v.rounded(.towardZero), abs(v) < 9.007199254740992e15 {
            writeInteger(Int64(v))
            return
        }
        var text = v.description
        text.withUTF8 { write(UnsafeRawBufferPointer($0)) }
    }

    private mutating func write(staticBytes s: StaticString) {
        write(UnsafeRawBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
    }

    /// Inserts `value` as a protobuf varint at `offset`, moving the bytes after it: how a
    /// length-delimited field gets its length once its content is written (see `ProtobufFields`).
    package mutating func insertVarint(_ value: UInt64, at offset: Int) {
        var length = 1
        var v = value >> 7
        while v != 0 {
            length += 1
            v >>= 7
        }
        reserve(length)
        // memmove: the regions overlap.
        UnsafeMutableRawPointer(base + offset + length).copyMemory(from: base + offset, byteCount: count - offset)
        var rest = value
        for i in 0..<length {
            let low = UInt8(truncatingIfNeeded: rest & 0x7f)
            rest >>= 7
            base[offset + i] = i == length - 1 ? low : low | 0x80
        }
        count += length
    }

    /// The rendered bytes; ends the buffer's life.
    package consuming func finish() -> [UInt8] {
        let n = count
        let p = base
        return [UInt8](unsafeUninitializedCapacity: n) { out, initialized in
            if n > 0 { out.baseAddress!.update(from: p, count: n) }
            initialized = n
        }
    }
}

/// A series' pre-rendered `name{labels}` text, in memory the series owns for its whole life
/// and never mutates after init, so rendering reads it without reference counting.
final class PrefixBytes: @unchecked Sendable {
    // Immutable after init; freed in deinit.
    let bytes: UnsafeRawBufferPointer

    init(_ source: [UInt8]) {
        let p = UnsafeMutableRawBufferPointer.allocate(byteCount: max(source.count, 1), alignment: 1)
        source.withUnsafeBytes { p.copyMemory(from: $0) }
        bytes = UnsafeRawBufferPointer(rebasing: p[0..<source.count])
    }

    deinit { UnsafeMutableRawPointer(mutating: bytes.baseAddress)?.deallocate() }
}
