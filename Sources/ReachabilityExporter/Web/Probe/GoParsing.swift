import ReachabilityVerdict

/// What blackbox_exporter's Go reads from a `/probe` request, read as Go reads it, so the same
/// request gets the same answer from both.
enum GoParsing {
    /// `url.ParseQuery(…)` as `Request.URL.Query().Get` sees it: pairs split on `&`; a pair
    /// whose key holds `;` or whose escapes are malformed (`%zz`) is dropped; `+` is a space;
    /// the **first** value of a repeated key wins.
    static func query(_ target: String) -> [String: String] {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return [:] }
        var out: [String: String] = [:]
        for pair in parts[1].split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard !kv[0].contains(";"), let key = unescape(kv[0]) else { continue }
            guard let value = kv.count > 1 ? unescape(kv[1]) : "" else { continue }
            if out[key] == nil { out[key] = value }
        }
        return out
    }

    /// `url.QueryUnescape`: nil for a `%` not followed by two hex digits.
    static func unescape(_ s: Substring) -> String? {
        let bytes = Array(s.utf8)
        var i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "%") {
                guard i + 2 < bytes.count, isHex(bytes[i + 1]), isHex(bytes[i + 2]) else { return nil }
                i += 3
            } else {
                i += 1
            }
        }
        return percentDecode(s)
    }

    private static func isHex(_ b: UInt8) -> Bool {
        (0x30...0x39).contains(b) || (0x41...0x46).contains(b) || (0x61...0x66).contains(b)
    }

    /// `strconv.ParseFloat(s, 64)`: decimal (`1.5`, `1e3`, `.5`, `1_0` with underscores between
    /// digits), hexadecimal with its `p` exponent (`0x1p4`; `0x10` is not one), `Inf`,
    /// `Infinity`, `NaN` in any case with a sign; a value out of range is an error.
    static func parseFloat(_ text: String) -> Double? {
        var s = Substring(text)
        var negative = false
        if let c = s.first, c == "+" || c == "-" {
            negative = c == "-"
            s = s.dropFirst()
        }
        switch s.lowercased() {
        case "inf", "infinity": return negative ? -.infinity : .infinity
        case "nan": return .nan
        default: break
        }
        guard underscoresOK(s) else { return nil }
        let plain = s.replacing("_", with: "")
        let lower = plain.lowercased()
        let valid: Bool
        if lower.hasPrefix("0x") {
            valid = isHexFloat(lower.dropFirst(2))
        } else {
            valid = isDecimalFloat(Substring(lower))
        }
        guard valid, let v = Double((negative ? "-" : "") + plain), v.isFinite else { return nil }
        return v
    }

    /// digits [. digits] [e [sign] digits], with at least one mantissa digit.
    private static func isDecimalFloat(_ s: Substring) -> Bool {
        var rest = s
        let whole = rest.prefix { $0.isASCII && $0.isNumber }
        rest = rest.dropFirst(whole.count)
        var fraction: Substring = ""
        if rest.first == "." {
            rest = rest.dropFirst()
            fraction = rest.prefix { $0.isASCII && $0.isNumber }
            rest = rest.dropFirst(fraction.count)
        }
        guard !whole.isEmpty || !fraction.isEmpty else { return false }
        if rest.first == "e" {
            rest = rest.dropFirst()
            if let c = rest.first, c == "+" || c == "-" { rest = rest.dropFirst() }
            let exponent = rest.prefix { $0.isASCII && $0.isNumber }
            guard !exponent.isEmpty else { return false }
            rest = rest.dropFirst(exponent.count)
        }
        return rest.isEmpty
    }

    /// hex digits [. hex digits] p [sign] digits: Go wants the exponent.
    private static func isHexFloat(_ s: Substring) -> Bool {
        var rest = s
        let whole = rest.prefix { $0.isHexDigit }
        rest = rest.dropFirst(whole.count)
        var fraction: Substring = ""
        if rest.first == "." {
            rest = rest.dropFirst()
            fraction = rest.prefix { $0.isHexDigit }
            rest = rest.dropFirst(fraction.count)
        }
        guard !whole.isEmpty || !fraction.isEmpty, rest.first == "p" else { return false }
        rest = rest.dropFirst()
        if let c = rest.first, c == "+" || c == "-" { rest = rest.dropFirst() }
        let exponent = rest.prefix { $0.isASCII && $0.isNumber }
        return !exponent.isEmpty && rest.count == exponent.count
    }

    /// Go's `underscoreOK`: an underscore only between digits, or after a base prefix.
    private static func underscoresOK(_ s: Substring) -> Bool {
        guard s.contains("_") else { return true }
        let chars = Array(s.lowercased())
        var i = 0
        var saw: Character = "^"
        if chars.count >= 2, chars[0] == "0", chars[1] == "x" || chars[1] == "b" || chars[1] == "o" {
            i = 2
            saw = "0"
        }
        let hex = chars.count >= 2 && chars[1] == "x" && i == 2
        while i < chars.count {
            let c = chars[i]
            if c.isASCII && c.isNumber || hex && c.isHexDigit {
                saw = "0"
            } else if c == "_" {
                if saw != "0" { return false }
                saw = "_"
            } else {
                if saw == "_" { return false }
                saw = "!"
            }
            i += 1
        }
        return saw != "_"
    }
}
