import CShim
import Glibc
import Synchronization

/// The receive thread of an `ICMPSocket`: `poll` on the socket and a wake-up eventfd, drain
/// every queued datagram (and, for ping sockets, the error queue), match, and expire deadlines.
extension ICMPSocket {
    /// What one `recvmsg` produced, besides the bytes.
    private struct Received {
        package var realtimeNanos: Int64?
        package var hopLimit: Int?
        /// Offset and length of a `sock_extended_err` (+ offender) in the control buffer.
        package var extendedError: UnsafeRawBufferPointer?
    }

    /// Buffers owned by the receive thread, allocated once.
    package struct Buffers {
        package static let dataSize = 65_536 + 512
        package static let controlSize = 1024
        package let data = UnsafeMutableRawPointer.allocate(byteCount: dataSize, alignment: 16)
        package let control = UnsafeMutableRawPointer.allocate(byteCount: controlSize, alignment: 16)
        package let name = UnsafeMutablePointer<sockaddr_storage>.allocate(capacity: 1)
        package let iov = UnsafeMutablePointer<iovec>.allocate(capacity: 1)
        package let message = UnsafeMutablePointer<msghdr>.allocate(capacity: 1)

        /// For `recvmmsg`: `slots` datagrams of at most `slotSize` bytes per call, each with its
        /// own control buffer and source address.
        package static let slots = 32
        package static let slotSize = 2048
        package static let slotControlSize = 256
        package let slotData = UnsafeMutableRawPointer.allocate(byteCount: slots * slotSize, alignment: 16)
        package let slotControl = UnsafeMutableRawPointer.allocate(byteCount: slots * slotControlSize, alignment: 16)
        package let slotNames = UnsafeMutablePointer<sockaddr_storage>.allocate(capacity: slots)
        package let slotIovs = UnsafeMutablePointer<iovec>.allocate(capacity: slots)
        package let slotMessages = UnsafeMutablePointer<cshim_mmsghdr>.allocate(capacity: slots)

        /// Whether replies to echoes of `payload` bytes fit one slot (with the largest IPv4
        /// header a raw socket passes up; an ICMP error's quote is at most 1,280 bytes).
        package static func slotsFit(payload: Int) -> Bool { payload + ICMPPacket.headerSize + 60 <= slotSize }

        package func deallocate() {
            data.deallocate()
            control.deallocate()
            name.deallocate()
            iov.deallocate()
            message.deallocate()
            slotData.deallocate()
            slotControl.deallocate()
            slotNames.deallocate()
            slotIovs.deallocate()
            slotMessages.deallocate()
        }
    }

    package func receiveLoop() {
        let buffers = Buffers()
        defer { buffers.deallocate() }
        var fds = [
            pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            let now = clock.now
            let timeout: Int32? = state.withLock { s in
                if s.retired { return nil }
                var wakeAt = now + .seconds(1)
                if let next = s.timers.peek, next < wakeAt { wakeAt = next }
                s.wakeAt = wakeAt
                // Round up so the thread never spins on a deadline a fraction of a millisecond away.
                let (seconds, attoseconds) = now.duration(to: wakeAt).components
                let nanos = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
                return Int32(clamping: max(0, (nanos + 999_999) / 1_000_000))
            }
            guard let timeout else { break }
            fds[0].revents = 0
            fds[1].revents = 0
            let n = poll(&fds, 2, timeout)
            if n < 0, errno != EINTR { break }
            if fds[1].revents != 0 {
                var drained: UInt64 = 0
                _ = Glibc.read(wakeFD, &drained, 8)
            }
            let events = Int32(fds[0].revents)
            if events & Int32(POLLNVAL) != 0 { break }
            if events & Int32(POLLIN) != 0 {
                if readsInBatches { drainMany(buffers) } else { drain(buffers, errorQueue: false) }
            }
            if events & Int32(POLLERR) != 0 {
                if kind == .datagram { drain(buffers, errorQueue: true) }
                // The error was also latched in sk_err (it would make poll report POLLERR forever): clear it.
                var pendingError: Int32 = 0
                var length = socklen_t(4)
                _ = getsockopt(fd, SOL_SOCKET, SO_ERROR, &pendingError, &length)
            }
            expireDeadlines()
        }
        shutDown()
    }

    /// Fails everything still pending and closes the descriptors (now, or after the last send).
    private func shutDown() {
        let orphans: Settled = state.withLock { s in
            s.retired = true
            s.threadDone = true
            var settled = Settled()
            let all = s.pending.values
            s.pending.removeAll()
            for p in all { s.settle(p, .abandoned("ICMP socket closed"), into: &settled) }
            s.timers = DeadlineHeap()
            closeIfUnused(&s)
            return settled
        }
        orphans.resume()
    }

