import CPCRE2

/// A regular expression as blackbox_exporter's modules write them (Go's RE2 syntax), compiled by
/// PCRE2 with RE2's reading of the subject: UTF-8 (a Swift string, where an invalid byte was
/// read as U+FFFD, as Go's regexp reads one), and `$` at the very end only (Go's `$` without
/// `(?m)`).
///
/// RE2 matches in time linear in the subject; a backtracking engine can take ages on a hostile
/// subject (`(a+)+$` against "aaaa…!"). PCRE2's matcher is bounded instead: past its match
/// limit (10,000,000 backtracking steps, a few tenths of a second) the match ends with
/// `Problem`, and the caller fails its check with the reason rather than holding a thread past
/// the probe's deadline. PCRE2 also skips most hopeless starts at once (a required character
/// missing, a leading `.*` anchored).
package final class RegexPattern: @unchecked Sendable {
    package let source: String
    private let code: OpaquePointer

    /// Why a pattern is not usable, or why a match could not be decided: PCRE2's message.
    package struct Problem: Error, CustomStringConvertible {
        package let description: String
    }

    private static let options = UInt32(PCRE2_UTF) | UInt32(PCRE2_DOLLAR_ENDONLY)

    package init(_ source: String) throws(Problem) {
        self.source = source
        // RE2 reads a repeated anchor (`^+OK`, blackbox's own pop3s_banner) as the anchor once;
        // PCRE2 refuses to repeat it.
        var text = source
        for anchor in ["^", "$"] {
            for q in ["+", "*", "?"] { text = text.replacing(anchor + q, with: anchor) }
        }
        var error: Int32 = 0
        var offset = 0
        let bytes = Array(text.utf8)
        let code = bytes.withUnsafeBufferPointer {
            rx_pcre2_compile($0.baseAddress ?? Self.empty, $0.count, Self.options, &error, &offset)
        }
        guard let code else {
            throw Problem(
                description: "/\(source)/: \(Self.message(error)) (at byte \(min(offset, source.utf8.count)))")
        }
        self.code = code
    }

    deinit { rx_pcre2_code_free(code) }

    /// Whether the pattern matches anywhere in `subject`, or why that could not be decided
    /// (the match limit).
    package func matches(_ subject: some StringProtocol) -> Result<Bool, Problem> {
        guard let data = rx_pcre2_match_data(code) else { return .failure(Problem(description: "out of memory")) }
        defer { rx_pcre2_match_data_free(data) }
        var s = String(subject)
        let rc = s.withUTF8 { run($0, data) }
        if rc >= 0 { return .success(true) }
        if rc == PCRE2_ERROR_NOMATCH { return .success(false) }
        return .failure(Problem(description: "/\(source)/: " + Self.message(rc)))
    }

    /// Whether it matches (a match that could not be decided does not).
    package func isMatch(_ subject: some StringProtocol) -> Bool {
        if case .success(true) = matches(subject) { return true }
        return false
    }

    /// The first match's groups, `[whole, $1, $2, …]` (a group that took no part is ""), or nil.
    package func captures(in subject: String) -> [String]? {
        guard let data = rx_pcre2_match_data(code) else { return nil }
        defer { rx_pcre2_match_data_free(data) }
        var s = subject
        return s.withUTF8 { (bytes: UnsafeBufferPointer<UInt8>) -> [String]? in
            guard run(bytes, data) > 0, let ovector = rx_pcre2_ovector(data) else { return nil }
            return (0..<Int(rx_pcre2_ovector_count(data))).map { i in
                let start = ovector[2 * i]
                let end = ovector[2 * i + 1]
                guard start >= 0, start <= end, end <= bytes.count else { return "" }
                return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
            }
        }
    }

    private func run(_ subject: UnsafeBufferPointer<UInt8>, _ data: OpaquePointer) -> Int32 {
        let context = rx_pcre2_match_context(10_000_000, 10_000_000)
        defer { rx_pcre2_match_context_free(context) }
        return rx_pcre2_match(code, subject.baseAddress ?? Self.empty, subject.count, data, context)
    }

    /// Where an empty subject or pattern points (PCRE2 wants a pointer even for no bytes).
    nonisolated(unsafe) private static let empty: UnsafePointer<UInt8> = {
        let p = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
        p.initialize(to: 0)
        return UnsafePointer(p)
    }()

    private static func message(_ code: Int32) -> String {
        var buffer = [UInt8](repeating: 0, count: 256)
        let n = rx_pcre2_error_message(code, &buffer, buffer.count)
        return n > 0 ? String(decoding: buffer[..<Int(n)], as: UTF8.self) : "PCRE2 error \(code)"
    }
}
