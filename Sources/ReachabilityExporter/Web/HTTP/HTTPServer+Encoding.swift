import ReachabilityVerdict
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
    /// serial (`sharedBody`): the first to ask compresses it, the others wait for that gzip
    /// (holding no thread), and the newest shared gzip is kept for those who come later (not
    /// the body, which at 10,000 targets is twenty times its gzip). An older render's scrape
    /// compresses its own without touching what is kept.
    func compressed(_ body: [UInt8], shared: UInt64?) async -> [UInt8]? {
        guard let shared else { return Gzip.compress(body) }
        let turn: GzipTurn = await withCheckedContinuation { continuation in
            let now: GzipTurn? = lastGzip.withLock { g in
                if g.serial == shared {
                    if !g.computing { return .done(g.gzip) }
                    g.waiters.append((shared, continuation))
                    return nil
                }
                if g.serial > shared { return .alone }
                g.serial = shared
                g.gzip = nil
                g.computing = true
                return .compress
            }
            if let now { continuation.resume(returning: now) }
        }
        switch turn {
        case .done(let gz): return gz
        case .alone: return Gzip.compress(body)
        case .compress:
            let gz = Gzip.compress(body)
            // Those waiting for this serial get its gzip, even if a newer one is kept by now.
            let waiters = lastGzip.withLock { g in
                if g.serial == shared {
                    g.gzip = gz
                    g.computing = false
                }
                let mine = g.waiters.filter { $0.serial == shared }
                g.waiters.removeAll { $0.serial == shared }
                return mine
            }
            for w in waiters { w.continuation.resume(returning: .done(gz)) }
            return gz
        }
    }
}

extension HTTPServer {
    /// Runs on the server's pool: authentication, the handler, security headers, gzip.
    /// The answer's head and body apart, so a scrape's body is written from the render every
    /// concurrent scrape shares, not from a copy per connection (#33: at 64 connections the
    /// copies were 190 MB).
    func respond(
        _ request: HTTPRequest, config: WebConfig?, client: String, keepAlive: Bool
    ) async -> (head: [UInt8], body: [UInt8]) {
        if let security, let config {
            switch security.authorize(request, config: config, client: client) {
            case .allow: break
            case .unauthorized:
                var r = HTTPResponse(
                    status: 401, text: "unauthorized\n",
                    headers: [("WWW-Authenticate", "Basic realm=\"reachability_exporter\", charset=\"UTF-8\"")])
                r.headers += config.headers
                return (Self.serialize(r, head: request.method == "HEAD", keepAlive: keepAlive), [])
            case .busy:
                var r = HTTPResponse(status: 429, text: "too many requests\n", headers: [("Retry-After", "1")])
                r.headers += config.headers
                return (Self.serialize(r, head: request.method == "HEAD", keepAlive: keepAlive), [])
            }
        }
        var request = request
        request.client = client
        var response = await handler(request)
        if let config { response.headers += config.headers }
        if Self.isCompressible(response) {
            response.headers.append(("Vary", "Accept-Encoding"))
            if Self.acceptsGzip(request), response.body.count >= 256,
                let gz = await compressed(response.body, shared: response.sharedBody)
            {
                response.body = gz
                response.headers.append(("Content-Encoding", "gzip"))
            }
        }
        // A small body goes out with its head in one write.
        if request.method == "HEAD" || response.body.count < 16 << 10 {
            return (Self.serialize(response, head: request.method == "HEAD", keepAlive: keepAlive), [])
        }
        return (response.head(keepAlive: keepAlive), response.body)
    }
}

/// What `compressed` decided for one caller.
enum GzipTurn: Sendable {
    case done([UInt8]?)
    case compress
    case alone
}

/// The newest shared render's gzip, or the scrapes waiting while one of them compresses it.
struct SharedGzip {
    var serial: UInt64 = 0
    var gzip: [UInt8]?
    var computing = false
    var waiters: [(serial: UInt64, continuation: CheckedContinuation<GzipTurn, Never>)] = []
}
