/// Byte sizes as flags take them: `65536`, `512KiB`, `64MiB`, `1GiB`, `2TiB` (powers of 1024)
/// or `500kB`/`500KB`, `64MB`, `1GB`, `2TB` (powers of 1000), and a bare `B`.
package enum ByteSizeParser {
    package struct Invalid: Error, Equatable {
        /// What the text should have looked like.
        public let message: String
    }

    package static func parse(_ text: String) throws(Invalid) -> Int {
        let digits = text.prefix(while: { $0.isASCII && $0.isNumber })
        guard !digits.isEmpty, let n = Int(digits) else {
            throw Invalid(message: "expected a size such as 64MiB, 1GB or 65536")
        }
        let unit = text.dropFirst(digits.count)
        let factors: [String: Int] = [
            "": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
            "kB": 1000, "KB": 1000, "MB": 1_000_000, "GB": 1_000_000_000, "TB": 1_000_000_000_000,
        ]
        guard let factor = factors[String(unit)] else {
            throw Invalid(
                message: "unknown unit \(String(unit).debugDescription) (use B, KiB, MiB, GiB, TiB, kB, MB, GB, TB)")
        }
        let (v, overflow) = n.multipliedReportingOverflow(by: factor)
        guard !overflow else { throw Invalid(message: "size too large") }
        return v
    }

    /// The shortest exact binary spelling: `64MiB`, `1GiB`, `1000B`.
    package static func format(_ bytes: Int) -> String {
        for (unit, size) in [("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)]
        where bytes >= size && bytes % size == 0 {
            return "\(bytes / size)\(unit)"
        }
        return "\(bytes)B"
    }
}
