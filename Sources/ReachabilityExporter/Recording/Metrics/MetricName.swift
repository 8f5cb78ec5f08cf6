import ReachabilityVerdict

/// Name and label rules of the Prometheus data model, and the escaping the text formats need.
enum MetricName {
    /// `[a-zA-Z_:][a-zA-Z0-9_:]*`. Exporters do not use colons (they are for recording rules),
    /// but the format allows them, so the check does too.
    static func isValidMetricName(_ name: String) -> Bool {
        guard let first = name.utf8.first, isNameStart(first) || first == UInt8(ascii: ":") else { return false }
        return name.utf8.allSatisfy { isNameStart($0) || isDigit($0) || $0 == UInt8(ascii: ":") }
    }

    /// `[a-zA-Z_][a-zA-Z0-9_]*`, not starting with the reserved `__`.
    static func isValidLabelName(_ name: String) -> Bool {
        guard let first = name.utf8.first, isNameStart(first), !name.hasPrefix("__") else { return false }
        return name.utf8.allSatisfy { isNameStart($0) || isDigit($0) }
    }

    private static func isNameStart(_ b: UInt8) -> Bool {
        (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b == 0x5f
    }
    private static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    /// Label values escape backslash, double quote and newline (both formats).
    static func escapeLabelValue(_ value: String, into out: inout [UInt8]) {
        for b in value.utf8 {
            switch b {
            case UInt8(ascii: "\\"): out.append(contentsOf: [0x5c, 0x5c])
            case UInt8(ascii: "\""): out.append(contentsOf: [0x5c, 0x22])
            case UInt8(ascii: "\n"): out.append(contentsOf: [0x5c, 0x6e])
            default: out.append(b)
            }
        }
    }

    /// HELP text escapes backslash and newline; OpenMetrics also escapes double quotes.
    static func escapeHelp(_ help: String, openMetrics: Bool) -> String {
        guard help.utf8.contains(where: { $0 == 0x5C || $0 == 0x0A || (openMetrics && $0 == 0x22) }) else {
            return help
        }
        var out = ""
        out.reserveCapacity(help.utf8.count)
        for c in help.unicodeScalars {
            switch c {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\"" where openMetrics: out += "\\\""
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    /// `name{a="x",b="y"}` (or just `name` without labels), with `extra` appended as the last label
    /// (used for a histogram's `le`).
    static func seriesPrefix(
        _ name: String, labelNames: [String], labelValues: [String], extra: (String, String)? = nil
    ) -> [UInt8] {
        var out = Array(name.utf8)
        if labelNames.isEmpty && extra == nil { return out }
        out.append(UInt8(ascii: "{"))
        var first = true
        for (n, v) in zip(labelNames, labelValues) {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            out.append(contentsOf: n.utf8)
            out.append(contentsOf: [UInt8(ascii: "="), UInt8(ascii: "\"")])
            escapeLabelValue(v, into: &out)
            out.append(UInt8(ascii: "\""))
        }
        if let (n, v) = extra {
            if !first { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: n.utf8)
            out.append(contentsOf: [UInt8(ascii: "="), UInt8(ascii: "\"")])
            escapeLabelValue(v, into: &out)
            out.append(UInt8(ascii: "\""))
        }
        out.append(UInt8(ascii: "}"))
        return out
    }
}

/// Sample values as both text formats want them: `+Inf`, `-Inf`, `NaN`, integers without a
/// fraction, everything else in Swift's shortest round-tripping form.
enum SampleValue {
    static func append(_ v: Double, to out: inout [UInt8]) {
        if v.isNaN {
            out.append(contentsOf: "NaN".utf8)
            return
        }
        if v.isInfinite {
            out.append(contentsOf: (v > 0 ? "+Inf" : "-Inf").utf8)
            return
        }
        if v == v.rounded(.towardZero), abs(v) < 9.007199254740992e15 {
            appendInteger(Int64(v), to: &out)
            return
        }
        out.append(contentsOf: v.description.utf8)
    }

    static func appendInteger(_ value: Int64, to out: inout [UInt8]) {
        if value == 0 {
            out.append(UInt8(ascii: "0"))
            return
        }
        var v = value.magnitude
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
            ) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buf in
            while v > 0 {
                buf[19 - count] = UInt8(truncatingIfNeeded: v % 10) + 0x30
                v /= 10
                count += 1
            }
            out.append(contentsOf: buf[(20 - count)...])
        }
    }

    /// The canonical text of a bucket bound for the `le` label (`0.005`, `1`, `+Inf`).
    static func text(_ v: Double) -> String {
        var out: [UInt8] = []
        append(v, to: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
