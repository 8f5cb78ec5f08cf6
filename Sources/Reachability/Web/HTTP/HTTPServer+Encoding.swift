import Synchronization

/// What the server writes besides the handlers' answers, and how it decides on gzip.
extension HTTPServer {
    /// Plain HTTP sent to the TLS port gets this, in plain HTTP (as Go's servers answer).
    static let plainHTTPOnTLSPort = Array(
        "HTTP/1.0 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\nClient sent an HTTP request to an HTTPS server.\n"
            .utf8)

    /// The interim answer to `Expect: 100-continue`.
    static let continueResponse = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    /// The head and (unless `head`) the body, in one buffer for one write.
    static func serialize(_ response: HTTPResponse, head: Bool, keepAlive: Bool) -> [UInt8] {
        var out = response.head(keepAlive: keepAlive)
        if !head { out.append(contentsOf: response.body) }
        return out
    }

    /// Text and exposition formats are worth compressing; images and empty answers are not.
    static func isCompressible(_ response: HTTPResponse) -> Bool {
        guard let type = response.headers.first(where: { $0.name.lowercased() == "content-type" })?.value.lowercased()
        else { return false }
        return type.hasPrefix("text/") || type.hasPrefix("application/openmetrics-text")
            || type.hasPrefix("application/json") || type.hasPrefix("application/vnd.google.protobuf")
    }

    /// Whether `Accept-Encoding` admits gzip (RFC 9110 §12.5.3): `gzip`'s own weight if it is
    /// listed (so `*, gzip;q=0` refuses it), else the weight of `*`; q=0 means "not acceptable".
    static func acceptsGzip(_ request: HTTPRequest) -> Bool {
        guard let header = request.header("Accept-Encoding") else { return false }
        var gzip: Double?
        var any: Double?
        for item in header.split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.trimmingSpaces.lowercased() }
            guard let coding = parts.first else { continue }
            let q = parts.dropFirst().first { $0.hasPrefix("q=") }.map { Double($0.dropFirst(2)) ?? 0 } ?? 1
            if coding == "gzip" || coding == "x-gzip" {
                gzip = min(gzip ?? 1, q)
            } else if coding == "*" {
                any = min(any ?? 1, q)
            }
        }
        return (gzip ?? any ?? 0) > 0
    }

    /// gzip of `body`. Concurrent scrapes share one render (`RenderCoalescer`), marked with its
    /// serial (`sharedBody`): the gzip of the last shared body is kept (not the body, which at
    /// 10,000 targets is ten times its gzip) and not compressed again.
    func compressed(_ body: [UInt8], shared: UInt64?) -> [UInt8]? {
        if let shared, let hit = lastGzip.withLock({ $0?.serial == shared ? $0?.gzip : nil }) {
            return hit
        }
        guard let gz = Gzip.compress(body) else { return nil }
        if let shared { lastGzip.withLock { $0 = (shared, gz) } }
        return gz
    }
}
