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

    /// - Parameter target: `host:port`, `192.0.2.1:443` or `[2001:db8::1]:443`; the port is required.
    package init(target: String, family: FamilyPreference = .any, interface: String? = nil, maxAddresses: Int = 4)
        throws(ProbeConfigError)
    {
        let parsed: HostPort
        do {
            parsed = try HostPort(parsing: target)
        } catch {
            throw ProbeConfigError("tcp target \(error.message)")
        }
        try self.init(target: parsed, family: family, interface: interface, maxAddresses: maxAddresses)
    }

    package init(target: HostPort, family: FamilyPreference = .any, interface: String? = nil, maxAddresses: Int = 4)
        throws(ProbeConfigError)
    {
        // Re-parsing the text form applies every host and port rule to values built in code.
        guard (try? HostPort(parsing: target.description)) == target else {
            throw ProbeConfigError("tcp target \(target.description.debugDescription): not a valid host:port")
        }
        if let literal = target.numericAddress, !family.admits(literal.ipFamily) {
            throw ProbeConfigError(
                "tcp target \(target): is an \(literal.ipFamily.rawValue) address but family is \(family.rawValue)")
        }
        try ProbeConfigError.checkInterface(interface)
        guard (1...16).contains(maxAddresses) else {
            throw ProbeConfigError("tcp max addresses \(maxAddresses): must be 1–16")
        }
        self.target = target
        self.family = family
        self.interface = interface
        self.maxAddresses = maxAddresses
    }
}
