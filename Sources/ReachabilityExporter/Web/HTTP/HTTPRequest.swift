import ReachabilityVerdict

/// A parsed HTTP/1.x request head. The server reads no request bodies beyond skipping them.
package struct HTTPRequest: Sendable, Equatable {
    package var method: String
    /// The request target as sent (`/metrics?x=1`).
    package var target: String
    package var version: String
    /// Header fields in arrival order, names as sent.
    package var headers: [(name: String, value: String)]
    /// The client's address as the server accepted it (`192.0.2.7`, `2001:db8::7`); "" when the
    /// request did not come through the server. Not part of equality.
    package var client = ""

    package init(
        method: String, target: String, version: String = "HTTP/1.1", headers: [(name: String, value: String)] = []
    ) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
    }

    /// The path without the query string.
    package var path: String { String(target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]) }

    /// Query parameters, percent-decoded (`+` as space); later duplicates win.
    package var query: [String: String] {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return [:] }
        var out: [String: String] = [:]
        for pair in parts[1].split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            out[percentDecode(kv[0])] = kv.count > 1 ? percentDecode(kv[1]) : ""
        }
        return out
    }

    /// The first value of a header, compared case-insensitively.
    package func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// Whether the connection stays open after the response (HTTP/1.1 default, 1.0 opt-in).
    package var keepAlive: Bool {
        let connection = header("connection")?.lowercased() ?? ""
        if version == "HTTP/1.0" { return connection.contains("keep-alive") }
        return !connection.contains("close")
    }

    package static func == (a: HTTPRequest, b: HTTPRequest) -> Bool {
        a.method == b.method && a.target == b.target && a.version == b.version
            && a.headers.map(\.name) == b.headers.map(\.name) && a.headers.map(\.value) == b.headers.map(\.value)
    }
}

func percentDecode(_ s: Substring) -> String {
    var bytes: [UInt8] = []
    var it = Array(s.utf8)[...]
    while let b = it.popFirst() {
        if b == UInt8(ascii: "+") {
            bytes.append(0x20)
            continue
        }
        if b == UInt8(ascii: "%"), it.count >= 2, let hi = hexValue(it[it.startIndex]),
            let lo = hexValue(it[it.startIndex + 1])
        {
            bytes.append(hi << 4 | lo)
            it = it.dropFirst(2)
            continue
        }
        bytes.append(b)
    }
    return String(decoding: bytes, as: UTF8.self)
}

private func hexValue(_ b: UInt8) -> UInt8? {
    switch b {
    case 0x30...0x39: b - 0x30
    case 0x41...0x46: b - 0x41 + 10
    case 0x61...0x66: b - 0x61 + 10
    default: nil
    }
}

/// A response to write: status, headers and a body (HEAD strips the body, keeps the length).
package struct HTTPResponse: Sendable {
    package var status: Int
    package var headers: [(name: String, value: String)]
    package var body: [UInt8]
    /// Set when other responses may carry the very same body (concurrent scrapes sharing one
    /// render): equal values, equal bodies. The server then compresses it once.
    package var sharedBody: UInt64?

    package init(
        status: Int, contentType: String = "text/plain; charset=utf-8", body: [UInt8],
        headers: [(name: String, value: String)] = []
    ) {
        self.status = status
        self.headers = [("Content-Type", contentType)] + headers
        self.body = body
    }

    package init(status: Int, text: String, headers: [(name: String, value: String)] = []) {
        self.init(status: status, body: Array(text.utf8), headers: headers)
    }

    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 204: "No Content"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        case 505: "HTTP Version Not Supported"
        default: "Status \(status)"
        }
    }

    /// The status line and headers, with Content-Length and Connection added.
    func head(keepAlive: Bool) -> [UInt8] {
        var s = "HTTP/1.1 \(status) \(Self.reasonPhrase(status))\r\n"
        for (n, v) in headers { s += "\(n): \(v)\r\n" }
        s += "Content-Length: \(body.count)\r\n"
        s += keepAlive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n"
        return Array(s.utf8)
    }
}
