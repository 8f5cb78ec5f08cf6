/// A conversation over one TCP connection, as a blackbox_exporter `tcp` module's
/// `query_response` holds it: TLS from the first byte (`tls`), then steps in order, each of
/// `expect` (read lines until one matches the pattern; its groups feed `${1}`… in `send`),
/// `expect_bytes` (the next bytes must be these), `send` (the text and `\n`, as blackbox adds it)
/// and `starttls` (upgrade the connection to TLS). Every step must succeed, by the round's deadline.
///
/// What it proves: a server spoke the protocol the steps describe. With TLS and a verified
/// certificate the answers came from the name's holder; without, an on-path box that speaks the
/// protocol (a transparent SMTP proxy) could give the same answers.
package struct TCPDialog: Sendable, Equatable {
    package struct Step: Sendable, Equatable {
        package var expect: String?
        package var expectBytes: [UInt8]?
        package var send: String?
        package var startTLS = false
        package init(expect: String? = nil, expectBytes: [UInt8]? = nil, send: String? = nil, startTLS: Bool = false) {
            self.expect = expect
            self.expectBytes = expectBytes
            self.send = send
            self.startTLS = startTLS
        }
    }

    package var steps: [Step] = []
    /// TLS from the first byte.
    package var tls = false
    /// The TLS name (SNI and certificate); nil: the target's host.
    package var serverName: String?
    package var caFile: String?
    package var insecureSkipVerify = false

    package init() {}

    /// The longest line an `expect` reads (blackbox's scanner buffer).
    package static let lineLimit = 64 << 10

    /// What a failed step says: why, and whether a pattern failed on what the server sent
    /// (`probe_failed_due_to_regex`), not a timeout or a closed connection before it.
    package struct Failure: Error {
        package var reason: FailureReason
        package var message: String
    }

    /// Runs the conversation over `socket` (connected to `host`), filling the TLS details of `result`.
    package func run(_ socket: StreamSocket, host: String, deadline: ContinuousClock.Instant, result: inout ProbeResult)
        async throws(Failure)
    {
        var stream: any ByteStream = socket
        var pending: [UInt8] = []
        if tls { stream = try await handshake(socket, host: host, deadline: deadline, result: &result) }
        for (i, step) in steps.enumerated() {
            var groups: [String] = []
            if let expect = step.expect {
                groups = try await expectLine(expect, stream, &pending, deadline: deadline, step: i)
            }
            if let wanted = step.expectBytes {
                let got = try await readBytes(wanted.count, stream, &pending, deadline: deadline, step: i)
                guard got == wanted else {
                    throw Failure(reason: .bannerMismatch, message: "step \(i + 1): the bytes \(got) are not \(wanted)")
                }
            }
            if let send = step.send {
                do throws(StreamError) {
                    try await stream.write(Array((Self.expand(send, groups) + "\n").utf8), deadline: deadline)
                } catch {
                    throw Failure(
                        reason: ProbeFailure(error, context: "").reason, message: "step \(i + 1): sending: \(error)")
                }
            }
            if step.startTLS {
                stream = try await handshake(socket, host: host, deadline: deadline, result: &result)
                pending = []
            }
        }
    }

    private func handshake(
        _ socket: StreamSocket, host: String, deadline: ContinuousClock.Instant, result: inout ProbeResult
    ) async throws(Failure) -> any ByteStream {
        let name = serverName ?? host
        let context: TLSContext
        do throws(TLSContext.Failure) {
            context = try TLSContext.shared(TLSContext.Options(caFile: caFile, insecureSkipVerify: insecureSkipVerify))
        } catch { throw Failure(reason: .tls, message: error.message) }
        var connection: TLSConnection?
        do throws(StreamError) {
            let c = try TLSConnection(over: socket, context: context, serverName: name)
            connection = c
            try await c.handshake(deadline: deadline)
            var detail = result.http ?? HTTPDetail()
            detail.tlsVersion = c.summary.version
            detail.tlsCipher = c.summary.cipher
            detail.certificateNotAfter = c.summary.certificateNotAfter
            result.http = detail
            return c
        } catch {
            let f = ProbeFailure(error, context: "TLS handshake with \(name)")
            if let notAfter = connection?.summary.certificateNotAfter {
                var detail = result.http ?? HTTPDetail()
                detail.certificateNotAfter = notAfter
                result.http = detail
            }
            throw Failure(reason: f.reason, message: f.message)
        }
    }

    /// Reads lines until one matches `pattern`; its capture groups (`${1}`…).
    private func expectLine(
        _ pattern: String, _ stream: any ByteStream, _ pending: inout [UInt8], deadline: ContinuousClock.Instant,
        step: Int
    ) async throws(Failure) -> [String] {
        guard let regex = try? RegexPattern(pattern) else {
            throw Failure(reason: .bannerMismatch, message: "step \(step + 1): /\(pattern)/ is not a pattern")
        }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            while let newline = pending.firstIndex(of: 0x0A) {
                var line = Array(pending[..<newline])
                pending.removeSubrange(...newline)
                if line.last == 0x0D { line.removeLast() }
                let text = String(decoding: line, as: UTF8.self)
                if let groups = regex.captures(in: text) { return groups }
            }
            guard pending.count < Self.lineLimit else {
                throw Failure(reason: .bannerMismatch, message: "step \(step + 1): a line longer than 64 KiB")
            }
            let n: Int
            do throws(StreamError) { n = try await stream.read(into: &buffer, deadline: deadline) } catch {
                let f = ProbeFailure(error, context: "step \(step + 1): waiting for /\(pattern)/")
                throw Failure(reason: f.reason, message: f.message)
            }
            if n == 0 {
                // The last line without its newline counts too (bufio.Scanner's final token).
                if !pending.isEmpty {
                    let text = String(decoding: pending, as: UTF8.self)
                    pending = []
                    if let groups = regex.captures(in: text) { return groups }
                }
                throw Failure(
                    reason: .bannerMismatch,
                    message: "step \(step + 1): the server closed the connection before /\(pattern)/")
            }
            pending += buffer[..<n]
        }
    }

    private func readBytes(
        _ count: Int, _ stream: any ByteStream, _ pending: inout [UInt8], deadline: ContinuousClock.Instant, step: Int
    ) async throws(Failure) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: max(count, 1))
        while pending.count < count {
            let n: Int
            do throws(StreamError) { n = try await stream.read(into: &buffer, deadline: deadline) } catch {
                let f = ProbeFailure(error, context: "step \(step + 1): waiting for \(count) bytes")
                throw Failure(reason: f.reason, message: f.message)
            }
            if n == 0 { break }
            pending += buffer[..<n]
        }
        let got = Array(pending.prefix(count))
        pending.removeFirst(got.count)
        return got
    }

    /// `${1}`, `$1`… replaced by the groups of the step's match (blackbox's `Regexp.Expand`).
    package static func expand(_ template: String, _ groups: [String]) -> String {
        var out = ""
        var i = template.startIndex
        while i < template.endIndex {
            let c = template[i]
            guard c == "$" else {
                out.append(c)
                i = template.index(after: i)
                continue
            }
            var j = template.index(after: i)
            let braced = j < template.endIndex && template[j] == "{"
            if braced { j = template.index(after: j) }
            let digits = template[j...].prefix { $0.isASCII && $0.isNumber }
            var end = template.index(j, offsetBy: digits.count)
            if braced {
                guard end < template.endIndex, template[end] == "}" else {
                    out.append(c)
                    i = template.index(after: i)
                    continue
                }
                end = template.index(after: end)
            }
            guard let n = Int(digits) else {
                out.append(c)
                i = template.index(after: i)
                continue
            }
            out += n < groups.count ? groups[n] : ""
            i = end
        }
        return out
    }
}
