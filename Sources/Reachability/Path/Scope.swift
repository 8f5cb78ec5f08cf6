/// A scope a verdict is kept for.
package enum Scope: Hashable, Sendable, CustomStringConvertible {
    /// What the routing table gives applications: the probes not bound to an uplink.
    case overall
    /// One IP family: the routed probes pinned to it, or whose answer came over it.
    case family(IPFamily)
    /// The probes bound to one interface.
    case uplink(String)

    /// The label in metrics, history and logs: `overall`, `ipv4`, `ipv6` or the interface.
    package var description: String {
        switch self {
        case .overall: "overall"
        case .family(let f): f.rawValue
        case .uplink(let i): i
        }
    }
}
