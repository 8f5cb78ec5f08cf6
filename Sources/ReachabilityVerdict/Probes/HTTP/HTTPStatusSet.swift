/// The one parser of HTTP status sets, for the flag and the file alike: comma-separated codes
/// (`204`, `200,204`), inclusive ranges (`200-399`) and classes (`2xx`), in any mix
/// (`200-299,304`). Codes are 100–599. Pure; no allocation beyond the result.
package enum HTTPStatusSet {
    /// Why a status set was refused; `message` is the whole sentence for the user.
    package struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        package let message: String
        package var description: String { message }
    }

    /// Parses `text` into the set of codes it names.
    package static func parse(_ text: String) throws(ParseError) -> Set<Int> {
        var codes = Set<Int>()
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        for raw in parts {
            let part = raw.trimmingSpaces
            guard !part.isEmpty else {
                throw ParseError(message: "\(text.debugDescription) has an empty entry")
            }
            codes.formUnion(try parseItem(String(part), in: text))
        }
        return codes
    }

    /// One entry: `204`, `200-399` or `2xx`.
    private static func parseItem(_ item: String, in text: String) throws(ParseError) -> ClosedRange<Int> {
        let lower = item.lowercased()
        if lower.count == 3, lower.hasSuffix("xx"), let digit = Int(lower.prefix(1)), (1...5).contains(digit) {
            return digit * 100...digit * 100 + 99
        }
        let bounds = item.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard let first = code(bounds[0]) else { throw bad(item) }
        guard bounds.count == 2 else { return first...first }
        guard let last = code(bounds[1]) else { throw bad(item) }
        guard first <= last else {
            throw ParseError(message: "\(item.debugDescription): a range runs from the lower code to the higher")
        }
        return first...last
    }

    private static func code(_ text: Substring) -> Int? {
        let t = text.trimmingSpaces
        guard t.count == 3, t.allSatisfy(\.isASCII), let value = Int(t), (100...599).contains(value) else { return nil }
        return value
    }

    private static func bad(_ item: String) -> ParseError {
        ParseError(
            message:
                "\(item.debugDescription) is not a status code (100–599), a range such as 200-399, or a class such as 2xx"
        )
    }

    /// The set written compactly, ranges merged: `200-204,304`. A whole class prints as `2xx`.
    package static func format(_ codes: Set<Int>) -> String {
        var out: [String] = []
        var sorted = codes.sorted()[...]
        while let start = sorted.first {
            var end = start
            sorted = sorted.dropFirst()
            while let next = sorted.first, next == end + 1 {
                end = next
                sorted = sorted.dropFirst()
            }
            if start % 100 == 0, end == start + 99 {
                out.append("\(start / 100)xx")
            } else {
                out.append(start == end ? "\(start)" : "\(start)-\(end)")
            }
        }
        return out.joined(separator: ",")
    }
}
