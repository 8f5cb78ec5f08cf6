/// DNS over a byte stream: TCP (RFC 1035 §4.2.2, RFC 7766) and TLS (RFC 7858). One query per
/// connection, each message after a two-byte length; every step against the round's deadline,
/// its time added to `connect`, `tls` and `query`.
extension DNSProber {
    /// Largest framed message (the length prefix is 16 bits).
    package static let maxStreamMessage = 65_535

    // Long on purpose: connect, handshake, write, framed read and match, each failing its own way.
    package func queryStream(
        _ server: SocketAddress, tls: Bool, deadline: ContinuousClock.Instant, phases: inout [ProbePhase: Duration]
    ) async -> Outcome {
        let via = tls ? "TLS" : "TCP"
        let id = UInt16.random(in: 0...UInt16.max)
        guard let query = try? DNSMessage.encodeQuery(name: config.name, type: config.queryType, id: id) else {
            return .failed(ProbeFailure(.error, "cannot encode the query"))  // the config validated the name
        }
        var mark = ContinuousClock.now
        func lap(_ phase: ProbePhase) {
            let now = ContinuousClock.now
            phases[phase, default: .zero] += now - mark
            mark = now
        }
        let socket: StreamSocket
        do throws(StreamError) {
            socket = try await StreamSocket.connect(to: server, interface: config.interface, deadline: deadline)
        } catch {
            lap(.connect)
            return .failed(ProbeFailure(error, context: "\(via) connect"))
        }
        lap(.connect)
        var stream: any ByteStream = socket
        if tls {
            let serverName = config.tlsServerName ?? server.ip
            do throws(StreamError) {
                let context: TLSContext
                do throws(TLSContext.Failure) { context = try TLSContext.shared(config.tlsOptions) } catch {
                    return .failed(ProbeFailure(.tls, error.message))
                }
                let connection = try TLSConnection(over: socket, context: context, serverName: serverName)
                try await connection.handshake(deadline: deadline)
                stream = connection
                lap(.tls)
            } catch {
                lap(.tls)
                return .failed(ProbeFailure(error, context: "TLS handshake with \(serverName)"))
            }
        }
        let message: [UInt8]
        do throws(StreamError) {
            try await stream.write([UInt8(query.count >> 8), UInt8(query.count & 0xFF)] + query, deadline: deadline)
            guard let read = try await Self.readFramed(stream, deadline: deadline) else {
                lap(.query)
                return .failed(
                    ProbeFailure(.protocolError, "\(via): the server closed the connection before a whole reply"))
            }
            message = read
        } catch {
            lap(.query)
            return .failed(ProbeFailure(error, context: "\(via) query"))
        }
        lap(.query)
        var exchange = DNSExchange(id: id, name: config.name, type: config.queryType)
        switch exchange.consider(message) {
        case .answer(let response): return .response(response)
        case .malformed(let error): return .failed(ProbeFailure(.protocolError, "\(via): malformed reply: \(error)"))
        case .ignored:
            return .failed(
                ProbeFailure(.protocolError, "\(via): the reply does not answer the query (\(exchange.summary))"))
        }
    }

    /// One length-prefixed message; nil if the stream ends first. At most 2 + 65,535 bytes are read.
    package static func readFramed(_ stream: any ByteStream, deadline: ContinuousClock.Instant)
        async throws(StreamError)
        -> [UInt8]?
    {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        var length: Int?
        while true {
            if let length, received.count >= 2 + length { return Array(received[2..<(2 + length)]) }
            if length == nil, received.count >= 2 { length = Int(received[0]) << 8 | Int(received[1]) }
            if let length, received.count >= 2 + length { continue }
            let want = min(buffer.count, (length.map { 2 + $0 } ?? 2 + maxStreamMessage) - received.count)
            if buffer.count != want { buffer = [UInt8](repeating: 0, count: max(1, want)) }
            let n = try await stream.read(into: &buffer, deadline: deadline)
            if n == 0 { return nil }
            received.append(contentsOf: buffer[0..<n])
        }
    }
}
