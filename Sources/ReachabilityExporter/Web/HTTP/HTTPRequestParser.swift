import ReachabilityVerdict

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

    /// Where a parse stopped, so that the next one, given the same bytes and more, resumes there
    /// (#41: a trickled body re-parsed a 15 KB head at every byte). The head-end search goes on
    /// from where it stopped, the head is parsed once, and body bytes are only counted: the work
    /// per byte received is constant. Reset it (a new value) for each request.
    package struct Progress: Sendable {
        /// Offset of the request's first byte, past empty lines before it (RFC 9112 §2.2).
        var start = 0
        var leadingDone = false
        /// Offset from `start` where the head-end search resumes.
        var scan = 0
        var methodEnded = false
        /// The first byte of the method that cannot be in a token, if any.
        var badMethodByte: UInt8?
        /// Offset from `start` of the first LF, once seen.
        var firstLF: Int?
        var head: Head?
        /// Bytes looked at by the head-end search so far (for the test that holds it linear).
        package fileprivate(set) var scannedBytes = 0

        package init() {}
    }

    /// A parsed head and what its request still waits for; offsets from the buffer's start.
    struct Head: Sendable {
        let request: HTTPRequest
        let afterHead: Int
        let total: Int
        let expectsContinue: Bool
    }

    /// Parses `buffer` from scratch (a fresh `Progress`).
    package func parse(_ buffer: ArraySlice<UInt8>) -> Outcome {
        var progress = Progress()
        return parse(buffer, resuming: &progress)
    }

    /// Parses `buffer`, which holds the bytes seen by the earlier calls with this `progress` and
    /// maybe more after them, looking only at what is new. After `.request(_, consumed:)` the
    /// progress is reset: the next call gets the buffer without those bytes.
    package func parse(_ buffer: ArraySlice<UInt8>, resuming progress: inout Progress) -> Outcome {
        let base = buffer.startIndex
        if let head = progress.head { return waitForBody(head, count: buffer.count, progress: &progress) }
        // Tolerate empty lines before a request (RFC 9112 §2.2), a bounded number of them.
        while !progress.leadingDone {
            let at = base + progress.start
            guard at < buffer.endIndex, buffer[at] == 0x0d else {
                progress.leadingDone = true
                break
            }
            guard at + 1 < buffer.endIndex else { return .incomplete }
            guard buffer[at + 1] == 0x0a else {
                progress.leadingDone = true
                break
            }
            progress.start += 2
            if progress.start > limits.maxRequestLine {
                return .reject(status: 400, message: "too many empty lines before the request")
            }
        }
        let data = buffer[(base + progress.start)...]
        guard let headEnd = findHeadEnd(data, progress: &progress) else {
            if let bad = progress.badMethodByte {
                return .reject(
                    status: 400, message: bad == 0x16 ? "TLS sent to a plain HTTP port" : "malformed request line")
            }
            let received = data.count
            if let lineEnd = progress.firstLF {
                if lineEnd > limits.maxRequestLine { return .reject(status: 414, message: "request line too long") }
            } else if received > limits.maxRequestLine {
                return .reject(status: 414, message: "request line too long")
            }
            if received > limits.maxRequestLine + limits.maxHeaderBytes {
                return .reject(status: 431, message: "request header fields too large")
            }
            return .incomplete
        }
        switch parseHead(data[data.startIndex..<headEnd.lineEnd], afterHead: headEnd.afterHead - base) {
        case .failure(let reject): return reject.outcome
        case .success(let head):
            progress.head = head
            return waitForBody(head, count: buffer.count, progress: &progress)
        }
    }

    /// The request once its body is all there; until then, `.incomplete` (or `.continueBody`).
    private func waitForBody(_ head: Head, count: Int, progress: inout Progress) -> Outcome {
        if count < head.total {
            // RFC 9110 §10.1.1: a client that waits for 100 Continue before its body gets it.
            return head.expectsContinue && count == head.afterHead ? .continueBody : .incomplete
        }
        progress = Progress()
        return .request(head.request, consumed: head.total)
    }

    /// A refusal: the status and why.
    struct Rejection: Error {
        let status: Int
        let message: String
        var outcome: Outcome { .reject(status: status, message: message) }
    }

    // Long on purpose: one pass over hostile input, each refusal next to the byte that causes it.
    /// The head `head` (request line and fields, without the blank line), parsed once.
    private func parseHead(_ head: ArraySlice<UInt8>, afterHead: Int) -> Result<Head, Rejection> {
        // Split on LF bytes (a Swift String would treat CR LF as one Character), drop each CR.
        var lines: [Substring] = head.split(separator: 0x0a, omittingEmptySubsequences: false).map { raw in
            let bytes = raw.last == 0x0d ? raw.dropLast() : raw
            // Bytes that are not UTF-8 become U+FFFD; header values here are ASCII in practice.
            return Substring(String(decoding: bytes, as: UTF8.self))
        }
        let requestLine = lines.removeFirst()
        if requestLine.utf8.count > limits.maxRequestLine {
            return .failure(Rejection(status: 414, message: "request line too long"))
        }
        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[0].utf8.allSatisfy(isTokenChar), !parts[1].isEmpty,
            parts[1].utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f })
        else {
            return .failure(Rejection(status: 400, message: "malformed request line"))
        }
        guard parts[2] == "HTTP/1.1" || parts[2] == "HTTP/1.0" else {
            return .failure(
                parts[2].hasPrefix("HTTP/")
                    ? Rejection(status: 505, message: "unsupported HTTP version")
                    : Rejection(status: 400, message: "malformed request line"))
        }
        if head.count - requestLine.utf8.count > limits.maxHeaderBytes {
            return .failure(Rejection(status: 431, message: "request header fields too large"))
        }
        var headers: [(name: String, value: String)] = []
        for line in lines where !line.isEmpty {
            if headers.count >= limits.maxHeaderCount {
                return .failure(Rejection(status: 431, message: "too many header fields"))
            }
            guard let colon = line.firstIndex(of: ":") else {
                return .failure(Rejection(status: 400, message: "malformed header field"))
            }
            let name = line[..<colon]
            guard !name.isEmpty, name.utf8.allSatisfy(isTokenChar) else {
                return .failure(Rejection(status: 400, message: "malformed header field name"))
            }
            let value = line[line.index(after: colon)...].trimmingSpaces
            headers.append((String(name), value))
        }
        let request = HTTPRequest(
            method: String(parts[0]), target: String(parts[1]), version: String(parts[2]), headers: headers)
        // RFC 9112 §3.2: one Host; two could be read differently here and by a proxy in front.
        if headers.count(where: { $0.name.lowercased() == "host" }) > 1 {
            return .failure(Rejection(status: 400, message: "more than one Host header"))
        }
        if request.header("transfer-encoding") != nil {
            return .failure(Rejection(status: 501, message: "request bodies with transfer-encoding are not supported"))
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
            else { return .failure(Rejection(status: 400, message: "invalid content-length")) }
            guard n <= limits.maxBodyBytes else {
                return .failure(Rejection(status: 413, message: "request body too large"))
            }
            bodyLength = n
        }
        let expects = request.header("expect")?.lowercased() == "100-continue" && request.version == "HTTP/1.1"
        return .success(
            Head(request: request, afterHead: afterHead, total: afterHead + bodyLength, expectsContinue: expects))
    }

    /// Finds the blank line ending the head, going on from where the last search stopped; returns
    /// where the head text ends and where the body starts (indices of `data`). On the way it notes
    /// the first LF and refuses a method that is not a token (a TLS ClientHello sent to the plain
    /// port, binary noise) at once, not at the request deadline.
    private func findHeadEnd(
        _ data: ArraySlice<UInt8>, progress: inout Progress
    ) -> (lineEnd: Int, afterHead: Int)? {
        let origin = data.startIndex
        var i = origin + progress.scan
        let limit = min(data.endIndex, origin + limits.maxRequestLine + limits.maxHeaderBytes + 4)
        defer {
            progress.scannedBytes += i - (origin + progress.scan)
            progress.scan = i - origin
        }
        while i < limit {
            let byte = data[i]
            if !progress.methodEnded {
                if byte == 0x20 || byte == 0x0d || byte == 0x0a {
                    progress.methodEnded = true
                } else if !isTokenChar(byte) {
                    progress.methodEnded = true
                    progress.badMethodByte = byte
                }
            }
            if byte == 0x0a {
                if progress.firstLF == nil { progress.firstLF = i - origin }
                // "\n\n" or "\r\n\r\n" (the latter also seen as "\n\r\n"); wait for the bytes that decide.
                guard i + 1 < data.endIndex else { return nil }
                if data[i + 1] == 0x0a { return (i, i + 2) }
                if data[i + 1] == 0x0d {
                    guard i + 2 < data.endIndex else { return nil }
                    if data[i + 2] == 0x0a { return (i, i + 3) }
                }
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
