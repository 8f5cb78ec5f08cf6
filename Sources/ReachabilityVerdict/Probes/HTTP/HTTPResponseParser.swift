/// An incremental, bounded HTTP/1.x response parser: feed it bytes as they arrive, call
/// `finish()` at end of stream. Pure (no I/O), so hostile input is tested byte by byte.
///
/// Bounds: the head (status line, fields, interim 1xx heads and chunked trailers together) may
/// not exceed `limits.headBytes`, nor `limits.fieldCount` fields; the body is kept up to
/// `limits.bodyBytes`, and the parser reports `.complete` with `bodyTruncated` as soon as more
/// than that arrives, so an endless body ends at the bound. Memory stays within about
/// `headBytes + bodyBytes`.
///
/// Framing: `Transfer-Encoding: chunked`, `Content-Length`, or read-to-close; no body for HEAD,
/// 1xx, 204 and 304. Interim 1xx responses (except 101) are skipped.
package struct HTTPResponseParser: Sendable {
    /// Size limits; the defaults suit a connectivity probe.
    package struct Limits: Sendable, Equatable {
        package var headBytes: Int
        package var fieldCount: Int
        package var bodyBytes: Int

        package init(headBytes: Int = 16_384, fieldCount: Int = 100, bodyBytes: Int = 65_536) {
            self.headBytes = headBytes
            self.fieldCount = fieldCount
            self.bodyBytes = bodyBytes
        }
    }

    /// Why the bytes are not an acceptable response.
    package enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case headTooLarge(limit: Int)
        case tooManyFields(limit: Int)
        case malformed(String)
        /// The stream ended before the response did.
        case truncated(String)

        package var description: String {
            switch self {
            case .headTooLarge(let limit): "response head exceeds \(limit) bytes"
            case .tooManyFields(let limit): "response has more than \(limit) header fields"
            case .malformed(let text): "malformed response: \(text)"
            case .truncated(let text): text
            }
        }
    }

    package enum Progress: Sendable, Equatable { case needMore, complete }

    private enum Framing: Sendable {
        case length(remaining: Int)
        case chunked, untilClose
    }
    private enum Chunk: Sendable {
        case size
        case data(remaining: Int)
        case dataEnd, trailer
    }
    private enum Stage: Sendable {
        case head
        case body(Framing)
        case done
    }

    package let limits: Limits
    private let isHeadRequest: Bool
    private var stage = Stage.head
    private var chunk = Chunk.size
    private var line: [UInt8] = []
    private var headBytes = 0
    private var statusLine: (version: String, status: Int, reason: String)?
    private var fields: [HTTPResponseHead.Field] = []

    /// The final response head, once it is complete.
    package private(set) var head: HTTPResponseHead?
    /// The body bytes kept (at most `limits.bodyBytes`).
    package private(set) var body: [UInt8] = []
    /// True when the body went on past `limits.bodyBytes` and the rest was not read.
    package private(set) var bodyTruncated = false
    package var isComplete: Bool { if case .done = stage { true } else { false } }

    /// `isHeadRequest`: the request was HEAD, so no body follows whatever the headers say.
    package init(limits: Limits = Limits(), isHeadRequest: Bool) {
        self.limits = limits
        self.isHeadRequest = isHeadRequest
    }

    /// Consumes the next bytes of the stream. Bytes after a complete response are ignored.
    package mutating func consume(_ bytes: ArraySlice<UInt8>) throws(Failure) -> Progress {
        var i = bytes.startIndex
        while i < bytes.endIndex {
            switch stage {
            case .done:
                return .complete
            case .head:
                guard let complete = try takeLine(bytes, &i, countingTowardHead: true) else { break }
                try headLine(complete)
            case .body(let framing):
                try bodyBytes(bytes, &i, framing)
            }
        }
        return isComplete ? .complete : .needMore
    }

    /// The stream ended: completes a read-to-close body, or reports what was cut short.
    package mutating func finish() throws(Failure) {
        switch stage {
        case .done:
            return
        case .head:
            if statusLine == nil && headBytes == 0 { throw .truncated("connection closed before any response") }
            throw .truncated("connection closed inside the response head")
        case .body(.untilClose):
            stage = .done
        case .body(.length(let remaining)):
            throw .truncated("connection closed \(remaining) bytes before the end of the body")
        case .body(.chunked):
            throw .truncated("connection closed inside the chunked body")
        }
    }

    // MARK: - Head

    /// Collects bytes up to a line feed; returns the line without CR LF, or nil if more is needed.
    private mutating func takeLine(
        _ bytes: ArraySlice<UInt8>, _ i: inout Int, countingTowardHead: Bool, maxLine: Int = .max
    ) throws(Failure) -> [UInt8]? {
        let lf = bytes[i...].firstIndex(of: 0x0A)
        let end = lf ?? bytes.endIndex
        let taken = end - i + (lf == nil ? 0 : 1)
        if countingTowardHead {
            headBytes += taken
            if headBytes > limits.headBytes { throw .headTooLarge(limit: limits.headBytes) }
        }
        if line.count + (end - i) > maxLine { throw .malformed("chunk framing line too long") }
        line.append(contentsOf: bytes[i..<end])
        i += taken
        if statusLine == nil, case .head = stage { try rejectEarlyIfNotHTTP() }
        guard lf != nil else { return nil }
        var complete = line
        line.removeAll(keepingCapacity: true)
        if complete.last == 0x0D { complete.removeLast() }
        return complete
    }

    /// Fails at once when the first bytes cannot start a status line (an SSH banner, TLS, binary).
    private func rejectEarlyIfNotHTTP() throws(Failure) {
        let start = line.firstIndex { $0 != 0x0D && $0 != 0x0A } ?? line.endIndex
        let prefix = line[start...].prefix(5)
        if !Array("HTTP/".utf8).starts(with: prefix) {
            throw .malformed("does not start with HTTP/: \(Self.printable(line.prefix(32)))")
        }
    }

    private mutating func headLine(_ l: [UInt8]) throws(Failure) {
        if statusLine == nil {
            if l.isEmpty { return }  // tolerate blank lines before the status line
            statusLine = try Self.parseStatusLine(l)
            return
        }
        if l.isEmpty { return try endOfHead() }
        if l[0] == 0x20 || l[0] == 0x09 {
            // Obsolete line folding: join to the previous field with one space.
            guard !fields.isEmpty else { throw .malformed("continuation line before any header field") }
            fields[fields.count - 1].value += " " + Self.trimmedText(l[...])
            return
        }
        if fields.count >= limits.fieldCount { throw .tooManyFields(limit: limits.fieldCount) }
        guard let colon = l.firstIndex(of: 0x3A), colon > 0 else {
            throw .malformed("header line without a name and colon: \(Self.printable(l.prefix(32)))")
        }
        let name = l[..<colon]
        guard name.allSatisfy(Self.isTokenByte) else {
            throw .malformed("invalid header name \(Self.printable(name.prefix(32)))")
        }
        fields.append(.init(name: String(decoding: name, as: UTF8.self), value: Self.trimmedText(l[(colon + 1)...])))
    }

    private static func parseStatusLine(_ l: [UInt8]) throws(Failure) -> (String, Int, String) {
        let parts = l.split(separator: 0x20, maxSplits: 2, omittingEmptySubsequences: false)
        let version = String(decoding: parts[0], as: UTF8.self)
        guard version.utf8.count == 8, version.hasPrefix("HTTP/1."),
            version.utf8.last.map({ $0 >= 0x30 && $0 <= 0x39 }) == true
        else {
            throw .malformed("unsupported version in status line \(printable(l.prefix(40)))")
        }
        guard parts.count >= 2, parts[1].count == 3, parts[1].allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let status = Int(String(decoding: parts[1], as: UTF8.self)), status >= 100
        else { throw .malformed("bad status code in \(printable(l.prefix(40)))") }
        let reason = parts.count == 3 ? String(decoding: parts[2], as: UTF8.self) : ""
        return (version, status, reason)
    }

    private mutating func endOfHead() throws(Failure) {
        guard let (version, status, reason) = statusLine else { return }
        statusLine = nil
        let parsed = HTTPResponseHead(version: version, status: status, reasonPhrase: reason, fields: fields)
        fields = []
        if status < 200 && status != 101 { return }  // interim response: the real one follows
        head = parsed
        if isHeadRequest || status < 200 || status == 204 || status == 304 {
            stage = .done
            return
        }
        let codings = parsed.values(of: "Transfer-Encoding").flatMap { $0.split(separator: ",") }
            .map { Self.trimmedText($0.utf8[...]).lowercased() }.filter { !$0.isEmpty }
        if let last = codings.last {
            stage = .body(last == "chunked" ? .chunked : .untilClose)
            return
        }
        let lengths = parsed.values(of: "Content-Length").flatMap { $0.split(separator: ",") }
            .map { Self.trimmedText($0.utf8[...]) }
        guard let first = lengths.first else {
            stage = .body(.untilClose)
            return
        }
        guard lengths.allSatisfy({ $0 == first }), first.utf8.count <= 18,
            first.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let length = Int(first)
        else { throw .malformed("invalid Content-Length \(lengths.joined(separator: ", "))") }
        stage = length == 0 ? .done : .body(.length(remaining: length))
    }

    // MARK: - Body

    private mutating func bodyBytes(_ bytes: ArraySlice<UInt8>, _ i: inout Int, _ framing: Framing) throws(Failure) {
        switch framing {
        case .untilClose:
            if keep(bytes[i...]) { finishTruncated() }
            i = bytes.endIndex
        case .length(let remaining):
            let n = min(remaining, bytes.endIndex - i)
            let dropped = keep(bytes[i..<(i + n)])
            i += n
            // Bytes past the limit make it truncated even when they were the body's last.
            if dropped || (remaining != n && body.count >= limits.bodyBytes) {
                finishTruncated()
            } else if remaining == n {
                stage = .done
            } else {
                stage = .body(.length(remaining: remaining - n))
            }
        case .chunked:
            try chunkedBytes(bytes, &i)
        }
    }

    private mutating func chunkedBytes(_ bytes: ArraySlice<UInt8>, _ i: inout Int) throws(Failure) {
        switch chunk {
        case .size:
            guard let l = try takeLine(bytes, &i, countingTowardHead: false, maxLine: 1024) else { return }
            let digits = Self.trimmedText((l.firstIndex(of: 0x3B).map { l[..<$0] } ?? l[...]))
            let isHex: (UInt8) -> Bool = { ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x66) }
            guard !digits.isEmpty, digits.utf8.count <= 15, digits.utf8.allSatisfy(isHex),
                let size = Int(digits, radix: 16)
            else {
                throw .malformed("invalid chunk size \(Self.printable(l.prefix(32)))")
            }
            chunk = size == 0 ? .trailer : .data(remaining: size)
        case .data(let remaining):
            let n = min(remaining, bytes.endIndex - i)
            let dropped = keep(bytes[i..<(i + n)])
            i += n
            if dropped { return finishTruncated() }
            chunk = remaining == n ? .dataEnd : .data(remaining: remaining - n)
        case .dataEnd:
            guard let l = try takeLine(bytes, &i, countingTowardHead: false, maxLine: 1) else { return }
            guard l.isEmpty else { throw .malformed("chunk data longer than its size") }
            chunk = .size
        case .trailer:
            guard let l = try takeLine(bytes, &i, countingTowardHead: true) else { return }
            if l.isEmpty { stage = .done }
        }
    }

    /// Appends what fits under the body limit; true if some bytes did not fit.
    private mutating func keep(_ bytes: ArraySlice<UInt8>) -> Bool {
        let room = max(0, limits.bodyBytes - body.count)
        body.append(contentsOf: bytes.prefix(room))
        return bytes.count > room
    }

    private mutating func finishTruncated() {
        bodyTruncated = true
        stage = .done
    }

    // MARK: - Helpers

    private static func isTokenByte(_ b: UInt8) -> Bool {
        switch b {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    private static func trimmedText<C: BidirectionalCollection>(_ bytes: C) -> String where C.Element == UInt8 {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }

    /// Up to a few dozen bytes, with non-printables escaped, for error details.
    package static func printable<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        var out = ""
        for b in bytes {
            if b >= 0x20 && b < 0x7F {
                out.append(Character(Unicode.Scalar(b)))
            } else {
                out += "\\x" + (b < 16 ? "0" : "") + String(b, radix: 16)
            }
        }
        return "\"" + out + "\""
    }
}
