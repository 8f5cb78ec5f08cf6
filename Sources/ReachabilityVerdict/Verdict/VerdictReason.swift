/// Why a scope holds its state (nil for `full` and `unknown`): the `reason` label of
/// `reachability_connectivity_info`, the history's verdicts, the status page, `check` and the logs.
///
/// A reason is one of three closed sets: the path's (`none`: why there is no usable path), a
/// probe's (a portal signal, what a box on the path faked, the most common failure), or a rule
/// of the round classifier that names no single probe's failure (`partial`, `no_probes`,
/// `quorum`, `unproven`). Typed from the classifier to the edges; its text (`label`) is written
/// only where labels are written, and reads back as the reason it was (`init(label:)`).
///
/// `dns` and `mtu` are each one value, `probe(.dns)` and `probe(.mtu)`, for two rules each, as
/// their one label is: `dns` is "every DNS probe fails while others succeed" and "name
/// resolution is the most common failure"; `mtu` is "an MTU probe found the path too small" and
/// "a don't-fragment echo was too big while another probe proves the internet" (or the most
/// common failure). The fault location treats each alike (`limitedLocation`).
public enum VerdictReason: Sendable, Hashable, Codable, CustomStringConvertible {
    /// `none`: why there is no usable path (`no_interface`, `no_carrier`, `no_address`,
    /// `no_default_route`).
    case path(PathUnsatisfiedReason)
    /// A probe's reason: the round's portal signal (`redirect`…), what a box on the path answered
    /// in a target's place (`forged_reply`, `intercepted`), `dns` or `mtu` (above), else the most
    /// common failure of the probes that could prove the internet (`timeout`, `refused`…).
    case probe(FailureReason)
    /// `no_probes`: no probe counts under the policy.
    case noProbes
    /// `partial`: plain HTTP succeeds while every HTTPS probe fails (Android's PARTIAL).
    case partial
    /// `quorum`: nothing failed, but fewer probes succeeded than the quorum needs.
    case quorum
    /// `unproven`: nothing failed, but every success could have come from the local network.
    case unproven
    /// `portal`: a portal answer that named no signal (the probers always name one).
    case portal
    /// `captive_portal_api`: the network's own captive-portal API (RFC 8908) says it holds this
    /// host captive (`captive: true`).
    case captivePortalAPI
    /// A label this build does not know, kept as read (a history written by another version, or
    /// damaged): it is written back as it was. `init(label:)` never gives one for a known label.
    case unrecognized(String)

    /// The classifier's own reasons, in the order the mixin's list shows them.
    package static let rules: [VerdictReason] = [.noProbes, .partial, .quorum, .unproven, .portal, .captivePortalAPI]

    /// Every reason this build can give: the classifier's own, the path's, the probes'.
    package static let known: [VerdictReason] =
        rules + PathUnsatisfiedReason.allCases.map(VerdictReason.path) + FailureReason.allCases.map(VerdictReason.probe)

    private static let byLabel: [String: VerdictReason] = Dictionary(
        known.map { ($0.label, $0) }, uniquingKeysWith: { a, _ in a })

    /// The label value: `timeout`, `no_default_route`, `partial`….
    public var label: String {
        switch self {
        case .path(let r): r.rawValue
        case .probe(let r): r.rawValue
        case .noProbes: "no_probes"
        case .partial: "partial"
        case .quorum: "quorum"
        case .unproven: "unproven"
        case .portal: "portal"
        case .captivePortalAPI: "captive_portal_api"
        case .unrecognized(let text): text
        }
    }

    /// The reason a label names; `unrecognized` for a label no reason has.
    public init(label: String) {
        self = Self.byLabel[label] ?? .unrecognized(label)
    }

    /// The label.
    public var description: String { label }

    /// Where a `limited` scope with this reason breaks when the reason says so by itself, so that
    /// locating it needs no gateway check (`FaultLocator`): `dns` is name resolution; `mtu`,
    /// `partial` and what the path faked are upstream; `quorum`, `unproven` and `no_probes` are
    /// configurations that cannot prove, not failures (`none` when nothing failed). Nil: the
    /// probes and the gateway check tell.
    package var limitedLocation: FaultLocation? {
        switch self {
        case .probe(.dns): .dns
        case .probe(.mtu), .partial: .upstream
        case .probe(let r) where OnPathCheck.pathAnswered.contains(r): .upstream
        case .quorum, .unproven, .noProbes: FaultLocation.none
        default: nil
        }
    }

    /// Whether the reason explains a `limited` scope by itself (`limitedLocation` is not nil).
    package var explainsItself: Bool { limitedLocation != nil }

    /// Decodes a label (`init(label:)`).
    public init(from decoder: any Decoder) throws {
        self.init(label: try decoder.singleValueContainer().decode(String.self))
    }

    /// Encodes the label.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(label)
    }
}
