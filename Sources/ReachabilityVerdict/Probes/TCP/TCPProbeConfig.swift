/// Where a TCP probe connects: a host (name or IP literal) and port, which address families it
/// may use, and optionally the device to leave through. Built only through the throwing
/// initialisers, so a value that exists is valid.
package struct TCPProbeConfig: Sendable, Equatable {
    package let target: HostPort
    /// Families the resolved addresses may have; an IP literal of another family is refused here.
    package let family: FamilyPreference
    /// Device to bind the socket to (SO_BINDTODEVICE; needs CAP_NET_RAW).
    package let interface: String?
    /// Most resolved addresses tried in one round (in resolver order).
    package let maxAddresses: Int
    /// A regular expression (Swift `Regex`, unanchored) the server's first bytes must match
    /// (`tcp.expect`: `^SSH-2\.0-`): the connection proves the server, not only the path. Nil:
    /// the handshake alone.
    package let expect: String?
    /// A port of the same address that should be closed (`tcp.canary_port`), tried beside the
    /// connection: when it connects too, something on the path completes every handshake and the
    /// probe's connection proves nothing (`intercepted`). Nil: no canary (with `expect`, or
    /// `canary_port: 0`).
    package let canaryPort: UInt16?

    /// The default canary: tcpmux, a port no server on the internet offers.
    package static let defaultCanaryPort: UInt16 = 1
    /// A `/probe` module's conversation (blackbox's `query_response`, `tls`), run after the
    /// connect instead of the banner check and the canary; nil for the file's probes.
    package var dialog: TCPDialog?

    /// - Parameter target: `host:port`, `192.0.2.1:443` or `[2001:db8::1]:443`; the port is required.
    package init(
        target: String, family: FamilyPreference = .any, interface: String? = nil, maxAddresses: Int = 4,
        expect: String? = nil, canaryPort: UInt16? = TCPProbeConfig.defaultCanaryPort
    )
        throws(ProbeConfigError)
    {
        let parsed: HostPort
        do {
            parsed = try HostPort(parsing: target)
        } catch {
            throw ProbeConfigError(.target, "tcp target \(error.message)")
        }
        try self.init(
            target: parsed, family: family, interface: interface, maxAddresses: maxAddresses, expect: expect,
            canaryPort: canaryPort)
    }

    package init(
        target: HostPort, family: FamilyPreference = .any, interface: String? = nil, maxAddresses: Int = 4,
        expect: String? = nil, canaryPort: UInt16? = TCPProbeConfig.defaultCanaryPort
    )
        throws(ProbeConfigError)
    {
        // Re-parsing the text form applies every host and port rule to values built in code.
        guard (try? HostPort(parsing: target.description)) == target else {
            throw ProbeConfigError(.target, "tcp target \(target.description.debugDescription): not a valid host:port")
        }
        if let literal = target.numericAddress, !family.admits(literal.ipFamily) {
            throw ProbeConfigError(
                .family,
                "tcp target \(target): is an \(literal.ipFamily.rawValue) address but family is \(family.rawValue)")
        }
        try ProbeConfigError.checkInterface(interface)
        guard (1...16).contains(maxAddresses) else {
            throw ProbeConfigError(.tcpMaxAddresses, "tcp max addresses \(maxAddresses): must be 1–16")
        }
        if let expect {
            guard !expect.isEmpty, (try? Regex(expect)) != nil else {
                throw ProbeConfigError(
                    .tcpExpect, "tcp expect \(expect.debugDescription): not a regular expression (Swift Regex syntax)")
            }
        }
        if let canaryPort, canaryPort == 0 {
            throw ProbeConfigError(.tcpCanaryPort, "tcp canary_port 0: must be 1–65535")
        }
        self.target = target
        self.family = family
        self.interface = interface
        self.maxAddresses = maxAddresses
        self.expect = expect
        // A server's banner proves more than a canary can: with `expect` there is none. On a port
        // gateways intercept (53, 80, 443) the connection is local evidence anyway: no canary.
        self.canaryPort =
            expect == nil && canaryPort != target.port && !Self.interceptablePorts.contains(target.port)
            ? canaryPort : nil
    }

    /// The same probe bound to `interface`.
    package func bound(to interface: String?) throws(ProbeConfigError) -> TCPProbeConfig {
        var copy = try TCPProbeConfig(
            target: target, family: family, interface: interface, maxAddresses: maxAddresses, expect: expect,
            canaryPort: canaryPort)
        copy.dialog = dialog
        return copy
    }
}
