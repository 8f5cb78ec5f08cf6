import ReachabilityExporter
import ReachabilityVerdict

/// What a `LoopbackHTTPServer` does with each connection: ordinary answers for positive tests
/// and hostile ones (silence, slow drip, endless body, huge head, garbage, reset) for the rest.
package struct LoopbackHTTPBehavior: Sendable {
    package let run: @Sendable (LoopbackConnection) -> Void

    package init(_ run: @escaping @Sendable (LoopbackConnection) -> Void) { self.run = run }

    /// Reads the request and writes `raw` verbatim, then closes.
    package static func raw(_ raw: String) -> LoopbackHTTPBehavior {
        LoopbackHTTPBehavior { c in
            guard c.readRequest() != nil else { return }
            c.write(raw)
        }
    }

    /// A complete response with `Content-Length` (omitted from the body for HEAD requests).
    package static func status(_ code: Int, _ reason: String = "", headers: [(String, String)] = [], body: String = "")
        -> LoopbackHTTPBehavior
    {
        LoopbackHTTPBehavior { c in
            guard let request = c.readRequest() else { return }
            c.write(response(code, reason, headers: headers, body: body, isHead: request.hasPrefix("HEAD ")))
        }
    }

    /// Routes by request path (query ignored); unknown paths get 404.
    package static func routes(_ table: [String: LoopbackHTTPBehavior.Answer]) -> LoopbackHTTPBehavior {
        LoopbackHTTPBehavior { c in
            guard let request = c.readRequest() else { return }
            let target = request.split(separator: " ", maxSplits: 2).dropFirst().first.map(String.init) ?? "/"
            let path = String(target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0])
            let answer = table[path] ?? Answer(404, "Not Found")
            c.write(
                response(
                    answer.code, answer.reason, headers: answer.headers, body: answer.body,
                    isHead: request.hasPrefix("HEAD ")))
        }
    }

    /// A captive portal as openNDS 9.10 answers an unauthenticated client: `GET` gets a `307` to
    /// its splash page, any other method `511 Network Authentication Required`.
    package static func openNDSPortal(splash: String = "http://192.0.2.1:2050/opennds_preauth/") -> LoopbackHTTPBehavior
    {
        LoopbackHTTPBehavior { c in
            guard let request = c.readRequest() else { return }
            if request.hasPrefix("GET ") {
                c.write(response(307, "Temporary Redirect", headers: [("Location", splash)], body: ""))
            } else {
                c.write(
                    response(
                        511, "Network Authentication Required", headers: [], body: "",
                        isHead: request.hasPrefix("HEAD ")))
            }
        }
    }

    /// One canned answer for `routes`.
    package struct Answer: Sendable {
        package var code: Int
        package var reason: String
        package var headers: [(String, String)]
        package var body: String
        package init(_ code: Int, _ reason: String = "", headers: [(String, String)] = [], body: String = "") {
            self.code = code
            self.reason = reason
            self.headers = headers
            self.body = body
        }
    }

    /// Writes `raw` as soon as the connection is accepted, without reading (a banner, or a
    /// plain-HTTP error answering a TLS ClientHello), then waits for the peer to leave.
    package static func greeting(_ raw: String) -> LoopbackHTTPBehavior {
        LoopbackHTTPBehavior { c in
            c.write(raw)
            c.holdOpen()
        }
    }

    /// Accepts, reads the request, and never answers.
    package static let silent = LoopbackHTTPBehavior { c in
        c.readRequest()
        c.holdOpen()
    }

    /// Writes `raw` one byte every `intervalMS`, until done, the peer leaves or the server stops.
    package static func drip(_ raw: String, intervalMS: Int32) -> LoopbackHTTPBehavior {
        LoopbackHTTPBehavior { c in
            guard c.readRequest() != nil else { return }
            for byte in raw.utf8 {
                guard c.write([byte]), c.pause(milliseconds: intervalMS) else { return }
            }
            c.holdOpen()
        }
    }

    /// A 200 head without framing, then body bytes forever (until the peer leaves or the server stops).
    package static let endlessBody = LoopbackHTTPBehavior { c in
        guard c.readRequest() != nil else { return }
        guard c.write("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n") else { return }
        let block = [UInt8](repeating: UInt8(ascii: "x"), count: 16 * 1024)
        // Bounded even if the client never stops reading: 1 GiB at most.
        for _ in 0..<65_536 where !c.isStopped {
            guard c.write(block) else { return }
        }
    }

    /// A status line followed by `count` header fields with `valueBytes`-byte values, then a blank line.
    package static func hugeHead(fields count: Int, valueBytes: Int = 80) -> LoopbackHTTPBehavior {
        LoopbackHTTPBehavior { c in
            guard c.readRequest() != nil else { return }
            var text = "HTTP/1.1 200 OK\r\n"
            for i in 0..<count { text += "X-Filler-\(i): " + String(repeating: "y", count: valueBytes) + "\r\n" }
            c.write(text + "\r\n")
        }
    }

    /// Reads the request, then resets the connection (RST) without answering.
    package static let reset = LoopbackHTTPBehavior { c in
        c.readRequest()
        c.resetOnClose()
    }

    /// Builds an HTTP/1.1 response with `Content-Length` and `Connection: close`.
    package static func response(
        _ code: Int, _ reason: String, headers: [(String, String)], body: String, isHead: Bool = false
    ) -> String {
        var text = "HTTP/1.1 \(code) \(reason)\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if !headers.contains(where: {
            $0.0.lowercased() == "content-length" || $0.0.lowercased() == "transfer-encoding"
        }) {
            text += "Content-Length: \(body.utf8.count)\r\n"
        }
        text += "Connection: close\r\n\r\n"
        return isHead ? text : text + body
    }
}

