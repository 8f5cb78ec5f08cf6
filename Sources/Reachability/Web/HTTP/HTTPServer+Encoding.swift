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

    /// gzip of `body`, shared by concurrent scrapes: they get the very same render (one buffer,
    /// `RenderCoalescer`), so the last body compressed is kept and a body in the same storage is
    /// not compressed again. Keeping it alive keeps its address from being reused.
    func compressed(_ body: [UInt8]) -> [UInt8]? {
        let address = body.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
        if let hit = lastGzip.withLock({ last -> [UInt8]? in
            guard let last, last.address == address, last.body.count == body.count else { return nil }
            return last.gzip
        }) {
            return hit
        }
        guard let gz = Gzip.compress(body) else { return nil }
        lastGzip.withLock { $0 = (body, address, gz) }
        return gz
    }
}
