import CShim
import Glibc
import Synchronization

/// The echoes of one batch (`ICMPSocket.echoBatch`) still being waited for: the receive thread
/// records each outcome here, and the last one resumes the batch's single continuation.
package struct EchoBatch {
    /// How one echo of a batch ended, and when (its round's duration ends there, not when the
    /// slowest echo of the batch ended).
    package struct Result: Sendable, Equatable {
        package var outcome: ICMPEchoOutcome
        package var at: ContinuousClock.Instant
    }

    let continuation: CheckedContinuation<[Result], Never>
    private var slots: [Result?]
    private var remaining: Int

    init(count: Int, continuation: CheckedContinuation<[Result], Never>) {
        self.continuation = continuation
        slots = Array(repeating: nil, count: count)
        remaining = count
    }

    /// Records entry `index` (once); true when it was the last one outstanding.
    mutating func record(_ index: Int, _ outcome: ICMPEchoOutcome, at: ContinuousClock.Instant) -> Bool {
        guard slots.indices.contains(index), slots[index] == nil else { return false }
        slots[index] = Result(outcome: outcome, at: at)
        remaining -= 1
        return remaining == 0
    }

    /// The outcomes in request order (only complete once `record` returned true).
    func results() -> [Result] {
        slots.map { $0 ?? Result(outcome: .abandoned("lost"), at: .now) }
    }
}

extension ICMPSocket {
    /// One echo of a batch: where to, how many payload bytes, and until when to wait.
    struct BatchEcho: Sendable {
        var destination: SocketAddress
        var payloadSize: Int
        var deadline: ContinuousClock.Instant
    }

