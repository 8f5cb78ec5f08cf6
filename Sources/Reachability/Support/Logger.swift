/// Log severity, ordered; `--log.level` picks the lowest one written.
package enum LogLevel: String, Sendable, CaseIterable, Comparable {
    case debug, info, warn, error

    package static func < (a: LogLevel, b: LogLevel) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

/// `--log.format`: logfmt (the Prometheus exporters' default) or JSON lines.
package enum LogFormat: String, Sendable, CaseIterable {
    case logfmt, json
}

/// A structured logger writing one line per record to stderr (or another descriptor) with a
/// single `write`, so lines from threads never interleave. Cheap to copy; thread-safe.
package struct Logger: Sendable {
    package var level: LogLevel
    package var format: LogFormat
    /// Constant fields added to every record (for example `component=http`).
    package var context: [(String, String)]
    private let fd: Int32

    package init(level: LogLevel = .info, format: LogFormat = .logfmt, fd: Int32 = 2) {
        self.level = level
        self.format = format
        self.context = []
        self.fd = fd
    }

    /// A logger that adds a field to every record.
    package func with(_ key: String, _ value: String) -> Logger {
        var copy = self
        copy.context.append((key, value))
        return copy
    }

    package func debug(_ message: String, _ fields: (String, String)...) { log(.debug, message, fields) }
    package func info(_ message: String, _ fields: (String, String)...) { log(.info, message, fields) }
    package func warn(_ message: String, _ fields: (String, String)...) { log(.warn, message, fields) }
    package func error(_ message: String, _ fields: (String, String)...) { log(.error, message, fields) }

    package func log(_ lvl: LogLevel, _ message: String, _ fields: [(String, String)]) {
        guard lvl >= level else { return }
        let line = Self.format(format, time: Self.timestamp(), level: lvl, message: message, fields: context + fields)
        writeAll(fd, line)
    }

    static func format(_ format: LogFormat, time: String, level: LogLevel, message: String, fields: [(String, String)])
        -> String
    {
        let all = [("ts", time), ("level", level.rawValue), ("msg", message)] + fields
        switch format {
        case .logfmt:
            return all.map { "\($0.0)=\(logfmtValue($0.1))" }.joined(separator: " ") + "\n"
        case .json:
            return "{" + all.map { "\(jsonString($0.0)):\(jsonString($0.1))" }.joined(separator: ",") + "}\n"
        }
    }

    static func logfmtValue(_ v: String) -> String {
        let needsQuotes =
            v.isEmpty
            || v.unicodeScalars.contains { $0 == " " || $0 == "=" || $0 == "\"" || isControl($0) || $0 == "\\" }
        guard needsQuotes else { return v }
        return jsonString(v)
    }

    /// C0, DEL and C1: what a terminal may act on.
    private static func isControl(_ c: Unicode.Scalar) -> Bool { c.value < 0x20 || (0x7F...0x9F).contains(c.value) }

    /// A JSON string literal (also valid as a quoted logfmt value), with every control character
    /// escaped, DEL and C1 too: logs are read in terminals.
    package static func jsonString(_ v: String) -> String {
        var out = "\""
        for c in v.unicodeScalars {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where isControl(c):
                let hex = String(c.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(c)
            }
        }
        return out + "\""
    }

    /// RFC 3339 UTC with milliseconds: `2026-11-29T14:48:24.123Z`.
    static func timestamp() -> String {
        let ns = WallClock.nanosecondsSinceEpoch()
        return rfc3339(seconds: Int(ns / 1_000_000_000), millis: Int(ns % 1_000_000_000 / 1_000_000))
    }

    static func rfc3339(seconds: Int, millis: Int) -> String {
        let whole = UTCTime.rfc3339(Double(seconds))  // `…:09Z`: insert the milliseconds
        let ms = String(millis)
        return whole.dropLast() + "." + String(repeating: "0", count: max(0, 3 - ms.count)) + ms + "Z"
    }
}