    private func expireDeadlines() {
        let now = clock.now
        let expired: Settled = state.withLock { s in
            var settled = Settled()
            while let (deadline, token) = s.timers.peekEntry, deadline <= now {
                s.timers.pop()
                let sequence = UInt16(truncatingIfNeeded: token)
                if let p = s.pending[sequence], p.token == token {
                    s.pending[sequence] = nil
                    s.settle(p, .timedOut, into: &settled)
                }
            }
            return settled
        }
        expired.resume()
    }

    /// A receive header for one datagram: its source address, one data buffer, its control buffer.
    private static func header(
        name: UnsafeMutablePointer<sockaddr_storage>, iov: UnsafeMutablePointer<iovec>,
        control: UnsafeMutableRawPointer,
        controlSize: Int
    ) -> msghdr {
        var m = msghdr()
        m.msg_name = UnsafeMutableRawPointer(name)
        m.msg_namelen = socklen_t(MemoryLayout<sockaddr_storage>.size)
        m.msg_iov = iov
        m.msg_iovlen = 1
        m.msg_control = control
        m.msg_controllen = controlSize
        return m
    }

    /// Reads until the queue is empty (bounded, so timers still run under a flood).
    private func drain(_ b: Buffers, errorQueue: Bool) {
        var failures = 0
        for _ in 0..<512 {
            b.iov.pointee = iovec(iov_base: b.data, iov_len: Buffers.dataSize)
            b.message.pointee = Self.header(
                name: b.name, iov: b.iov, control: b.control, controlSize: Buffers.controlSize)
            let n = recvmsg(fd, b.message, Int32(MSG_DONTWAIT) | (errorQueue ? Int32(MSG_ERRQUEUE) : 0))
            if n < 0 {
                let e = errno
                if e == EAGAIN || e == EWOULDBLOCK { return }
                // EINTR, or a latched ICMP error (sk_err) reported once: read on, but not forever.
                failures += 1
                if failures > 2 { return }
                continue
            }
            let receivedAt = clock.now
            let meta = controlMessages(b.message)
            let bytes = UnsafeRawBufferPointer(start: b.data, count: n)
            let source = ICMPAddressKey(sockaddr: UnsafeRawPointer(b.name))
            if errorQueue {
                handleQueuedError(bytes, meta: meta, destination: source)
            } else {
                handle(bytes, meta: meta, source: source, sourceName: b.name, receivedAt: receivedAt)
            }
        }
    }

    /// Reads the queue with `recvmmsg`, `Buffers.slots` datagrams a call (bounded like `drain`),
    /// on a socket whose echoes' replies all fit a slot (`readsInBatches`). A datagram cut short
    /// (someone else's larger packet) is skipped: a truncated copy cannot pass the checksum.
    private func drainMany(_ b: Buffers) {
        var failures = 0
        for _ in 0..<(512 / Buffers.slots) {
            for k in 0..<Buffers.slots {
                b.slotIovs[k] = iovec(iov_base: b.slotData + k * Buffers.slotSize, iov_len: Buffers.slotSize)
                let m = Self.header(
                    name: b.slotNames + k, iov: b.slotIovs + k, control: b.slotControl + k * Buffers.slotControlSize,
                    controlSize: Buffers.slotControlSize)
                b.slotMessages[k] = cshim_mmsghdr(msg_hdr: m, msg_len: 0)
            }
            let n = Int(cshim_recvmmsg(fd, b.slotMessages, UInt32(Buffers.slots), Int32(MSG_DONTWAIT)))
            if n < 0 {
                let e = errno
                if e == EAGAIN || e == EWOULDBLOCK { return }
                failures += 1
                if failures > 2 { return }
                continue
            }
            let receivedAt = clock.now
            for k in 0..<n {
                let header = UnsafeMutableRawPointer(b.slotMessages + k).assumingMemoryBound(to: msghdr.self)
                if header.pointee.msg_flags & Int32(MSG_TRUNC) != 0 { continue }
                let bytes = UnsafeRawBufferPointer(
                    start: b.slotData + k * Buffers.slotSize, count: Int(b.slotMessages[k].msg_len))
                let source = ICMPAddressKey(sockaddr: UnsafeRawPointer(b.slotNames + k))
                handle(
                    bytes, meta: controlMessages(header), source: source, sourceName: b.slotNames + k,
                    receivedAt: receivedAt)
            }
            if n < Buffers.slots { return }
        }
    }

    private func controlMessages(_ message: UnsafeMutablePointer<msghdr>) -> Received {
        var r = Received()
        var header = cshim_CMSG_FIRSTHDR(message)
        while let h = header {
            let level = h.pointee.cmsg_level
            let type = h.pointee.cmsg_type
            let headerLength = cshim_CMSG_LEN(0)
            let dataLength = Int(h.pointee.cmsg_len) - headerLength
            if let data = cshim_CMSG_DATA(h), dataLength >= 0 {
                let raw = UnsafeRawBufferPointer(start: UnsafeRawPointer(data), count: dataLength)
                if level == SOL_SOCKET, type == SO_TIMESTAMPNS, dataLength >= MemoryLayout<timespec>.size {
                    let ts = raw.loadUnaligned(as: timespec.self)
                    r.realtimeNanos = Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
                } else if (level == IPPROTO_IP && type == IP_TTL) || (level == IPPROTO_IPV6 && type == IPV6_HOPLIMIT),
                    dataLength >= 4
                {
                    r.hopLimit = Int(raw.loadUnaligned(as: Int32.self))
                } else if (level == IPPROTO_IP && type == IP_RECVERR) || (level == IPPROTO_IPV6 && type == IPV6_RECVERR)
                {
                    r.extendedError = raw
                }
            }
            header = cshim_CMSG_NXTHDR(message, h)
        }
        return r
    }

