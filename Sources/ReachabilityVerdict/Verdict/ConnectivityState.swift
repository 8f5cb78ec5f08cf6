/// The answer: NetworkManager's five connectivity states.
public enum ConnectivityState: String, Sendable, CaseIterable, Codable, Comparable {
    /// No round has finished yet.
    case unknown
    /// No usable path (no interface, carrier, address or default route): decided from the path
    /// alone, at once, without traffic.
    case none
    /// A captive portal (or another interceptor) answered in place of the internet.
    case portal
    /// A path exists but the policy is not met: timeouts, refusals, DNS failing, HTTPS failing
    /// while HTTP works (`partial`).
    case limited
    /// The internet is reachable.
    case full

    /// Ordered from worst to best for `Comparable`; `unknown` sorts first.
    public static func < (a: ConnectivityState, b: ConnectivityState) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

/// A state with the reason it holds (nil for `full` and `unknown`). Reasons are low-cardinality
/// label values (`VerdictReason`): a path reason (`no_default_route`…), a probe failure reason
/// (`timeout`, `dns`…), `partial`, or a portal signal (`redirect`, `body_mismatch`, `private_address`…).
public struct Verdict: Sendable, Equatable, Codable, CustomStringConvertible {
    /// One of the five states.
    public var state: ConnectivityState
    /// Why the scope holds `state`; nil for `full` and `unknown`.
    public var reason: VerdictReason?

    /// A verdict of `state` for `reason`.
    public init(_ state: ConnectivityState, reason: VerdictReason? = nil) {
        self.state = state
        self.reason = reason
    }

    /// `unknown` with no reason: the verdict before the first round.
    public static let unknown = Verdict(.unknown)

    /// The state, and the reason's label in parentheses when there is one: `limited (timeout)`.
    public var description: String { reason.map { "\(state.rawValue) (\($0.label))" } ?? state.rawValue }
}