extension LoopbackHTTPBehavior {
    /// A minimal forward proxy to loopback origins: `CONNECT 127.0.0.1:PORT` answers 200 and
    /// tunnels; an absolute-form request (`GET http://127.0.0.1:PORT/path`) is sent on in origin
    /// form and the answer copied back. With `credentials` ("user:password"), a request without
    /// the matching `Proxy-Authorization: Basic` gets 407. Anything else gets 400.
    package static func forwardProxy(credentials: String? = nil) -> LoopbackHTTPBehavior {
        LoopbackHTTPBehavior { c in
            guard let head = c.readRequest() else { return }
            var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
            let parts = lines[0].split(separator: " ").map(String.init)
            if let credentials {
                let wanted = "proxy-authorization: basic " + Base64.encode(Array(credentials.utf8)).lowercased()
                guard lines.contains(where: { $0.lowercased() == wanted }) else {
                    c.write(
                        "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"t\"\r\nContent-Length: 0\r\n\r\n"
                    )
                    return
                }
            }
            guard parts.count == 3 else {
                c.write("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                return
            }
            func hostPort(_ authority: Substring) -> (String, UInt16)? {
                guard let colon = authority.lastIndex(of: ":"),
                    let port = UInt16(authority[authority.index(after: colon)...])
                else { return nil }
                return (String(authority[..<colon]).trimmingCharacters(in: "[]"), port)
            }
            if parts[0] == "CONNECT", let (host, port) = hostPort(Substring(parts[1])) {
                c.write("HTTP/1.1 200 Connection established\r\n\r\n")
                c.splice(toHost: host, port: port, initial: [])
                return
            }
            guard parts[1].hasPrefix("http://"), let slash = parts[1].dropFirst(7).firstIndex(of: "/"),
                let (host, port) = hostPort(parts[1].dropFirst(7)[..<slash])
            else {
                c.write("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                return
            }
            lines[0] = "\(parts[0]) \(parts[1].dropFirst(7)[slash...]) \(parts[2])"
            lines.removeAll { $0.lowercased().hasPrefix("proxy-authorization:") }
            if !c.splice(toHost: host, port: port, initial: Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8))
            {
                c.write("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
            }
        }
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String {
        String(drop(while: set.contains).reversed().drop(while: set.contains).reversed())
    }
}
