/// What a captive-portal check expects back from its URL. Anything else means the network
/// rewrote the answer (a portal) or failed.
///
/// - `statusCodes`: the acceptable final status codes; empty means "any 2xx".
/// - `body`: an optional body check (needs GET).
///
/// The default is Android's `generate_204` rule: status exactly 204, no body check.
package struct HTTPExpectation: Sendable, Equatable {
    /// How the body must look. Matching is on the body read (at most the body limit), decoded
    /// as UTF-8 with invalid bytes replaced.
    package enum BodyMatch: Sendable, Equatable {
        /// Equal after trimming leading and trailing whitespace on both sides.
        case exact(String)
        /// Starts with the text, after trimming leading whitespace (NetworkManager's rule).
        case prefix(String)
        /// Contains the text anywhere (`captive.apple.com` wraps "Success" in HTML).
        case contains(String)

        package func matches(_ body: String) -> Bool {
            switch self {
            case .exact(let text): body.trimmingWhitespace() == text.trimmingWhitespace()
            case .prefix(let text): body.drop(while: \.isWhitespace).hasPrefix(text)
            case .contains(let text): body.contains(text)
            }
        }
    }

    package var statusCodes: Set<Int>
    package var body: BodyMatch?
    /// An admitted 3xx whose `Location` leads to another host (or has none) is still a portal
    /// signal (`redirect`): the seed's contract for a caller's URL, which admits 200–399.
    package var redirectsStayOnHost = false
    /// An answer for a public name from a private address (a portal's DNS sends every name to
    /// itself) is a portal signal (`private_address`), as the DNS probe judges an answer: the
    /// seed's contract for a caller's URL. An IP literal or a local name is not judged.
    package var privateAnswerIsPortal = false

    package init(
        statusCodes: Set<Int>, body: BodyMatch? = nil, redirectsStayOnHost: Bool = false,
        privateAnswerIsPortal: Bool = false
    ) {
        self.statusCodes = statusCodes
        self.body = body
        self.redirectsStayOnHost = redirectsStayOnHost
        self.privateAnswerIsPortal = privateAnswerIsPortal
    }

    /// Status exactly 204 (`generate_204` endpoints). The default.
    package static let noContent = HTTPExpectation(statusCodes: [204])

    /// Status 200 and a body containing `text` (e.g. "Success" for captive.apple.com).
    package static func bodyContains(_ text: String) -> HTTPExpectation {
        HTTPExpectation(statusCodes: [200], body: .contains(text))
    }

    /// Status 200 and a body equal to `text` after trimming whitespace.
    package static func bodyEquals(_ text: String) -> HTTPExpectation {
        HTTPExpectation(statusCodes: [200], body: .exact(text))
    }

    /// Status 200 and a body starting with `text` (e.g. "NetworkManager is online").
    package static func bodyPrefix(_ text: String) -> HTTPExpectation {
        HTTPExpectation(statusCodes: [200], body: .prefix(text))
    }

    /// The seed's contract for a URL of the caller's (RealReachability2, Reachability.swift's
    /// peers): any answer in 200–399 counts, and what the evidence model knows of portals still
    /// holds: a redirect to another host, a 511 and an answer for a public name from a private
    /// address are portal signals, and so is a trusted certificate for another name (the
    /// prober's rule, whatever the expectation). Over plain HTTP such an answer is local evidence (`Evidence`): it never
    /// makes a round `full` by itself, as a portal's own page answers 200 too.
    package static let callersAnswer = HTTPExpectation(
        statusCodes: Set(200...399), redirectsStayOnHost: true, privateAnswerIsPortal: true)

    /// What a URL given to the seed-shaped entry point must answer: a well-known check URL its
    /// check's answer (a login page in its place is a portal), any other URL the seed's
    /// contract (`callersAnswer`).
    package static func forCallersURL(_ url: String) -> HTTPExpectation {
        guard let parsed = try? ProbeURL(url) else { return callersAnswer }
        let host = parsed.host.lowercased()
        let path = String(parsed.path)
        if path.hasSuffix("/generate_204") || path.hasSuffix("/gen_204") { return noContent }
        return knownChecks[host + path] ?? callersAnswer
    }

    /// The answers of the major systems' check URLs (host and path), besides `generate_204`.
    package static let knownChecks: [String: HTTPExpectation] = [
        "captive.apple.com/hotspot-detect.html": bodyContains("Success"),
        "captive.apple.com/": bodyContains("Success"),
        "www.apple.com/library/test/success.html": bodyContains("Success"),
        "www.msftconnecttest.com/connecttest.txt": bodyEquals("Microsoft Connect Test"),
        "www.msftncsi.com/ncsi.txt": bodyEquals("Microsoft NCSI"),
        "detectportal.firefox.com/success.txt": bodyEquals("success"),
        "detectportal.firefox.com/canonical.html": bodyContains("success"),
        "nmcheck.gnome.org/check_network_status.txt": bodyPrefix("NetworkManager is online"),
        "network-test.debian.org/nm": bodyPrefix("NetworkManager is online"),
        "connectivity-check.ubuntu.com/": noContent,
    ]

    /// True if `status` is acceptable under `statusCodes`.
    package func admits(status: Int) -> Bool {
        statusCodes.isEmpty ? (200...299).contains(status) : statusCodes.contains(status)
    }
}

extension StringProtocol {
    /// The text without leading and trailing whitespace (Foundation-free).
    fileprivate func trimmingWhitespace() -> Substring {
        let s = Substring(self)
        guard let first = s.firstIndex(where: { !$0.isWhitespace }), let last = s.lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return s[first...last]
    }
}
