/// A part of the host's connectivity that gets its own verdict: what the routing table gives
/// applications (`overall`), one IP family, or one uplink interface. The path gate answers per
/// scope; the verdict engine keeps a verdict per scope; `ReachabilityStatus` reports them by scope.
///
/// Typed from the verdict to the edges; its text (`label`) is written only where labels are
/// written: metrics, the history codec, JSON and logs. An uplink may not be named `overall`,
/// `ipv4` or `ipv6` (`reservedUplinkProblem`), so a label always reads back as the scope it was.
public enum Scope: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// What the routing table gives applications: the probes not bound to an uplink.
    case overall
    /// One IP family: the routed probes pinned to it, or whose answer came over it.
    case family(IPFamily)
    /// The probes bound to one interface.
    case uplink(String)

    /// The label in metrics, history and logs: `overall`, `ipv4`, `ipv6` or the interface.
    public var label: String {
        switch self {
        case .overall: "overall"
        case .family(let f): f.rawValue
        case .uplink(let i): i
        }
    }

    /// The label (`label`), so a scope prints as it is written in metrics and history.
    public var description: String { label }

    /// The scope a label names (the history codec's reading of `label`).
    public init(label: String) {
        if label == "overall" {
            self = .overall
        } else if let family = IPFamily(rawValue: label) {
            self = .family(family)
        } else {
            self = .uplink(label)
        }
    }

    /// Why `name` cannot be an uplink's name because it reads as another scope, or nil.
    public static func reservedUplinkProblem(_ name: String) -> String? {
        guard Scope(label: name) != .uplink(name) else { return nil }
        return "is reserved (overall, ipv4 and ipv6 name other scopes)"
    }

    /// Overall, IPv4, IPv6, then uplinks by name: the order reports list scopes in.
    public static func < (a: Scope, b: Scope) -> Bool {
        func rank(_ s: Scope) -> (Int, String) {
            switch s {
            case .overall: (0, "")
            case .family(.ipv4): (1, "")
            case .family(.ipv6): (2, "")
            case .uplink(let name): (3, name)
            }
        }
        return rank(a) < rank(b)
    }
}
