/// Log severity, ordered; `--log.level` picks the lowest one written. Written as promslog
/// writes it: `DEBUG`, `INFO`, `WARN`, `ERROR`.
package enum LogLevel: String, Sendable, CaseIterable, Comparable {
    case debug, info, warn, error

    package static func < (a: LogLevel, b: LogLevel) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }

    /// The level as a record shows it (`INFO`).
    package var written: String { rawValue.uppercased() }
}

/// `--log.format`: logfmt (the Prometheus exporters' default) or JSON lines.
package enum LogFormat: String, Sendable, CaseIterable {
    case logfmt, json
}

/// A field's value, kept typed so JSON writes a number as a number and a flag as a boolean.
package enum LogValue: Sendable, Equatable {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
}

/// What a log field's value may be: text, an integer, a real number or a boolean.
package protocol LogValueConvertible: Sendable {
    /// The typed value written.
    var logValue: LogValue { get }
}

extension String: LogValueConvertible { package var logValue: LogValue { .string(self) } }
extension Substring: LogValueConvertible { package var logValue: LogValue { .string(String(self)) } }
extension Int: LogValueConvertible { package var logValue: LogValue { .int(self) } }
extension Int64: LogValueConvertible { package var logValue: LogValue { .int(Int(self)) } }
extension UInt64: LogValueConvertible {
    package var logValue: LogValue { self <= UInt64(Int.max) ? .int(Int(self)) : .string(String(self)) }
}
extension Double: LogValueConvertible { package var logValue: LogValue { .double(self) } }
extension Bool: LogValueConvertible { package var logValue: LogValue { .bool(self) } }

