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

    /// Told of each echo as it ends (its index in the batch), on whichever thread ended it,
    /// before the batch's continuation is resumed. Must be quick: the receive thread calls it.
    package typealias EndHandler = @Sendable (Int, Result) -> Void

    package let continuation: CheckedContinuation<[Result], Never>
    package let onEnded: EndHandler?
    private var slots: [Result?]
    private var remaining: Int

    package init(count: Int, continuation: CheckedContinuation<[Result], Never>, onEnded: EndHandler?) {
        self.continuation = continuation
        self.onEnded = onEnded
        slots = Array(repeating: nil, count: count)
        remaining = count
    }

    /// Records entry `index`; nil when it was already recorded, else whether it was the last.
    package mutating func record(_ index: Int, _ outcome: ICMPEchoOutcome, at: ContinuousClock.Instant) -> Bool? {
        guard slots.indices.contains(index), slots[index] == nil else { return nil }
        slots[index] = Result(outcome: outcome, at: at)
        remaining -= 1
        return remaining == 0
    }

    /// The outcomes in request order (only complete once `record` said it was the last).
    package func results() -> [Result] {
        slots.map { $0 ?? Result(outcome: .abandoned("lost"), at: .now) }
    }
}

extension ICMPSocket {
    /// One echo of a batch: where to, how many payload bytes, and until when to wait.
    package struct BatchEcho: Sendable {
        package var destination: SocketAddress
        package var payloadSize: Int
        package var deadline: ContinuousClock.Instant
    }

    /// Sends the echoes of `requests` with `sendmmsg` and waits until every one has ended —
    /// reply, ICMP error quoting it, or its deadline — with one continuation for all: a slot's
    /// echoes cost one registration under the lock, a few send calls and one resumption, not
    /// one of each per echo as `echo` does. Matching, nonces and deadlines are `echo`'s, so a
    /// batched echo proves exactly what a single one does. `onEnded` hears of each echo as it
    /// ends. Results come in request order. Never throws; cancellation ends the waiting ones.
    package func echoBatch(_ requests: [BatchEcho], onEnded: EchoBatch.EndHandler? = nil) async -> [EchoBatch.Result] {
        guard !requests.isEmpty else { return [] }
        let tokens = Mutex<[UInt64]?>([])
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[EchoBatch.Result], Never>) in
                if Task.isCancelled {
                    let now = clock.now
                    let results = requests.map { _ in EchoBatch.Result(outcome: .notSent(.error, "cancelled"), at: now)
                    }
                    for (i, r) in results.enumerated() { onEnded?(i, r) }
                    continuation.resume(returning: results)
                    return
                }
                guard let registered = register(requests, continuation: continuation, onEnded: onEnded) else { return }
                let mine = registered.compactMap { $0?.token }
                // Cancelled while registering: `onCancel` found no tokens (nil marks that it ran).
                let missed = tokens.withLock { t -> Bool in
                    guard t != nil else { return true }
                    t = mine
                    return false
                }
                if missed {
                    state.withLock { s in
                        s.sendsInFlight -= 1
                        closeIfUnused(&s)
                    }
                    for token in mine { complete(token, .abandoned("cancelled")) }
                    return
                }
                send(requests, registered)
            }
        } onCancel: {
            let mine = tokens.withLock { t -> [UInt64] in
                defer { t = nil }
                return t ?? []
            }
            for token in mine { complete(token, .abandoned("cancelled")) }
        }
    }

    private typealias Registration = (token: UInt64, sequence: UInt16, nonce: UInt64)

    /// Messages per `sendmmsg` call: each call's echoes are stamped just before it.
    package static let messagesPerCall = 16
    /// How many times a batch pauses (1 ms each) for room in a full send buffer or queue before
    /// the echo at hand fails with the errno, as `echo`'s would at once.
    package static let sendBufferWaits = 3

    /// Stamps the pending echoes `tokens` as sent now.
    private func restamp(_ tokens: [UInt64]) {
        let now = clock.now
        let realtime = Self.realtimeNanos()
        state.withLock { s in
            for token in tokens {
                let sequence = UInt16(truncatingIfNeeded: token)
                guard s.pending[sequence]?.token == token else { continue }
                s.pending[sequence]!.sentAt = now
                s.pending[sequence]!.sentRealtimeNanos = realtime
            }
        }
    }

    /// Registers each echo as pending under one lock; those that cannot be sent (deadline passed,
    /// socket closed or saturated) end at once. Nil when none is left to send (the continuation
    /// was resumed); else the registration of each request, nil for those that ended.
    private func register(
        _ requests: [BatchEcho], continuation: CheckedContinuation<[EchoBatch.Result], Never>,
        onEnded: EchoBatch.EndHandler?
    ) -> [Registration?]? {
        let now = clock.now
        let realtime = Self.realtimeNanos()
        let (registered, wake, done): ([Registration?], Bool, Settled) = state.withLock { s in
            s.nextBatch += 1
            let id = s.nextBatch
            s.batches[id] = EchoBatch(count: requests.count, continuation: continuation, onEnded: onEnded)
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
                    // Through `State.record`, like every other end: its `onEnded` must hear of it.
                    s.record(batch: id, index, refusal, at: now, into: &settled)
                    continue
                }
                let (token, sequence, nonce) = s.register(
                    to: ICMPAddressKey(request.destination), payloadSize: request.payloadSize, hopLimited: false,
                    deadline: request.deadline, sentAt: now, realtime: realtime, secret: secret,
                    waiter: .batch(id: id, index: index))
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
        var waits = 0
        while next < live.count {
            // A few messages per call, stamped just before it: an echo's round trip starts at most
            // a few microseconds before it really left, as `echo`'s does.
            let count = min(Self.messagesPerCall, live.count - next)
            restamp(live[next..<(next + count)].map { registered[$0]!.token })
            let rc = cshim_sendmmsg(fd, messages + next, UInt32(count), Int32(MSG_DONTWAIT))
            if rc > 0 {
                next += Int(rc)
                retries = 0
                continue
            }
            let code = rc < 0 ? errno : EAGAIN
            if code == EINTR { continue }
            // As in `echo`: a ping socket's latched ICMP error fails the next send once; retry it.
            // Each echo this batch already sent may latch one error of its own (a reject arriving
            // while later calls run), so the bound grows with them: a genuine error still repeats
            // past it, and another destination's error is not blamed on this echo.
            if kind == .datagram, retries < 3 + min(next, 64), Self.latchableErrors.contains(code) {
                retries += 1
                continue
            }
            // A full send buffer or queue (a burst on a slow link): a millisecond's pause, a few
            // times at most (this runs on a task pool thread), then the echo fails as `echo`'s would.
            if code == EAGAIN || code == ENOBUFS, waits < Self.sendBufferWaits {
                waits += 1
                usleep(1000)
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
