/// A bounds-checked window on a received buffer for the netlink decoder: every read returns nil
/// instead of leaving the window, and numbers are read unaligned in host byte order.
/// Valid only while the buffer it views is alive (inside `withUnsafeBytes`).
package struct ByteView {
    private let raw: UnsafeRawBufferPointer
    private let start: Int
    private let end: Int

    package init(_ raw: UnsafeRawBufferPointer) { self.init(raw, 0, raw.count) }

    package init(_ raw: UnsafeRawBufferPointer, _ start: Int, _ end: Int) {
        self.raw = raw
        self.start = max(0, min(start, raw.count))
        self.end = max(self.start, min(end, raw.count))
    }

    package var count: Int { end - start }

    /// A sub-window, clamped to this one.
    package func slice(_ from: Int, _ to: Int) -> ByteView {
        ByteView(raw, start + max(0, from), start + max(0, min(to, count)))
    }

    private func load<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T? {
        guard offset >= 0, offset + MemoryLayout<T>.size <= count else { return nil }
        return raw.loadUnaligned(fromByteOffset: start + offset, as: T.self)
    }

    package func u8(_ offset: Int) -> UInt8? { load(offset, UInt8.self) }
    package func u16(_ offset: Int) -> UInt16? { load(offset, UInt16.self) }
    package func u32(_ offset: Int) -> UInt32? { load(offset, UInt32.self) }
    package func i32(_ offset: Int) -> Int32? { load(offset, Int32.self) }

    package var bytes: [UInt8] { Array(raw[start..<end]) }

    /// The bytes up to the first NUL, as UTF-8 (invalid sequences are replaced, never trapped on).
    package func cString() -> String {
        let all = raw[start..<end]
        let text = all.firstIndex(of: 0).map { all[all.startIndex..<$0] } ?? all
        return String(decoding: text, as: UTF8.self)
    }

    /// The value as an IP address: exactly 4 or 16 bytes, else nil.
    package func ipBytes() -> [UInt8]? { count == 4 || count == 16 ? bytes : nil }

    /// `RTA_VIA`: `struct rtvia { u16 family; u8 addr[] }`.
    package func viaBytes() -> [UInt8]? { slice(2, count).ipBytes() }

    package func header(at offset: Int) -> NetlinkHeader? {
        guard let length = u32(offset), let type = u16(offset + 4), let flags = u16(offset + 6),
            let sequence = u32(offset + 8), let port = u32(offset + 12)
        else { return nil }
        return NetlinkHeader(length: length, type: type, flags: flags, sequence: sequence, portID: port)
    }

    /// Calls `body` with each `rtattr`/`nlattr` from `offset` on (type without the nested and
    /// byte-order bits). Stops at the first attribute whose length is impossible. At most 4096
    /// attributes, so no buffer can make this loop long.
    package func forEachAttribute(from offset: Int, _ body: (UInt16, ByteView) -> Void) {
        var position = offset
        var seen = 0
        while seen < 4096, let length = u16(position).map(Int.init), let type = u16(position + 2),
            length >= 4, position + length <= count
        {
            body(type & 0x3fff, slice(position + 4, position + length))
            position += RTNL.align(length)
            seen += 1
        }
    }
}