    /// Sends the echoes of `requests` with `sendmmsg` (one call, more only when the kernel takes
    /// fewer) and waits until every one has ended — reply, ICMP error quoting it, or its deadline —
    /// with one continuation for all: a slot's echoes cost one registration under the lock, one
    /// send call and one resumption, not one of each per echo as `echo` does. Matching, nonces
    /// and deadlines are `echo`'s, so a batched echo proves exactly what a single one does.
    /// Results come in request order. Never throws; cancellation ends the waiting ones at once.
    func echoBatch(_ requests: [BatchEcho]) async -> [EchoBatch.Result] {
        guard !requests.isEmpty else { return [] }
        let tokens = Mutex<[UInt64]>([])
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[EchoBatch.Result], Never>) in
                if Task.isCancelled {
                    let now = clock.now
                    continuation.resume(
                        returning: requests.map { _ in .init(outcome: .notSent(.error, "cancelled"), at: now) })
                    return
                }
                guard let registered = register(requests, continuation: continuation) else { return }
                tokens.withLock { $0 = registered.compactMap { $0?.token } }
                send(requests, registered)
            }
        } onCancel: {
            for token in tokens.withLock({ $0 }) { complete(token, .abandoned("cancelled")) }
        }
    }

    private typealias Registration = (token: UInt64, sequence: UInt16, nonce: UInt64)

    /// Registers each echo as pending under one lock; those that cannot be sent (deadline passed,
    /// socket closed or saturated) end at once. Nil when none is left to send (the continuation
    /// was resumed); else the registration of each request, nil for those that ended.
    private func register(_ requests: [BatchEcho], continuation: CheckedContinuation<[EchoBatch.Result], Never>)
        -> [Registration?]?
    {
        let now = clock.now
        let realtime = Self.realtimeNanos()
        let (registered, wake, done): ([Registration?], Bool, Settled) = state.withLock { s in
            s.nextBatch += 1
            let id = s.nextBatch
            s.batches[id] = EchoBatch(count: requests.count, continuation: continuation)
            var registered: [Registration?] = []
            registered.reserveCapacity(requests.count)
            var earliest: ContinuousClock.Instant?
            var settled = Settled()
            for (index, request) in requests.enumerated() {
                let refusal: ICMPEchoOutcome? =
                    request.deadline <= now
                    ? .notSent(.timeout, "the deadline passed before sending")
                    : s.retired || s.pending.count >= Int(UInt16.max)
                        ? .notSent(.error, "ICMP socket closed or saturated") : nil
                if let refusal {
                    registered.append(nil)
                    if s.batches[id]?.record(index, refusal, at: now) == true, let b = s.batches.removeValue(forKey: id)
                    {
                        settled.batches.append((b.continuation, b.results()))
                    }
                    continue
                }
                var sequence = s.nextSequence
                while s.pending[sequence] != nil { sequence &+= 1 }
                s.nextSequence = sequence &+ 1
                s.counter += 1
                let token = s.counter << 16 | UInt64(sequence)
                let nonce = secret ^ (s.counter &* 0x9E37_79B9_7F4A_7C15)
                s.pending[sequence] = Pending(
                    token: token, nonce: nonce, checksNonce: request.payloadSize >= ICMPPacket.nonceSize,
                    hopLimited: false, destination: ICMPAddressKey(request.destination), sentAt: now,
                    sentRealtimeNanos: realtime, waiter: .batch(id: id, index: index))
                s.largestPayload = max(s.largestPayload, request.payloadSize)
                s.timers.push(request.deadline, token)
                earliest = min(earliest ?? request.deadline, request.deadline)
                registered.append((token, sequence, nonce))
            }
            var wake = false
            if let earliest {
                s.sendsInFlight += 1
                wake = s.wakeAt.map { earliest < $0 } ?? true
                if wake { s.wakeAt = earliest }
            }
            return (registered, wake, settled)
        }
        done.resume()
        if wake { self.wake() }
        return registered.contains(where: { $0 != nil }) ? registered : nil
    }

    /// Writes the registered echoes into one buffer and sends them with `sendmmsg`; an echo the
    /// kernel refuses ends with that errno (as `echo`'s would), and the rest are sent on.
    private func send(_ requests: [BatchEcho], _ registered: [Registration?]) {
        let live = registered.indices.filter { registered[$0] != nil }
        let sizes = live.map { ICMPPacket.headerSize + max(0, requests[$0].payloadSize) }
        let data = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, sizes.reduce(0, +)), alignment: 8)
        let names = UnsafeMutablePointer<sockaddr_storage>.allocate(capacity: live.count)
        let iovs = UnsafeMutablePointer<iovec>.allocate(capacity: live.count)
        let messages = UnsafeMutablePointer<cshim_mmsghdr>.allocate(capacity: live.count)
        defer {
            data.deallocate()
            names.deallocate()
            iovs.deallocate()
            messages.deallocate()
        }
        var offset = 0
        for (k, index) in live.enumerated() {
            let r = registered[index]!
            let packet = ICMPPacket.echoRequest(
                family: family, identifier: identifier, sequence: r.sequence, nonce: r.nonce,
                payloadSize: requests[index].payloadSize)
            let start = data.baseAddress! + offset
            packet.withUnsafeBytes { start.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            iovs[k] = iovec(iov_base: start, iov_len: sizes[k])
            offset += sizes[k]
            (names + k).initialize(to: sockaddr_storage())
            let length = requests[index].destination.withSockAddr { address, length in
                UnsafeMutableRawPointer(names + k).copyMemory(from: address, byteCount: Int(length))
                return length
            }
            var header = msghdr()
            header.msg_name = UnsafeMutableRawPointer(names + k)
            header.msg_namelen = length
            header.msg_iov = iovs + k
            header.msg_iovlen = 1
            (messages + k).initialize(to: cshim_mmsghdr(msg_hdr: header, msg_len: 0))
        }
        var failures: [(index: Int, errno: Int32)] = []
        var next = 0
        var retries = 0
        while next < live.count {
            let rc = cshim_sendmmsg(fd, messages + next, UInt32(live.count - next), Int32(MSG_DONTWAIT))
            if rc > 0 {
                next += Int(rc)
                retries = 0
                continue
            }
            let code = rc < 0 ? errno : EAGAIN
            if code == EINTR { continue }
            // As in `echo`: a ping socket's latched ICMP error fails the next send once; retry it.
            if kind == .datagram, retries < 3, Self.latchableErrors.contains(code) {
                retries += 1
                continue
            }
            failures.append((live[next], code))
            next += 1
            retries = 0
        }
        state.withLock { s in
            s.sendsInFlight -= 1
            closeIfUnused(&s)
        }
        for (index, code) in failures {
            complete(registered[index]!.token, .sendFailure(code, destination: requests[index].destination))
        }
        if interface != nil, failures.contains(where: { $0.errno == ENODEV || $0.errno == ENXIO }) { retire() }
    }
}
