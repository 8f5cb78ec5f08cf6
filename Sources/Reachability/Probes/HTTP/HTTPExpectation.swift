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

    package init(statusCodes: Set<Int>, body: BodyMatch? = nil) {
        self.statusCodes = statusCodes
        self.body = body
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
