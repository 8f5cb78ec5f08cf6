/// A parsed JSON value, for the full (strict, slower) history decoder. Objects keep their key
/// order; a duplicate key makes the whole document invalid.
package enum JSONValue: Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    package static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case (.bool(let x), .bool(let y)): x == y
        case (.number(let x), .number(let y)): x == y
        case (.string(let x), .string(let y)): x == y
        case (.array(let x), .array(let y)): x == y
        case (.object(let x), .object(let y)): x.map(\.0) == y.map(\.0) && x.map(\.1) == y.map(\.1)
        default: false
        }
    }

    /// Parses one complete document; nil if it is not strictly valid JSON.
    package static func parse(_ bytes: some Collection<UInt8>) -> JSONValue? {
        let array = Array(bytes)
        return array.withUnsafeBufferPointer { buffer -> JSONValue? in
            var scanner = JSONScanner(buffer)
            guard let value = try? scanner.readValue(), (try? scanner.expectEnd()) != nil else { return nil }
            return value
        }
    }

    package subscript(key: String) -> JSONValue? {
        guard case .object(let fields) = self else { return nil }
        return fields.first { $0.0 == key }?.1
    }

    package var string: String? { if case .string(let s) = self { s } else { nil } }
    package var number: Double? { if case .number(let n) = self { n } else { nil } }
    package var isNull: Bool { self == .null }
}

extension JSONScanner {
    /// Reads any value into a tree (duplicate object keys are an error).
    package mutating func readValue() throws(JSONScanError) -> JSONValue {
        switch peek() {
        case UInt8(ascii: "{"):
            try beginObject()
            var fields: [(String, JSONValue)] = []
            var seen = Set<String>()
            var first = true
            while let key = try nextKey(&first) {
                let name = string(key)
                guard seen.insert(name).inserted else { throw fail("duplicate key \(name)") }
                fields.append((name, try readValue()))
            }
            return .object(fields)
        case UInt8(ascii: "["):
            try beginArray()
            var items: [JSONValue] = []
            var first = true
            while try nextElement(&first) { items.append(try readValue()) }
            return .array(items)
        case UInt8(ascii: "\""): return .string(string(try readString()))
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .bool(try readBool())
        case UInt8(ascii: "n"):
            _ = try readNull()
            return .null
        case nil: throw fail("expected a value")
        default: return .number(try readNumber())
        }
    }
}

/// Appends compact JSON to a byte buffer: the history encoder. Keys are written in the order
/// given, so a record's layout is fixed and documented.
package struct JSONWriter {
    package var bytes: [UInt8] = []
    private var needsComma = false

    package init(capacity: Int = 512) { bytes.reserveCapacity(capacity) }

    package mutating func beginObject() {
        separator()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }
    package mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }
    package mutating func beginArray() {
        separator()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
    }
    package mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// Writes `"key":` (the value call that follows must not add a comma).
    package mutating func key(_ k: String) {
        separator()
        writeString(k)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    package mutating func value(_ s: String) {
        separator()
        writeString(s)
        needsComma = true
    }
    package mutating func value(_ v: Int) {
        separator()
        bytes.append(contentsOf: String(v).utf8)
        needsComma = true
    }
    package mutating func value(_ b: Bool) {
        separator()
        bytes.append(contentsOf: (b ? "true" : "false").utf8)
        needsComma = true
    }
    package mutating func null() {
        separator()
        bytes.append(contentsOf: "null".utf8)
        needsComma = true
    }

    /// A finite number rounded to `decimals` places, in the shortest form that reads back the
    /// same; non-finite values (never produced by the exporter) are written as 0 to keep the
    /// line valid JSON.
    package mutating func value(_ d: Double, decimals: Int) {
        separator()
        needsComma = true
        guard d.isFinite else {
            bytes.append(UInt8(ascii: "0"))
            return
        }
        let scale = [1.0, 10, 100, 1000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000][
            min(9, max(0, decimals))]
        let rounded = (d * scale).rounded() / scale
        if rounded == rounded.rounded(.towardZero), abs(rounded) < 9e15 {
            bytes.append(contentsOf: String(Int64(rounded)).utf8)
        } else {
            bytes.append(contentsOf: rounded.description.utf8)
        }
    }

    package mutating func field(_ k: String, _ s: String) {
        key(k)
        value(s)
    }
    package mutating func field(_ k: String, _ v: Int) {
        key(k)
        value(v)
    }
    package mutating func field(_ k: String, _ d: Double, decimals: Int) {
        key(k)
        value(d, decimals: decimals)
    }

    @inline(__always) private mutating func separator() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }

    /// Every control character escaped: C0, and DEL and C1 too (valid JSON either way; these
    /// files and answers are read in terminals).
    private mutating func writeString(_ s: String) {
        let hex = Array("0123456789abcdef".utf8)
        func escaped(_ b: UInt8) -> [UInt8] {
            [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(b >> 4)], hex[Int(b & 15)]]
        }
        bytes.append(UInt8(ascii: "\""))
        var leadC2 = false  // U+0080…U+009F are 0xC2 0x80…0x9F in UTF-8
        for b in s.utf8 {
            if leadC2 {
                leadC2 = false
                if (0x80...0x9F).contains(b) {
                    bytes.append(contentsOf: escaped(b))
                    continue
                }
                bytes.append(0xC2)
            }
            switch b {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0..<0x20, 0x7F: bytes.append(contentsOf: escaped(b))
            case 0xC2: leadC2 = true
            default: bytes.append(b)
            }
        }
        if leadC2 { bytes.append(0xC2) }
        bytes.append(UInt8(ascii: "\""))
    }
}