    private func handle(
        _ bytes: UnsafeRawBufferPointer, meta: Received, source: ICMPAddressKey,
        sourceName: UnsafeMutablePointer<sockaddr_storage>, receivedAt: ContinuousClock.Instant
    ) {
        switch ICMPPacket.decode(bytes, layout: layout) {
        case .echoReply(let echo, let ttl)?:
            guard echo.identifier == identifier else { return }
            let settled: Settled = state.withLock { s in
                var settled = Settled()
                guard let p = s.pending[echo.sequence], p.destination == source,
                    !p.checksNonce || echo.nonce == p.nonce
                else { return settled }
                s.pending[echo.sequence] = nil
                let rtt = roundTrip(p, receivedAt: receivedAt, kernelStamp: meta.realtimeNanos)
                s.settle(p, .reply(rtt: rtt, ttl: ttl ?? meta.hopLimit), into: &settled)
                return settled
            }
            settled.resume()
        case .error(let report)?:
            guard report.echo.identifier == identifier else { return }
            let reporter = sourceName.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                SocketAddress($0, length: socklen_t(MemoryLayout<sockaddr_storage>.size)).ip
            }
            fail(report, destination: report.destination.map(ICMPAddressKey.init(bytes:)), reporter: reporter)
        default:
            return  // our own looped-back requests, other ICMP traffic, garbage
        }
    }

    private func handleQueuedError(_ bytes: UnsafeRawBufferPointer, meta: Received, destination: ICMPAddressKey) {
        guard let ee = meta.extendedError,
            let report = ICMPPacket.decodeQueuedError(extendedError: ee, quote: bytes, destination: nil),
            report.echo.identifier == identifier
        else { return }
        // SO_EE_OFFENDER: the sockaddr of the node that sent the error follows the 16-byte header.
        var reporter = "?"
        if ee.count >= 16 + MemoryLayout<sockaddr_in>.size, let base = ee.baseAddress {
            let family = Int32(base.loadUnaligned(fromByteOffset: 16, as: sa_family_t.self))
            let size = family == AF_INET6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size
            if family == AF_INET || family == AF_INET6, ee.count >= 16 + size {
                var storage = sockaddr_storage()
                withUnsafeMutableBytes(of: &storage) {
                    $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: ee[16..<(16 + size)]))
                }
                reporter = withUnsafePointer(to: &storage) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        SocketAddress($0, length: socklen_t(size)).ip
                    }
                }
            }
        }
        fail(report, destination: destination, reporter: reporter)
    }

    /// Completes the echo an ICMP error quotes (same sequence, nonce and destination when the quote has them).
    private func fail(_ report: ICMPErrorReport, destination: ICMPAddressKey?, reporter: String) {
        let now = clock.now
        let settled: Settled = state.withLock { s in
            var settled = Settled()
            guard let p = s.pending[report.echo.sequence] else { return settled }
            if let destination, destination != p.destination { return settled }
            if p.checksNonce, let nonce = report.echo.nonce, nonce != p.nonce { return settled }
            s.pending[report.echo.sequence] = nil
            let outcome: ICMPEchoOutcome
            if p.hopLimited {
                outcome = .hopError(
                    ICMPHopError(kind: report.kind, reporter: reporter, text: report.text, rtt: now - p.sentAt))
            } else {
                let text = "\(report.text) from \(reporter)" + (report.mtu.map { ", next-hop MTU \($0)" } ?? "")
                outcome = report.isTooBig ? .tooBig(mtu: report.mtu, text) : .icmpError(text)
            }
            s.settle(p, outcome, into: &settled)
            return settled
        }
        settled.resume()
    }

    /// The round trip: the kernel's receive stamp minus a REALTIME send stamp when that is
    /// plausible (not negative, not longer than the monotonic measure, so a clock step cannot
    /// distort it), else the monotonic difference. The kernel stamp leaves out the time the reply
    /// waited for this thread, which matters on a loaded machine.
    private func roundTrip(_ p: Pending, receivedAt: ContinuousClock.Instant, kernelStamp: Int64?) -> Duration {
        let monotonic = receivedAt - p.sentAt
        guard let kernelStamp else { return monotonic }
        let kernel = Duration.nanoseconds(kernelStamp - p.sentRealtimeNanos)
        if kernel >= .zero, kernel <= monotonic + .microseconds(100) { return kernel }
        return monotonic
    }
}
