/// Durations as Prometheus writes them: `500ms`, `5s`, `1m30s`, `2h`, `1d`, `1w`, `0`.
package enum DurationParser {
    package struct Invalid: Error, Equatable {
        /// What the text should have looked like.
        public let message: String
    }

    package static func parse(_ text: String) throws(Invalid) -> Duration {
        if text == "0" { return .zero }
        let units: [(String, Int64)] = [
            ("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000), ("d", 86_400_000), ("w", 604_800_000),
            ("y", 31_536_000_000),
        ]
        var rest = Substring(text)
        var total: Int64 = 0
        var lastUnitIndex = -1
        guard !rest.isEmpty else { throw Invalid(message: "empty duration") }
        while !rest.isEmpty {
            let digits = rest.prefix(while: { $0.isASCII && $0.isNumber })
            guard !digits.isEmpty, let n = Int64(digits) else {
                throw Invalid(message: "expected a duration such as 500ms, 5s, 1m30s")
            }
            rest = rest.dropFirst(digits.count)
            let unitText = rest.prefix(while: { $0.isASCII && $0.isLetter })
            guard let unitIndex = units.firstIndex(where: { $0.0 == unitText }) else {
                throw Invalid(
                    message: unitText.isEmpty
                        ? "missing unit (ms, s, m, h, d, w, y)"
                        : "unknown unit \(String(unitText).debugDescription) (use ms, s, m, h, d, w, y)")
            }
            // Units must go from largest to smallest, each at most once (as Prometheus requires).
            let order = units.count - 1 - unitIndex
            guard order > lastUnitIndex else {
                throw Invalid(message: "units must go from largest to smallest, each once")
            }
            lastUnitIndex = order
            rest = rest.dropFirst(unitText.count)
            let (product, overflow) = n.multipliedReportingOverflow(by: units[unitIndex].1)
            guard !overflow, total <= Int64.max - product else { throw Invalid(message: "duration too long") }
            total += product
        }
        return .milliseconds(total)
    }

    /// The shortest Prometheus spelling: `1m30s`, `500ms`, `0s`.
    package static func format(_ d: Duration) -> String {
        var ms = d.milliseconds
        if ms == 0 { return "0s" }
        var out = ""
        for (unit, size) in [("d", Int64(86_400_000)), ("h", 3_600_000), ("m", 60_000), ("s", 1000), ("ms", 1)]
        where ms >= size {
            out += "\(ms / size)\(unit)"
            ms %= size
        }
        return out
    }
}
