/// One HTTP/1.1 request and response over a fresh connection (`Connection: close`): resolve,
/// connect to each address in turn, TLS for https, send, read the bounded response. Every step
/// runs against the round's single deadline and records its phase in the trace.
///
/// Not for: judging the answer or following redirects (that is `HTTPProber`).
package struct HTTPExchange {
    /// What came back.
    package struct Response {
        package var head: HTTPResponseHead
        package var body: [UInt8]
        package var bodyTruncated: Bool
    }

    package let url: ProbeURL
    package let method: HTTPProbeConfig.Method
    /// Host header value.
    package let hostHeader: String
    /// SNI and certificate name for https.
    package let serverName: String
    /// How to connect and what to send beside the request line.
    package let client: HTTPClientSettings
    /// Whether the configured credential headers (`HTTPProbeConfig.credentialHeaders`) go with
    /// this request: false once a redirect has left the first URL's origin.
    package var sendsCredentials = true
    /// The request body (with `Content-Length`); empty for GET and HEAD.
    package var body: [UInt8] = []

    /// The proxy this hop goes through, if any.
    package var proxy: HTTPProxy? { client.proxy.proxy(for: url) }

    package func run(deadline: ContinuousClock.Instant, trace: inout HTTPRoundTrace) async throws(ProbeFailure)
        -> Response
    {
        let proxy = self.proxy
        let socket: StreamSocket
        if let proxy {
            do throws(ProbeFailure) {
                socket = try await connect(
                    host: proxy.endpoint.host, port: proxy.endpoint.port, deadline: deadline, trace: &trace)
            } catch {
                let reason: FailureReason = error.reason == .dns ? .dns : .proxyRefused
                throw ProbeFailure(reason, "proxy \(proxy): \(error.message)")
            }
            // The origin is behind the proxy: the address reached is the proxy's, not the target's;
            // the result still belongs to the family the proxy was reached over.
            trace.proxyFamily = trace.address?.ipFamily
            trace.address = nil
            if url.scheme == .https {
                try await tunnel(through: proxy, over: socket, deadline: deadline, trace: &trace)
            }
        } else {
            socket = try await connect(host: url.host, port: url.port, deadline: deadline, trace: &trace)
        }
        var stream: any ByteStream = socket
        if url.scheme == .https {
            stream = try await handshake(over: socket, deadline: deadline, trace: &trace)
        }
        trace.begin(.processing)
        do throws(StreamError) {
            try await stream.write(requestBytes(), deadline: deadline)
        } catch {
            throw ProbeFailure(error, context: "sending the request")
        }
        let response = try await readResponse(from: stream, deadline: deadline, trace: &trace)
        if let proxy, url.scheme == .http { try Self.checkProxied(response.head, proxy: proxy) }
        return response
    }

    /// A plain-HTTP answer through a proxy: 407 and the gateway errors are the proxy's own.
    package static func checkProxied(_ head: HTTPResponseHead, proxy: HTTPProxy) throws(ProbeFailure) {
        switch head.status {
        case 407:
            throw ProbeFailure(
                .proxyAuth,
                "proxy \(proxy): \(head.statusLine)\(proxy.username == nil ? " (no credentials in the proxy URL)" : " (credentials refused)")"
            )
        case 502, 503, 504:
            throw ProbeFailure(.proxyStatus, "proxy \(proxy): \(head.statusLine): the proxy could not reach the origin")
        default:
            return
        }
    }

    /// `CONNECT host:port` and the proxy's answer: 2xx opens the tunnel; 407 is `proxy_auth`,
    /// anything else `proxy_status`. The head is read with a HEAD-style parser (no body follows
    /// a 2xx; a refusal's body is not needed).
    private func tunnel(
        through proxy: HTTPProxy, over socket: StreamSocket, deadline: ContinuousClock.Instant,
        trace: inout HTTPRoundTrace
    ) async throws(ProbeFailure) {
        trace.begin(.proxy)
        let authority = "\(url.bracketedHost):\(url.port)"
        var text = "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\nUser-Agent: \(client.userAgent)\r\n"
        if let authorization = proxy.authorization { text += "Proxy-Authorization: \(authorization)\r\n" }
        text += "\r\n"
        var parser = HTTPResponseParser(limits: .init(bodyBytes: 0), isHeadRequest: true)
        var buffer = [UInt8](repeating: 0, count: 4096)
        func streamFailure(_ error: StreamError) -> ProbeFailure {
            let failure = ProbeFailure(error, context: "proxy \(proxy): CONNECT \(authority)")
            return ProbeFailure(failure.reason == .timeout ? .timeout : .proxyStatus, failure.message)
        }
        do throws(StreamError) { try await socket.write(Array(text.utf8), deadline: deadline) } catch {
            throw streamFailure(error)
        }
        while true {
            let n: Int
            do throws(StreamError) { n = try await socket.read(into: &buffer, deadline: deadline) } catch {
                throw streamFailure(error)
            }
            do throws(HTTPResponseParser.Failure) {
                if n == 0 {
                    try parser.finish()
                    break
                }
                if try parser.consume(buffer[0..<n]) == .complete { break }
            } catch {
                throw ProbeFailure(.proxyStatus, "proxy \(proxy): CONNECT \(authority): \(error)")
            }
        }
        guard let head = parser.head else {
            throw ProbeFailure(
                .proxyStatus, "proxy \(proxy): closed the connection without answering CONNECT \(authority)")
        }
        switch head.status {
        case 200...299:
            return
        case 407:
            throw ProbeFailure(
                .proxyAuth,
                "proxy \(proxy): CONNECT \(authority): \(head.statusLine)\(proxy.username == nil ? " (no credentials in the proxy URL)" : " (credentials refused)")"
            )
        default:
            throw ProbeFailure(.proxyStatus, "proxy \(proxy): CONNECT \(authority): \(head.statusLine)")
        }
    }

    private func connect(host: String, port: UInt16, deadline: ContinuousClock.Instant, trace: inout HTTPRoundTrace)
        async throws(ProbeFailure) -> StreamSocket
    {
        trace.begin(.resolve)
        let addresses: [SocketAddress]
        do throws(Resolver.Failure) {
            addresses = try await Resolver.resolve(host, port: port, family: client.family, deadline: deadline)
        } catch {
            throw ProbeFailure(.dns, error.message)
        }
        trace.begin(.connect)
        var failures: [String] = []
        var lastError = StreamError.timedOut
        for (i, address) in addresses.enumerated() {
            let now = trace.clock.now
            guard now < deadline else { break }
            // Leave later addresses a fair share of what is left, so one black hole cannot eat it all.
            let left = addresses.count - i
            let attemptDeadline = left > 1 ? now + now.duration(to: deadline) / left : deadline
            trace.address = address
            do throws(StreamError) {
                return try await StreamSocket.connect(
                    to: address, interface: client.interface, deadline: attemptDeadline)
            } catch {
                lastError = error
                failures.append("\(address): \(error)")
                if error == .cancelled { break }
            }
        }
        let context = failures.isEmpty ? "connecting to \(host)" : "connecting"
        var failure = ProbeFailure(lastError, context: context)
        if failures.count > 0 {
            failure = ProbeFailure(failure.reason, "connecting: " + failures.joined(separator: "; "))
        }
        throw failure
    }

    private func handshake(over socket: StreamSocket, deadline: ContinuousClock.Instant, trace: inout HTTPRoundTrace)
        async throws(ProbeFailure) -> TLSConnection
    {
        trace.begin(.tls)
        let context: TLSContext
        do throws(TLSContext.Failure) {
            context = try TLSContext.shared(client.tlsOptions)
        } catch {
            throw ProbeFailure(.tls, error.message)
        }
        var tls: TLSConnection?
        do throws(StreamError) {
            let connection = try TLSConnection(over: socket, context: context, serverName: serverName)
            tls = connection
            try await connection.handshake(deadline: deadline)
            trace.detail.tlsVersion = connection.summary.version
            trace.detail.tlsCipher = connection.summary.cipher
            trace.detail.certificateNotAfter = connection.summary.certificateNotAfter
            return connection
        } catch {
            // A refused certificate still tells when it expires.
            trace.detail.certificateNotAfter = tls?.summary.certificateNotAfter
            throw ProbeFailure(error, context: "TLS handshake with \(serverName)")
        }
    }

    private func readResponse(
        from stream: any ByteStream, deadline: ContinuousClock.Instant, trace: inout HTTPRoundTrace
    ) async throws(ProbeFailure) -> Response {
        var parser = HTTPResponseParser(limits: .init(bodyBytes: client.bodyLimit), isHeadRequest: method == .head)
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var sawFirstByte = false
        while true {
            let n: Int
            do throws(StreamError) {
                n = try await stream.read(into: &buffer, deadline: deadline)
            } catch {
                throw ProbeFailure(error, context: sawFirstByte ? "reading the response" : "waiting for the response")
            }
            if !sawFirstByte {
                sawFirstByte = true
                trace.begin(.transfer)
            }
            do throws(HTTPResponseParser.Failure) {
                if n == 0 {
                    try parser.finish()
                    break
                }
                if try parser.consume(buffer[0..<n]) == .complete { break }
            } catch {
                throw ProbeFailure(error)
            }
        }
        trace.closeOpenPhase()
        guard let head = parser.head else { throw ProbeFailure(.protocolError, "no response head") }
        return Response(head: head, body: parser.body, bodyTruncated: parser.bodyTruncated)
    }

    /// The request head: method, target (absolute form through a plain-HTTP proxy, with its
    /// credentials), Host, User-Agent, Accept, `Cache-Control: no-cache` and `Pragma: no-cache`,
    /// Connection: close, extras (without the credential headers once a redirect left the origin).
    ///
    /// No cache may answer for the internet: with `no-cache` a compliant cache (a transparent
    /// proxy on the router, an ISP cache) must ask the origin before it answers, so with the
    /// uplink down it fails (squid answers 503) instead of serving its copy; `Pragma` for
    /// HTTP/1.0 caches. A response that still comes from a cache is not voided by its headers
    /// (`Age`, `X-Cache`): a CDN's edge answering is the internet too, and nothing in the headers
    /// tells it from a cache on the local network. An operator's own `Cache-Control` or
    /// `Pragma` header replaces these.
    package func requestBytes() -> [UInt8] {
        let proxy = url.scheme == .http ? self.proxy : nil
        let target = proxy == nil ? url.target : "http://\(url.authority)\(url.target)"
        var text = "\(method.rawValue) \(target) HTTP/1.1\r\nHost: \(hostHeader)\r\n"
        if let authorization = proxy?.authorization { text += "Proxy-Authorization: \(authorization)\r\n" }
        let extras = Set(client.headers.map { $0.name.lowercased() })
        if !extras.contains("user-agent") { text += "User-Agent: \(client.userAgent)\r\n" }
        if !extras.contains("accept") { text += "Accept: */*\r\n" }
        if !extras.contains("cache-control") { text += "Cache-Control: no-cache\r\n" }
        if !extras.contains("pragma") { text += "Pragma: no-cache\r\n" }
        text += "Connection: close\r\n"
        if !method.isSafe { text += "Content-Length: \(body.count)\r\n" }
        for header in client.headers
        where sendsCredentials || !HTTPProbeConfig.isCredentialHeader(header.name) {
            text += "\(header.name): \(header.value)\r\n"
        }
        text += "\r\n"
        return Array(text.utf8) + body
    }
}
