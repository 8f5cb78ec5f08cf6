import CShim
import Dispatch
import Glibc
import ReachabilityExporter
import ReachabilityVerdict
import Synchronization

/// A tiny UDP DNS responder on 127.0.0.1 or ::1 (port 0) whose answer a test chooses, for
/// testing DNS probes against real sockets. It answers every query the same way, per
/// `behaviour`, and encodes responses with its own code (not the prober's codec), so a codec
/// bug cannot cancel itself out. Not a DNS server: one question, no EDNS, no zones.
///
/// Runs a thread until `stop()`, which returns once the socket is closed; call it when done
/// (the thread keeps the server alive until then).
package final class DNSTestServer: Sendable {
    /// How the responder answers.
    package enum Behaviour: Sendable {
        /// NOERROR with one A (IPv4 text) or AAAA (IPv6 text) record per address, owned by the
        /// question name (whatever type was asked).
        case answer([String])
        /// The given RCODE with no answers (2 SERVFAIL, 3 NXDOMAIN, 5 REFUSED, …).
        case rcode(Int)
        /// NOERROR with no answers.
        case noAnswer
        /// No reply at all.
        case silence
        /// A reply with the wrong id carrying `decoy` addresses, then the right one carrying `addresses`.
        case wrongIDFirst(decoy: [String], addresses: [String])
        /// A reply with the right id and header, then bytes that cannot be a DNS message.
        case garbageWithID
        /// These bytes verbatim, whatever the query.
        case raw([UInt8])
        /// A CNAME from the question name to `alias` (compressed against the question), then
        /// A/AAAA records for the alias whose owner is a pointer into the CNAME's data.
        case compressedCNAME(alias: String, addresses: [String])
        /// NOERROR, TC set, no answers (what a server sends when the answer does not fit).
        case truncated
        /// NOERROR with records of any type owned by the question name: (type code, rdata).
        /// Names inside rdata are written uncompressed by the test (`DNSTestReplies.name`).
        case records([(type: UInt16, rdata: [UInt8])])
        /// `answer` by question name (lower case, no final dot); NXDOMAIN for other names.
        case byName([String: [String]])
    }

    /// Where the responder listens (numeric, with the port the kernel chose).
    package let address: SocketAddress
    private let fd: Int32
    private let behaviour: Mutex<Behaviour>
    private let lastQuery = Mutex<[UInt8]?>(nil)
    private let queryCount = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    /// Binds a UDP socket on `host` (an IP literal) and `port` (0: the kernel picks; the fault
    /// lab binds 53 inside its namespaces) and starts answering.
    package init(host: String = "127.0.0.1", port: UInt16 = 0, behaviour: Behaviour) throws {
        guard let bindAddress = SocketAddress(ip: host, port: port) else {
            throw TestSupportError("not an IP: \(host)")
        }
        let fd = socket(bindAddress.family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestSupportError("socket: \(Errno.current)") }
        address = try boundAddress(fd, bindAddress)
        self.fd = fd
        self.behaviour = Mutex(behaviour)
        startThread(name: "dns-test-server") { [self] in serve() }
    }

    /// Changes the answer for queries that arrive from now on.
    package func setBehaviour(_ new: Behaviour) { behaviour.withLock { $0 = new } }
    /// Queries received so far (each retransmission counts).
    package var queries: Int { queryCount.load(ordering: .acquiring) }
    /// The bytes of the last query received.
    package var lastQueryBytes: [UInt8]? { lastQuery.withLock { $0 } }

    /// Stops answering and returns once the socket is closed (within one 20 ms poll interval),
    /// so its port is free again. Later calls return at once.
    package func stop() {
        if stopped.exchange(true, ordering: .acquiringAndReleasing) { return }
        finished.wait()
    }

    private func serve() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        // Bounded: the loop ends at stop(), and each turn waits at most 20 ms.
        while !stopped.load(ordering: .acquiring) {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 20) == 1 else { continue }
            var peer = sockaddr_storage()
            var peerLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let n = buffer.withUnsafeMutableBytes { raw in
                withUnsafeMutablePointer(to: &peer) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        recvfrom(fd, raw.baseAddress, raw.count, 0, $0, &peerLength)
                    }
                }
            }
            guard n > 0 else { continue }
            let query = Array(buffer[0..<n])
            lastQuery.withLock { $0 = query }
            queryCount.add(1, ordering: .releasing)
            for reply in DNSTestReplies.replies(to: query, behaviour: behaviour.withLock { $0 }) {
                _ = reply.withUnsafeBytes { raw in
                    withUnsafePointer(to: &peer) {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                            sendto(fd, raw.baseAddress, raw.count, 0, $0, peerLength)
                        }
                    }
                }
            }
        }
        Glibc.close(fd)
        finished.signal()
    }
}

/// An error from test-support setup (binding, spawning a command), with its message.
package struct TestSupportError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}

/// Binds `fd` to `address` and returns the address the kernel assigned.
func boundAddress(_ fd: Int32, _ address: SocketAddress) throws -> SocketAddress {
    if address.withSockAddr({ bind(fd, $0, $1) }) != 0 {
        let e = Errno.current
        Glibc.close(fd)
        throw TestSupportError("bind \(address): \(e)")
    }
    var storage = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let rc = withUnsafeMutablePointer(to: &storage) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard rc == 0 else {
        Glibc.close(fd)
        throw TestSupportError("getsockname: \(Errno.current)")
    }
    return withUnsafePointer(to: &storage) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress($0, length: length) }
    }
}
