import CZlib
import ReachabilityVerdict

/// gzip (RFC 1952) through the system zlib, for `Content-Encoding: gzip` responses.
package enum Gzip {
    /// Compresses `bytes` in one call; nil only if zlib fails (it does not for valid input).
    /// Level 1 (zlib's fastest): a scrape of metric text shrinks about tenfold at a fraction of
    /// the CPU of higher levels.
    package static func compress(_ bytes: [UInt8], level: Int32 = 1) -> [UInt8]? {
        var stream = z_stream()
        guard czlib_deflate_init_gzip(&stream, level) == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        // Worst-case room, never zeroed (deflate touches only what it writes), then the gzip
        // copied out at its own size: the bound is the input's size, ten times the gzip of a
        // scrape, and the result is kept for concurrent scrapes (#33: 34 MB held at 10,000
        // probes).
        let bound = Int(deflateBound(&stream, uLong(bytes.count))) + 32
        let room = UnsafeMutablePointer<UInt8>.allocate(capacity: bound)
        defer { room.deallocate() }
        let result: Int32 = bytes.withUnsafeBufferPointer { input in
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
            stream.avail_in = uInt(input.count)
            stream.next_out = room
            stream.avail_out = uInt(bound)
            return deflate(&stream, Z_FINISH)
        }
        guard result == Z_STREAM_END else { return nil }
        return Array(UnsafeBufferPointer(start: room, count: Int(stream.total_out)))
    }

    /// Decompresses a whole gzip stream (tests and benchmarks); nil when it is not valid gzip.
    package static func decompress(_ bytes: [UInt8], limit: Int = 64 << 20) -> [UInt8]? {
        var stream = z_stream()
        guard czlib_inflate_init_gzip(&stream) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        return bytes.withUnsafeBufferPointer { input -> [UInt8]? in
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
            stream.avail_in = uInt(input.count)
            while true {
                let rc: Int32 = chunk.withUnsafeMutableBufferPointer { c in
                    stream.next_out = c.baseAddress
                    stream.avail_out = uInt(c.count)
                    return inflate(&stream, Z_NO_FLUSH)
                }
                out.append(contentsOf: chunk[0..<(chunk.count - Int(stream.avail_out))])
                if rc == Z_STREAM_END { return out }
                guard rc == Z_OK, out.count <= limit else { return nil }
            }
        }
    }
}