/// A structured logger in promslog's shape, the format of today's Prometheus and exporters:
/// `time=… level=INFO source=File.swift:42 msg=… key=value` (logfmt) or the same keys as one
/// JSON object per line with typed values. One line per record, written with a single `write`,
/// so lines from threads never interleave. Cheap to copy; thread-safe.
package struct Logger: Sendable {
    package var level: LogLevel
    package var format: LogFormat
    /// Constant fields added to every record (for example `component=web`).
    package var context: [(String, LogValue)]
    private let fd: Int32
    /// Where records go instead of `fd`: an embedding app's hook (`Reachability.Configuration.log`).
    private let sink: (@Sendable (Record) -> Void)?

    package init(level: LogLevel = .info, format: LogFormat = .logfmt, fd: Int32 = 2) {
        self.level = level
        self.format = format
        self.context = []
        self.fd = fd
        self.sink = nil
    }

    /// A logger that hands its records to `sink` (time and format left to it).
    package init(level: LogLevel, sink: @escaping @Sendable (Record) -> Void) {
        self.level = level
        self.format = .logfmt
        self.context = []
        self.fd = -1
        self.sink = sink
    }

    /// A logger that adds a field to every record.
    package func with(_ key: String, _ value: some LogValueConvertible) -> Logger {
        var copy = self
        copy.context.append((key, value.logValue))
        return copy
    }

    package func debug(
        _ message: String, _ fields: (String, any LogValueConvertible)..., file: String = #fileID, line: Int = #line
    ) { log(.debug, message, fields, source: Self.source(file, line)) }
    package func info(
        _ message: String, _ fields: (String, any LogValueConvertible)..., file: String = #fileID, line: Int = #line
    ) { log(.info, message, fields, source: Self.source(file, line)) }
    package func warn(
        _ message: String, _ fields: (String, any LogValueConvertible)..., file: String = #fileID, line: Int = #line
    ) { log(.warn, message, fields, source: Self.source(file, line)) }
    package func error(
        _ message: String, _ fields: (String, any LogValueConvertible)..., file: String = #fileID, line: Int = #line
    ) { log(.error, message, fields, source: Self.source(file, line)) }

    package func log(_ lvl: LogLevel, _ message: String, _ fields: [(String, any LogValueConvertible)], source: String)
    {
        guard lvl >= level else { return }
        let record = Record(
            time: sink == nil ? Self.timestamp() : "", level: lvl, source: source, message: message,
            fields: context + fields.map { ($0.0, $0.1.logValue) })
        if let sink { sink(record) } else { writeAll(fd, record.line(format)) }
    }

    /// `source`'s value: the file's name (not its module or folders) and the line, as promslog
    /// writes `main.go:42`.
    package static func source(_ fileID: String, _ line: Int) -> String {
        "\(fileID.split(separator: "/").last.map(String.init) ?? fileID):\(line)"
    }

    /// One log record, before it is written.
    package struct Record {
        package var time: String
        package var level: LogLevel
        package var source: String
        package var message: String
        package var fields: [(String, LogValue)]

        package init(time: String, level: LogLevel, source: String, message: String, fields: [(String, LogValue)]) {
            self.time = time
            self.level = level
            self.source = source
            self.message = message
            self.fields = fields
        }

        package func line(_ format: LogFormat) -> String {
            let all: [(String, LogValue)] =
                [
                    ("time", .string(time)), ("level", .string(level.written)), ("source", .string(source)),
                    ("msg", .string(message)),
                ] + fields
            switch format {
            case .logfmt:
                return all.map { "\($0.0)=\(Logger.logfmtValue($0.1))" }.joined(separator: " ") + "\n"
            case .json:
                return "{" + all.map { "\(Logger.jsonString($0.0)):\(Logger.jsonValue($0.1))" }.joined(separator: ",")
                    + "}\n"
            }
        }
    }

    package static func logfmtValue(_ value: LogValue) -> String {
        switch value {
        case .string(let v): logfmtValue(v)
        case .int(let n): String(n)
        case .double(let x): x.isFinite ? String(x) : x.isNaN ? "NaN" : x > 0 ? "+Inf" : "-Inf"
        case .bool(let b): String(b)
        }
    }

    package static func logfmtValue(_ v: String) -> String {
        let needsQuotes =
            v.isEmpty
            || v.unicodeScalars.contains { $0 == " " || $0 == "=" || $0 == "\"" || isControl($0) || $0 == "\\" }
        guard needsQuotes else { return v }
        return jsonString(v)
    }

    /// A JSON value: numbers and booleans bare; a number JSON cannot hold (NaN, ±Inf) as the
    /// string Prometheus writes for it.
    package static func jsonValue(_ value: LogValue) -> String {
        switch value {
        case .string(let v): jsonString(v)
        case .int(let n): String(n)
        case .double(let x): x.isFinite ? String(x) : jsonString(logfmtValue(value))
        case .bool(let b): String(b)
        }
    }

    /// C0, DEL and C1: what a terminal may act on; and U+2028 and U+2029, which editors, log
    /// viewers and JavaScript read as line ends.
    package static func isControl(_ c: Unicode.Scalar) -> Bool {
        c.value < 0x20 || (0x7F...0x9F).contains(c.value) || c.value == 0x2028 || c.value == 0x2029
    }

    /// A JSON string literal (also valid as a quoted logfmt value), with every control character
    /// escaped, DEL and C1 too: logs are read in terminals.
    package static func jsonString(_ v: String) -> String {
        quoted(v) { "\\u" + String($0.value, radix: 16).leftPadded(4) }
    }

    /// `v` in double quotes: `"` and `\` escaped, newline, return and tab as `\n`, `\r`, `\t`, every
    /// other control character (`isControl`) as `control` writes it (JSON's `\u001b`, Go's `\x1b`).
    package static func quoted(_ v: String, control: (Unicode.Scalar) -> String) -> String {
        var out = "\""
        for c in v.unicodeScalars {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where isControl(c): out += control(c)
            default: out.unicodeScalars.append(c)
            }
        }
        return out + "\""
    }

    /// RFC 3339 UTC with milliseconds: `2026-11-29T14:48:24.123Z`.
    package static func timestamp() -> String {
        let ns = WallClock.nanosecondsSinceEpoch()
        return rfc3339(seconds: Int(ns / 1_000_000_000), millis: Int(ns % 1_000_000_000 / 1_000_000))
    }

    package static func rfc3339(seconds: Int, millis: Int) -> String {
        let whole = UTCTime.rfc3339(Double(seconds))  // `…:09Z`: insert the milliseconds
        let ms = String(millis)
        return whole.dropLast() + "." + String(repeating: "0", count: max(0, 3 - ms.count)) + ms + "Z"
    }
}
