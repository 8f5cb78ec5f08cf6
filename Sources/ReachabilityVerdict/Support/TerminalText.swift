extension String {
    /// The text with every control character (C0 including newline and tab, DEL, C1, U+2028 and
    /// U+2029) written as
    /// `\xHH`, for output a person reads in a terminal: details that came from the network (a
    /// status line, a `Location`, a DNS name) can neither move the cursor, retitle the window nor
    /// forge a line of their own.
    package var escapingControlCharacters: String {
        guard unicodeScalars.contains(where: Self.isControl) else { return self }
        var out = ""
        out.reserveCapacity(utf8.count + 8)
        for scalar in unicodeScalars {
            if Self.isControl(scalar) {
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += "\\x" + (hex.count < 2 ? "0" + hex : hex)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// The text with each line's control characters escaped; the newlines between lines stay.
    package var escapingControlCharactersButNewlines: String {
        split(separator: "\n", omittingEmptySubsequences: false).map { String($0).escapingControlCharacters }
            .joined(separator: "\n")
    }

    private static func isControl(_ s: Unicode.Scalar) -> Bool { Logger.isControl(s) }
}

extension String {
    /// `"7".leftPadded(3)` is `"007"`.
    package func leftPadded(_ width: Int, with pad: Character = "0") -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}
