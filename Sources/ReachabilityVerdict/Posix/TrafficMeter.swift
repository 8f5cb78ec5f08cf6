import CShim
import Glibc
import Synchronization

/// Packets and bytes on the wire, each way: whole IP packets (IP and transport headers
/// included, link-layer headers not), retransmissions included.
public struct TrafficCount: Sendable, Equatable, Hashable {
    /// IP packets sent.
    public var sentPackets: UInt64 = 0
    /// Bytes sent, IP and transport headers included.
    public var sentBytes: UInt64 = 0
    /// IP packets received.
    public var receivedPackets: UInt64 = 0
    /// Bytes received, IP and transport headers included.
    public var receivedBytes: UInt64 = 0

    /// A count of these packets and bytes (zero by default).
    public init(sentPackets: UInt64 = 0, sentBytes: UInt64 = 0, receivedPackets: UInt64 = 0, receivedBytes: UInt64 = 0)
    {
        self.sentPackets = sentPackets
        self.sentBytes = sentBytes
        self.receivedPackets = receivedPackets
        self.receivedBytes = receivedBytes
    }

    /// Both ways together, as a metered uplink bills them.
    public var bytes: UInt64 {
        let (sum, overflow) = sentBytes.addingReportingOverflow(receivedBytes)
        return overflow ? .max : sum
    }
    /// Nothing was sent or received.
    public var isZero: Bool { self == TrafficCount() }

    /// Both counts added field by field, saturating at `UInt64.max`.
    public static func + (a: TrafficCount, b: TrafficCount) -> TrafficCount {
        // Saturating: a count read back from a file may be anything.
        func add(_ x: UInt64, _ y: UInt64) -> UInt64 {
            let (sum, overflow) = x.addingReportingOverflow(y)
            return overflow ? .max : sum
        }
        return TrafficCount(
            sentPackets: add(a.sentPackets, b.sentPackets), sentBytes: add(a.sentBytes, b.sentBytes),
            receivedPackets: add(a.receivedPackets, b.receivedPackets),
            receivedBytes: add(a.receivedBytes, b.receivedBytes))
    }

    /// Adds `b` to `a`, field by field, saturating at `UInt64.max`.
    public static func += (a: inout TrafficCount, b: TrafficCount) { a = a + b }
}

/// What one probe (or one fault check) put on the wire, counted by the sockets it used: the
/// task that runs the probe carries its meter (`TrafficMeter.$current`), and each socket counts
/// into the meter it was made under.
///
/// - TCP: read from `TCP_INFO` when the socket closes (`tcpi_segs_out/in`, `tcpi_bytes_sent`,
///   `tcpi_bytes_received`: payload with retransmissions), plus each segment's IP and TCP
///   headers (20 or 40 + 20, 12 more with timestamps, 20 more on a SYN) and the close that
///   follows (`teardown`): what an established connection still exchanges after `close`.
/// - UDP: each datagram sent and received, plus 8 + 20 or 40 bytes of headers.
/// - ICMP: each echo sent, each reply or error that answered it.
package final class TrafficMeter: Sendable {
    @TaskLocal package static var current: TrafficMeter?

    private let count = Mutex(TrafficCount())

    package init() {}

    package var total: TrafficCount { count.withLock { $0 } }

    package func add(_ c: TrafficCount) { count.withLock { $0 += c } }

    package static func ipHeader(_ family: IPFamily) -> UInt64 { family == .ipv4 ? 20 : 40 }

    /// One UDP datagram of `payload` bytes, sent or received.
    package func udp(payload: Int, family: IPFamily, sent: Bool) {
        let bytes = UInt64(max(0, payload)) + 8 + Self.ipHeader(family)
        add(
            sent
                ? TrafficCount(sentPackets: 1, sentBytes: bytes)
                : TrafficCount(receivedPackets: 1, receivedBytes: bytes))
    }

    /// A TCP socket about to be closed: what it carried, read from `TCP_INFO`, and the close
    /// that follows (see `tcp(info:family:)`). Nothing when the kernel does not say.
    package func tcpClosing(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 232)
        var length = socklen_t(buffer.count)
        let rc = buffer.withUnsafeMutableBytes {
            getsockopt(fd, Int32(IPPROTO_TCP), Int32(TCP_INFO), $0.baseAddress, &length)
        }
        guard rc == 0 else { return }
        var domain: Int32 = 0
        var domainLength = socklen_t(4)
        getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &domainLength)
        let family: IPFamily = domain == AF_INET6 ? .ipv6 : .ipv4
        buffer.withUnsafeBytes {
            add(Self.tcp(info: UnsafeRawBufferPointer(rebasing: $0[0..<Int(length)]), family: family))
        }
    }

    /// The traffic of a TCP connection from its `struct tcp_info` (fields by their fixed
    /// offsets) as it closes:
    /// - segments: `tcpi_segs_out`/`tcpi_segs_in` (every segment: SYN, ACK, data, FIN, RST,
    ///   retransmissions), each with IP + TCP headers, 12 bytes of timestamps when negotiated,
    ///   and the SYN's (and the SYN-ACK's) 20 bytes of options;
    /// - payload: `tcpi_bytes_sent` (retransmissions included; Linux 4.19) or, before it,
    ///   `tcpi_bytes_acked`; `tcpi_bytes_received`;
    /// - the close: established, we send a FIN, the peer acknowledges it with its own FIN, we
    ///   acknowledge that (2 out, 1 in); after the peer's FIN (close-wait), our FIN and its
    ///   acknowledgement (1 out, 1 in); a connect still pending ends with nothing more.
    package static func tcp(info t: UnsafeRawBufferPointer, family: IPFamily) -> TrafficCount {
        guard t.count >= 144 else { return TrafficCount() }
        let state = t[0]
        let timestamps = t[5] & 1 != 0
        let perSegment = ipHeader(family) + 20 + (timestamps ? 12 : 0)
        let synOptions: UInt64 = timestamps ? 8 : 20
        var segsOut = UInt64(t.loadUnaligned(fromByteOffset: 136, as: UInt32.self))
        var segsIn = UInt64(t.loadUnaligned(fromByteOffset: 140, as: UInt32.self))
        let bytesSent =
            t.count >= 208
            ? t.loadUnaligned(fromByteOffset: 200, as: UInt64.self)
            : t.loadUnaligned(fromByteOffset: 120, as: UInt64.self)
        let bytesReceived = t.loadUnaligned(fromByteOffset: 128, as: UInt64.self)
        let synSent: UInt8 = 2
        let established: UInt8 = 1
        let closeWait: UInt8 = 8
        // SYNs sent: every segment while connecting; else the first (retransmitted SYNs are
        // counted in segs_out as any segment, with the options of a SYN missed: a few bytes).
        let synsOut: UInt64 = state == synSent ? segsOut : (segsOut > 0 ? 1 : 0)
        let synsIn: UInt64 = state == synSent ? 0 : (segsIn > 0 ? 1 : 0)
        switch state {
        case established:
            segsOut += 2
            segsIn += 1
        case closeWait:
            segsOut += 1
            segsIn += 1
        default: break
        }
        return TrafficCount(
            sentPackets: segsOut, sentBytes: bytesSent + segsOut * perSegment + synsOut * synOptions,
            receivedPackets: segsIn, receivedBytes: bytesReceived + segsIn * perSegment + synsIn * synOptions)
    }
}
