import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// Patterns as blackbox_exporter's modules write them (RE2), through PCRE2 within its match limit.
@Suite struct RegexPatternTests {
    @Test func readsPatternsAsRE2Does() throws {
        #expect(try RegexPattern("(?i)ok").isMatch("+OK ready"))
        #expect(try RegexPattern("^HTTP/1\\.[01] 2\\d\\d").isMatch("HTTP/1.1 204 No Content"))
        // Go's `$` without (?m) is the end of the text only, not before a final newline.
        #expect(try !RegexPattern("done$").isMatch("done\n"))
        #expect(try RegexPattern("(?m)done$").isMatch("done\nmore"))
        // A repeated anchor is the anchor once (blackbox's own pop3s_banner: `^+OK`).
        #expect(try RegexPattern("^+OK").isMatch("OK go"))
        #expect(try !RegexPattern("^+OK").isMatch("not OK"))
        // `\Q` left open quotes to the end, and the pattern still closes.
        #expect(try RegexPattern("\\Qa.b)").isMatch("xa.b)y"))
        #expect(try !RegexPattern("\\Qa.b").isMatch("axb"))
        // An invalid byte reads as U+FFFD and does not stop the match after it.
        let body = String(decoding: [0x66, 0xFF, 0x6F, 0x6B] as [UInt8], as: UTF8.self)
        #expect(try RegexPattern("ok").isMatch(body))
        #expect(try RegexPattern("f\u{FFFD}o").isMatch(body))
        #expect(try RegexPattern("").isMatch(""))
    }

    @Test func refusesWhatDoesNotCompile() throws {
        // A back-reference RE2 refuses compiles here (as Swift's Regex took it before).
        #expect(try RegexPattern("(a)\\1").isMatch("baab"))
        #expect(throws: RegexPattern.Problem.self) { try RegexPattern("[") }
        #expect(throws: RegexPattern.Problem.self) { try RegexPattern("a{2,1}") }
        do {
            _ = try RegexPattern("ab(")
            Issue.record("an open group compiled")
        } catch {
            #expect(error.description.contains("/ab(/"))
            #expect(error.description.contains("missing closing parenthesis"))
        }
    }

    /// Patterns a backtracking engine runs for ages on a hostile body: each ends, with RE2's
    /// answer or with the match limit (the suite's own timeout is the bound: with Swift's
    /// `Regex`, the first of these did not return in a minute).
    @Test func hostileBodiesEndWithAnAnswerOrTheLimit() throws {
        let aas = String(repeating: "a", count: 100_000) + "!"
        guard case .failure(let problem) = try RegexPattern("(a+)+$").matches(aas) else {
            Issue.record("(a+)+$ was decided on 100,000 a's")
            return
        }
        #expect(problem.description.contains("match limit"))
        #expect(try !RegexPattern("(a+)+$").isMatch(aas))
        #expect(try RegexPattern("(a|aa)*b").matches(aas) == .success(false))
        #expect(try RegexPattern("(\\w+\\s?)*$").matches(String(repeating: "ab ", count: 10_000) + "!").isFailure)
        let line = String(repeating: "x", count: 1 << 20)
        #expect(try RegexPattern(".*x.*y").matches(line) == .success(false))
        #expect(try RegexPattern("x.*x.*z").matches(line) == .success(false))
        #expect(try RegexPattern("x+$").matches(line) == .success(true))
        #expect(try RegexPattern("\\w{1,50}\\d").matches(line) == .success(false))
    }

    @Test func capturesAreTheFirstMatchsGroups() throws {
        let p = try RegexPattern("^(\\w+) (\\d+)?")
        #expect(p.captures(in: "hello world") == ["hello ", "hello", ""])
        #expect(p.captures(in: "hi 42") == ["hi 42", "hi", "42"])
        #expect(p.captures(in: " nope") == nil)
        #expect(
            try RegexPattern("^:([^ ]+) 001").captures(in: ":irc.local 001 me :welcome") == [
                ":irc.local 001", "irc.local",
            ])
    }
}

extension Result<Bool, RegexPattern.Problem> {
    fileprivate var isFailure: Bool {
        if case .failure = self { return true }
        return false
    }

    fileprivate static func == (a: Self, b: Self) -> Bool {
        switch (a, b) {
        case (.success(let x), .success(let y)): x == y
        default: false
        }
    }
}
