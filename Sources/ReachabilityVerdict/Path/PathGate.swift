/// What gates probing: the path monitor's view of the host's network, reduced to what the
/// scheduler needs. `nil` reason means a usable path.
package protocol PathGate: Sendable {
    /// Why there is no usable path for the family (nil family: for any family), or nil.
    func unsatisfiedReason(for family: IPFamily?) -> PathUnsatisfiedReason?
    /// Why the interface cannot carry traffic (down, no carrier, no address), or nil.
    func unsatisfiedReason(interface: String) -> PathUnsatisfiedReason?
    /// Interfaces that hold a default route now (for `uplinks: auto`).
    var defaultRouteInterfaces: [String] { get }
    /// A new element after each coalesced change.
    func changes() -> AsyncStream<Void>
    /// The test of whether an answer may have come from the local network (loopback,
    /// link-local, on-link, the gateway), for the path as it is now: see `AddressLocality`. Such
    /// an answer is no evidence of the internet. The default knows only the rules that need no path.
    func localityMatcher() -> AddressLocality.Matcher
    /// The kind of the interface carrying the preferred default route (IPv4, else IPv6).
    var connectionType: ConnectionType { get }
    /// The default gateway a scope's traffic goes through now (overall: IPv4's, else IPv6's;
    /// an uplink: its own default route), for fault localization; nil when unknown.
    func gatewayRoute(for scope: Scope) -> GatewayRoute?
    /// The host's addresses (raw bytes, 4 or 16) and indices, each with its interface's name.
    var interfaceNames: (byAddress: [[UInt8]: String], byIndex: [UInt32: String]) { get }
    /// What routers announce per interface now (captive-portal API, PREF64).
    var announcements: [RouterAnnouncement] { get }
}

extension PathGate {
    package func localityMatcher() -> AddressLocality.Matcher { .intrinsicOnly }
    package var connectionType: ConnectionType { .unknown }
    package func gatewayRoute(for scope: Scope) -> GatewayRoute? { nil }
    package var interfaceNames: (byAddress: [[UInt8]: String], byIndex: [UInt32: String]) { ([:], [:]) }
    package var announcements: [RouterAnnouncement] { [] }
}

/// A gate that is always open: used when path monitoring is off (for example in a namespace
/// without netlink access) — probes alone decide.
package struct OpenPathGate: PathGate {
    package init() {}
    package func unsatisfiedReason(for family: IPFamily?) -> PathUnsatisfiedReason? { nil }
    package func unsatisfiedReason(interface: String) -> PathUnsatisfiedReason? { nil }
    package var defaultRouteInterfaces: [String] { [] }
    package func changes() -> AsyncStream<Void> { AsyncStream { _ in } }
}
