/// Parses HTTP/1.x request heads from a byte buffer, with hard bounds. Pure: no I/O, so it is
/// unit-tested and fuzzed directly.
package struct HTTPRequestParser: Sendable {
    package struct Limits: Sendable {
        package var maxRequestLine = 8192
        package var maxHeaderBytes = 16384
        package var maxHeaderCount = 100
        package var maxBodyBytes = 65536
        package init() {}
    }

    package enum Outcome: Equatable, Sendable {
        /// More bytes are needed.
        case incomplete
        /// The head is complete and asks `Expect: 100-continue`; none of its body has come yet.
        case continueBody
        /// A whole request; `consumed` bytes (head plus any body) belong to it.
        case request(HTTPRequest, consumed: Int)
        /// Reply with this status and close.
        case reject(status: Int, message: String)
    }

    package let limits: Limits
    package init(limits: Limits = Limits()) { self.limits = limits }

    // Long on purpose: one pass over hostile input, each refusal next to the byte that causes it.
    package func parse(_ buffer: ArraySlice<UInt8>) -> Outcome {
        // Tolerate empty lines before a request (RFC 9112 §2.2).
        var start = buffer.startIndex
        while start + 1 < buffer.endIndex, buffer[start] == 0x0d, buffer[start + 1] == 0x0a { start += 2 }
        let data = buffer[start...]
        guard let headEnd = findHeadEnd(data) else {
            // A method is a token: anything else before the first space is refused now, not
            // at the request deadline (a TLS ClientHello sent to the plain port, binary noise).
            let method = data.prefix(while: { $0 != 0x20 && $0 != 0x0d && $0 != 0x0a })
            if let bad = method.first(where: { !isTokenChar($0) }) {
                return .reject(
                    status: 400, message: bad == 0x16 ? "TLS sent to a plain HTTP port" : "malformed request line")
            }
            if let lineEnd = data.firstIndex(of: 0x0a) {
                if lineEnd - data.startIndex > limits.maxRequestLine {
                    return .reject(status: 414, message: "request line too long")
                }
            } else if data.count > limits.maxRequestLine {
                return .reject(status: 414, message: "request line too long")
            }
            if data.count > limits.maxRequestLine + limits.maxHeaderBytes {
                return .reject(status: 431, message: "request header fields too large")
            }
            return .incomplete
        }
        // Split on LF bytes (a Swift String would treat CR LF as one Character), drop each CR.
        let head = data[data.startIndex..<headEnd.lineEnd]
        var lines: [Substring] = head.split(separator: 0x0a, omittingEmptySubsequences: false).map { raw in
            let bytes = raw.last == 0x0d ? raw.dropLast() : raw
            // Bytes that are not UTF-8 become U+FFFD; header values here are ASCII in practice.
            return Substring(String(decoding: bytes, as: UTF8.self))
        }
        let requestLine = lines.removeFirst()
        if requestLine.utf8.count > limits.maxRequestLine {
            return .reject(status: 414, message: "request line too long")
        }
        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[0].utf8.allSatisfy(isTokenChar), !parts[1].isEmpty,
            parts[1].utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f })
        else {
            return .reject(status: 400, message: "malformed request line")
        }
        guard parts[2] == "HTTP/1.1" || parts[2] == "HTTP/1.0" else {
            return parts[2].hasPrefix("HTTP/")
                ? .reject(status: 505, message: "unsupported HTTP version")
                : .reject(status: 400, message: "malformed request line")
        }
        if headEnd.lineEnd - data.startIndex - requestLine.utf8.count > limits.maxHeaderBytes {
            return .reject(status: 431, message: "request header fields too large")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines where !line.isEmpty {
            if headers.count >= limits.maxHeaderCount { return .reject(status: 431, message: "too many header fields") }
            guard let colon = line.firstIndex(of: ":") else {
                return .reject(status: 400, message: "malformed header field")
            }
            let name = line[..<colon]
            guard !name.isEmpty, name.utf8.allSatisfy(isTokenChar) else {
                return .reject(status: 400, message: "malformed header field name")
            }
            let value = line[line.index(after: colon)...].trimmingSpaces
            headers.append((String(name), value))
        }
        let request = HTTPRequest(
            method: String(parts[0]), target: String(parts[1]), version: String(parts[2]), headers: headers)
        // RFC 9112 §3.2: one Host; two could be read differently here and by a proxy in front.
        if headers.count(where: { $0.name.lowercased() == "host" }) > 1 {
            return .reject(status: 400, message: "more than one Host header")
        }
        if request.header("transfer-encoding") != nil {
            return .reject(status: 501, message: "request bodies with transfer-encoding are not supported")
        }
        var bodyLength = 0
        // RFC 9112 §6.3: digits only, and every Content-Length field (or list member) the same;
        // anything else is refused, never guessed at (a proxy in front may have read it otherwise).
        let lengths = headers.filter { $0.name.lowercased() == "content-length" }.flatMap {
            $0.value.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingSpaces }
        }
        if let first = lengths.first {
            guard lengths.allSatisfy({ $0 == first }), !first.isEmpty, first.utf8.count <= 18,
                first.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let n = Int(first)
            else { return .reject(status: 400, message: "invalid content-length") }
            guard n <= limits.maxBodyBytes else { return .reject(status: 413, message: "request body too large") }
            bodyLength = n
        }
        let total = headEnd.afterHead - buffer.startIndex + bodyLength
        if buffer.count < total {
            // RFC 9110 §10.1.1: a client that waits for 100 Continue before its body gets it.
            let expects = request.header("expect")?.lowercased() == "100-continue" && request.version == "HTTP/1.1"
            return expects && buffer.count == headEnd.afterHead - buffer.startIndex ? .continueBody : .incomplete
        }
        return .request(request, consumed: total)
    }

    /// Finds the blank line ending the head; returns where the head text ends and where the body starts.
    private func findHeadEnd(_ data: ArraySlice<UInt8>) -> (lineEnd: Int, afterHead: Int)? {
        var i = data.startIndex
        let limit = min(data.endIndex, data.startIndex + limits.maxRequestLine + limits.maxHeaderBytes + 4)
        while i < limit {
            if data[i] == 0x0a {
                // "\n\n" or "\r\n\r\n" (the latter also seen as "\n\r\n").
                if i + 1 < data.endIndex, data[i + 1] == 0x0a { return (i, i + 2) }
                if i + 2 < data.endIndex, data[i + 1] == 0x0d, data[i + 2] == 0x0a { return (i, i + 3) }
            }
            i += 1
        }
        return nil
    }
}

private func isTokenChar(_ b: UInt8) -> Bool {
    switch b {
    case 0x30...0x39, 0x41...0x5a, 0x61...0x7a: true
    case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
        UInt8(ascii: "'"),
        UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"),
        UInt8(ascii: "_"),
        UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
        true
    default: false
    }
}
