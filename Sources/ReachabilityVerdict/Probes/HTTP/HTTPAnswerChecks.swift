/// What a web check asks of its final answer beyond "200–399": the settings of a
/// blackbox_exporter `http` module (`valid_status_codes`, `valid_http_versions`,
/// `fail_if_header_matches`, `fail_if_header_not_matches`, `fail_if_body_matches_regexp`,
/// `fail_if_body_not_matches_regexp`), judged in blackbox's order: status, headers, body, version.
///
/// Patterns are RE2's (Go's) syntax, compiled and matched by PCRE2 in time linear in the
/// subject (`RegexPattern`), checked when the module loads. The body is matched as read, up to the prober's body
/// limit; a body cut at the limit fails a body check with `too_large`, as blackbox's
/// `body_size_limit` does.
package struct HTTPAnswerChecks: Sendable, Equatable {
    /// A header check: every value of `header` (any case) against `pattern`.
    package struct HeaderMatch: Sendable, Equatable {
        package var header: String
        package var pattern: String
        /// When the header is absent: true lets the check pass, false fails it.
        package var allowMissing: Bool
        package init(header: String, pattern: String, allowMissing: Bool = false) {
            self.header = header
            self.pattern = pattern
            self.allowMissing = allowMissing
        }
    }

    /// Acceptable final status codes; empty: any 2xx (blackbox's default).
    package var statusCodes: Set<Int> = []
    /// Acceptable versions of the final answer (`HTTP/1.1`, `HTTP/1.0`); empty: any.
    package var versions: Set<String> = []
    package var failIfHeaderMatches: [HeaderMatch] = []
    package var failIfHeaderNotMatches: [HeaderMatch] = []
    package var failIfBodyMatches: [String] = []
    package var failIfBodyNotMatches: [String] = []

    /// A body longer than the prober's limit fails (blackbox's `body_size_limit`), even without
    /// a body check.
    package var failsPastLimit = false

    package init() {}

    /// Whether any check reads the body (it then needs a body limit above 0 and a GET).
    package var readsBody: Bool { !failIfBodyMatches.isEmpty || !failIfBodyNotMatches.isEmpty }

    /// Why `pattern` is not a usable regular expression; nil when it is.
    package static func problem(_ pattern: String) -> String? {
        do {
            _ = try RegexPattern(pattern)
            return nil
        } catch {
            return "\(pattern.debugDescription) is not a regular expression: \(error)"
        }
    }

    /// The verdict on a final answer: success, or the failure with its reason and text.
    package func judge(_ response: HTTPExchange.Response) -> (ProbeStatus, FailureReason?, String) {
        let head = response.head
        let statusOK =
            statusCodes.isEmpty ? (200...299).contains(head.status) : statusCodes.contains(head.status)
        guard statusOK else {
            let wanted = statusCodes.isEmpty ? "2xx" : HTTPStatusSet.format(statusCodes)
            return (.failure, .httpStatus, "\(head.statusLine), expected \(wanted)")
        }
        for m in failIfHeaderMatches {
            let values = head.values(of: m.header)
            if values.isEmpty && !m.allowMissing {
                return (.failure, .bodyMismatch, "no header \(m.header): a missing header fails unless allow_missing")
            }
            if let hit = values.first(where: { Self.mayMatch(m.pattern, $0) }) {
                return (
                    .failure, .bodyMismatch,
                    "header \(m.header) \(hit.debugDescription) \(Self.matchWord(m.pattern, hit)) /\(m.pattern)/"
                )
            }
        }
        for m in failIfHeaderNotMatches {
            let values = head.values(of: m.header)
            if values.isEmpty {
                if m.allowMissing { continue }
                return (.failure, .bodyMismatch, "no header \(m.header) to match /\(m.pattern)/")
            }
            if !values.contains(where: { Self.matches(m.pattern, $0) }) {
                return (.failure, .bodyMismatch, "header \(m.header) does not match /\(m.pattern)/")
            }
        }
        if readsBody || failsPastLimit {
            if response.bodyTruncated {
                return (
                    .failure, .tooLarge, "the body is longer than the body limit (\(response.body.count) bytes read)"
                )
            }
            let text = String(decoding: response.body, as: UTF8.self)
            if let p = failIfBodyMatches.first(where: { Self.mayMatch($0, text) }) {
                return (.failure, .bodyMismatch, "the body \(Self.matchWord(p, text)) /\(p)/")
            }
            if let p = failIfBodyNotMatches.first(where: { !Self.matches($0, text) }) {
                return (.failure, .bodyMismatch, "the body \(Self.matchWord(p, text, negative: true)) /\(p)/")
            }
        }
        if !versions.isEmpty, !versions.contains(head.version) {
            return (
                .failure, .protocolError,
                "\(head.version) is not one of \(versions.sorted().joined(separator: ", "))"
            )
        }
        return (.success, nil, head.statusLine)
    }

    /// Whether `pattern` (checked at load) matches anywhere in `text`.
    /// Whether `pattern` (checked at load) matches anywhere in `text`; nil when PCRE2's match
    /// limit ended the match undecided.
    package static func decide(_ pattern: String, _ text: String) -> Bool? {
        guard let regex = try? RegexPattern(pattern) else { return false }
        if case .success(let m) = regex.matches(text) { return m }
        return nil
    }

    /// It matches: a `fail_if_…_not_matches` check passes only on a match it has seen.
    package static func matches(_ pattern: String, _ text: String) -> Bool { decide(pattern, text) == true }

    /// It may match: a `fail_if_…_matches` check fails on a match it could not rule out.
    package static func mayMatch(_ pattern: String, _ text: String) -> Bool { decide(pattern, text) != false }

    /// How a failed check's message says it: "matches", "does not match", or why neither.
    package static func matchWord(_ pattern: String, _ text: String, negative: Bool = false) -> String {
        if decide(pattern, text) == nil { return "was not decided within PCRE2's match limit by" }
        return negative ? "does not match" : "matches"
    }
}
