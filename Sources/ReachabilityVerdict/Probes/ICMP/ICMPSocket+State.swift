/// What the state lock guards, as operations: registering an echo, and ending one (alone or as
/// an entry of a batch), with what the ending owes resumed once the lock is released.
extension ICMPSocket.State {
    /// Registers one echo to `destination` as pending: a sequence number unique among the
    /// echoes in flight (a 16-bit counter that skips numbers still pending, so wrapping is
    /// safe), a token, a nonce, and its deadline on the timer heap. The caller checked that the
    /// socket is open and not saturated.
    package mutating func register(
        to destination: ICMPAddressKey, payloadSize: Int, hopLimited: Bool, deadline: ContinuousClock.Instant,
        sentAt: ContinuousClock.Instant, realtime: Int64, secret: UInt64, waiter: ICMPSocket.Waiter
    ) -> (token: UInt64, sequence: UInt16, nonce: UInt64) {
        var sequence = nextSequence
        while pending[sequence] != nil { sequence &+= 1 }
        nextSequence = sequence &+ 1
        counter += 1
        let token = counter << 16 | UInt64(sequence)
        // Multiplying by an odd constant is a bijection, so nonces never repeat on this socket.
        let nonce = secret ^ (counter &* 0x9E37_79B9_7F4A_7C15)
        pending[sequence] = ICMPSocket.Pending(
            token: token, nonce: nonce, checksNonce: payloadSize >= ICMPPacket.nonceSize, hopLimited: hopLimited,
            destination: destination, sentAt: sentAt, sentRealtimeNanos: realtime, waiter: waiter)
        timers.push(deadline, token)
        return (token, sequence, nonce)
    }

    /// Removes the pending echo `p` with `outcome`; what it completes goes into `settled`,
    /// to be resumed once the lock is released.
    package mutating func settle(
        _ p: ICMPSocket.Pending, _ outcome: ICMPEchoOutcome, into settled: inout ICMPSocket.Settled
    ) {
        switch p.waiter {
        case .one(let c): settled.ones.append((c, outcome))
        case .batch(let id, let index): record(batch: id, index, outcome, at: .now, into: &settled)
        }
    }

    /// Records entry `index` of batch `id` (once); its `onEnded` and, when it was the last, the
    /// batch's continuation go into `settled`.
    package mutating func record(
        batch id: UInt64, _ index: Int, _ outcome: ICMPEchoOutcome, at: ContinuousClock.Instant,
        into settled: inout ICMPSocket.Settled
    ) {
        guard let last = batches[id]?.record(index, outcome, at: at) else { return }
        if let onEnded = batches[id]?.onEnded {
            settled.ended.append((onEnded, index, EchoBatch.Result(outcome: outcome, at: at)))
        }
        guard last, let done = batches.removeValue(forKey: id) else { return }
        settled.batches.append((done.continuation, done.results()))
    }
}

extension ICMPSocket {
    /// Continuations that completed echoes owe, resumed after the state lock is released.
    package struct Settled {
        package var ones: [(CheckedContinuation<ICMPEchoOutcome, Never>, ICMPEchoOutcome)] = []
        package var batches: [(CheckedContinuation<[EchoBatch.Result], Never>, [EchoBatch.Result])] = []
        /// Each batched echo that ended, for its batch's `onEnded` (called before any resumption).
        package var ended: [(EchoBatch.EndHandler, Int, EchoBatch.Result)] = []

        package func resume() {
            for (handler, index, result) in ended { handler(index, result) }
            for (c, outcome) in ones { c.resume(returning: outcome) }
            for (c, results) in batches { c.resume(returning: results) }
        }
    }
}
