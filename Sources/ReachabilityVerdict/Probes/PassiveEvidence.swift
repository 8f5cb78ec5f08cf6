/// What the host's own TCP connections say about a scope, read without sending anything
/// (`SockDiag`): how many receive data now, how many stall, and how fresh the newest data is.
/// Counts and ages only: no address or port leaves this type.
package struct PassiveSummary: Sendable, Equatable {
    /// Established connections that received data within the freshness window.
    package var receiving = 0
    /// Of those, the ones that received data since about the last read (`Settings.vouchWindow`):
    /// what vouches for a scope under `prefer`, so a download that stops stops vouching within
    /// a read or two, not a freshness window later.
    package var fresh = 0
    /// Connections that keep retransmitting with nothing received within the window (or a
    /// connection attempt whose SYN was sent again): early evidence of a stall.
    package var stalled = 0
    /// Established connections neither receiving nor stalled (idle).
    package var quiet = 0
    /// Since data last came in on any counted connection; nil when none ever received.
    package var freshestReceive: Duration?

    package init(
        receiving: Int = 0, stalled: Int = 0, quiet: Int = 0, freshestReceive: Duration? = nil, fresh: Int? = nil
    ) {
        self.receiving = receiving
        self.fresh = fresh ?? receiving
        self.stalled = stalled
        self.quiet = quiet
        self.freshestReceive = freshestReceive
    }

    /// Stalling with nothing else receiving: what makes the scheduler probe at once.
    package var isStalling: Bool { stalled > 0 && receiving == 0 }
    /// Under `prefer`, whether this vouches for its scope: data came in since about the last
    /// read, and nothing stalls.
    package var vouches: Bool { fresh > 0 && stalled == 0 }
}

/// Classifies the host's TCP connections into passive evidence, per scope. Pure.
///
/// What it can prove: data received within the window on an established connection to a
/// public address shows that something at that address (or on the path to it) keeps sending
/// this host data through that uplink now. What an on-path box could fake: a transparent proxy
/// or cache that terminates TCP receives and sends in the server's place (a cache can serve a
/// long download with the WAN down); a captive portal does the same for the few connections it
/// answers. Stalls cannot be faked into successes: a box that drops traffic only makes them
/// show sooner. Connections to private, loopback, link-local and multicast addresses, to the
/// host's own addresses, to on-link neighbours (inside the prefix of one of the host's
/// addresses) and to a gateway are never counted (they prove nothing beyond the gateway).
package enum PassiveEvidence {
    package struct Settings: Sendable, Equatable {
        /// How recent data must be to count as receiving.
        package var freshness: Duration
        /// Consecutive retransmission timeouts (with nothing received in the window) that make
        /// an established connection stalled.
        package var stallRetransmits: Int

        /// How recent data must be for a connection to vouch (`PassiveSummary.fresh`): the read
        /// interval and a little (`PassiveConfig.vouchWindow`).
        package var vouchWindow: Duration

        package static let defaultFreshness = Duration.seconds(10)
        package static let defaultStallRetransmits = 2
        /// The default read interval (1 s) and a quarter second; the watch sets its own.
        package static let defaultVouchWindow = Duration.milliseconds(1250)

        package init(
            freshness: Duration = defaultFreshness, stallRetransmits: Int = defaultStallRetransmits,
            vouchWindow: Duration = defaultVouchWindow
        ) {
            self.freshness = freshness
            self.stallRetransmits = stallRetransmits
            self.vouchWindow = vouchWindow
        }
    }

    package enum Kind: Sendable, Equatable {
        case receiving, stalled, quiet
    }

    /// One connection's kind; nil when it does not count (not to a public address, or to an
    /// address `isLocalPeer` calls local: the host's own, on-link, a gateway).
    package static func classify(
        _ s: TCPSocketInfo, settings: Settings, isLocalPeer: ([UInt8]) -> Bool = { _ in false }
    ) -> Kind? {
        guard isPublic(s.destination), !isLocalPeer(s.destination) else { return nil }
        let window = settings.freshness.milliseconds
        let received = Int64(s.lastDataReceived) <= window && (s.bytesReceived ?? 1) > 0
        if s.state == TCPSocketInfo.synSent { return s.retransmits >= 1 ? .stalled : nil }
        guard s.state == TCPSocketInfo.established else { return nil }
        if received { return .receiving }
        if Int(s.retransmits) >= settings.stallRetransmits, s.unacked > 0 { return .stalled }
        return .quiet
    }

    /// Per scope: overall, each family with connections, and each of `uplinks` (a connection
    /// belongs to the uplink whose address is its source, or to which it is bound).
    package static func summarize(
        _ sockets: [TCPSocketInfo], settings: Settings, uplinks: [String],
        interfaceOfAddress: [[UInt8]: String], interfaceOfIndex: [UInt32: String],
        isLocalPeer: ([UInt8]) -> Bool = { _ in false }
    ) -> [Scope: PassiveSummary] {
        var out: [Scope: PassiveSummary] = [
            .overall: PassiveSummary(), .family(.ipv4): PassiveSummary(), .family(.ipv6): PassiveSummary(),
        ]
        for u in uplinks { out[.uplink(u)] = PassiveSummary() }
        let wanted = Set(uplinks)
        for s in sockets {
            guard let kind = classify(s, settings: settings, isLocalPeer: isLocalPeer) else { continue }
            var scopes: [Scope] = [.overall, .family(s.family)]
            let uplink = s.boundInterface != 0 ? interfaceOfIndex[s.boundInterface] : interfaceOfAddress[s.source]
            if let uplink, wanted.contains(uplink) { scopes.append(.uplink(uplink)) }
            let age = Duration.milliseconds(Int64(s.lastDataReceived))
            for scope in scopes {
                var summary = out[scope] ?? PassiveSummary()
                switch kind {
                case .receiving:
                    summary.receiving += 1
                    if age <= settings.vouchWindow { summary.fresh += 1 }
                case .stalled: summary.stalled += 1
                case .quiet: summary.quiet += 1
                }
                if (s.bytesReceived ?? 1) > 0, summary.freshestReceive.map({ age < $0 }) ?? true {
                    summary.freshestReceive = age
                }
                out[scope] = summary
            }
        }
        return out
    }

    /// Not unspecified, loopback, private (RFC 1918, CGNAT, ULA), link-local or multicast; an
    /// IPv4-mapped IPv6 address by the IPv4 address it holds.
    package static func isPublic(_ b: [UInt8]) -> Bool {
        if b.count == 4 {
            switch (b[0], b[1]) {
            case (0, _), (10, _), (127, _), (100, 64...127), (169, 254), (172, 16...31), (192, 168): return false
            default: return b[0] < 224
            }
        }
        guard b.count == 16 else { return false }
        if b[0..<10].allSatisfy({ $0 == 0 }), b[10] == 0xFF, b[11] == 0xFF { return isPublic(Array(b[12..<16])) }
        if b[0..<15].allSatisfy({ $0 == 0 }) { return false }
        return !(b[0] & 0xFE == 0xFC || b[0] == 0xFF || (b[0] == 0xFE && b[1] & 0xC0 == 0x80))
    }
}
