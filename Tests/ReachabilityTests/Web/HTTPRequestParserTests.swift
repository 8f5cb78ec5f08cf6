import Foundation
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

@Suite struct HTTPRequestParserTests {
    let parser = HTTPRequestParser()

    func parse(_ s: String) -> HTTPRequestParser.Outcome { parser.parse(Array(s.utf8)[...]) }

    @Test func simpleGet() throws {
        let text = "GET /metrics?x=1&y=a%20b HTTP/1.1\r\nHost: h\r\nAccept: text/plain\r\n\r\n"
        guard case .request(let r, let consumed) = parse(text + "GET /next") else {
            Issue.record("not parsed")
            return
        }
        #expect(r.method == "GET" && r.path == "/metrics" && r.version == "HTTP/1.1")
        #expect(r.query == ["x": "1", "y": "a b"])
        #expect(r.header("ACCEPT") == "text/plain")
        #expect(r.keepAlive)
        #expect(consumed == text.utf8.count)
    }

    @Test func pipelinedRequestsConsumeOneAtATime() {
        let two = "GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.0\r\n\r\n"
        guard case .request(let a, let n) = parse(two) else {
            Issue.record("first not parsed")
            return
        }
        #expect(a.path == "/a")
        guard case .request(let b, _) = parser.parse(Array(two.utf8)[n...]) else {
            Issue.record("second not parsed")
            return
        }
        #expect(b.path == "/b" && !b.keepAlive)
    }

    @Test func bodyIsConsumedWithTheRequest() {
        guard case .request(_, let n) = parse("POST /-/reload HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET") else {
            Issue.record("not parsed")
            return
        }
        #expect(n == "POST /-/reload HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc".utf8.count)
        #expect(parse("POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc") == .incomplete)
    }

    @Test func repeatedEqualContentLengthsAreOneLength() {
        let text = "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3, 3\r\n\r\nabc"
        guard case .request(_, let n) = parse(text) else {
            Issue.record("not parsed")
            return
        }
        #expect(n == text.utf8.count)
    }

    @Test func expectContinueIsAskedForOnlyBeforeTheBody() {
        let head = "POST /-/reload HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n"
        #expect(parse(head) == .continueBody)
        #expect(parse(head + "a") == .incomplete)
        guard case .request = parse(head + "ab") else {
            Issue.record("not parsed with its body")
            return
        }
        // HTTP/1.0 has no interim responses; without a body there is nothing to wait for.
        #expect(parse(head.replacingOccurrences(of: "HTTP/1.1", with: "HTTP/1.0")) == .incomplete)
        guard case .request = parse("GET / HTTP/1.1\r\nExpect: 100-continue\r\n\r\n") else {
            Issue.record("a request without a body waits")
            return
        }
    }

    static let rejectionCases: [Case] = [
        ("GET / HTTP/1.1\r\nHost: x\r\n", "incomplete"),
        ("GET /", "incomplete"),
        ("\u{1}\u{2}garbage\r\n\r\n", "400"),
        ("GET  / HTTP/1.1\r\n\r\n", "400"),
        ("GET / HTTP/2.0\r\n\r\n", "505"),
        ("GET / FOO\r\n\r\n", "400"),
        ("GET / HTTP/1.1\r\nNoColon\r\n\r\n", "400"),
        ("GET / HTTP/1.1\r\nBad Name: v\r\n\r\n", "400"),
        ("GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", "400"),
        ("GET / HTTP/1.1\r\nContent-Length: 999999999\r\n\r\n", "413"),
        ("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", "501"),
        ("GET /" + String(repeating: "a", count: 9000) + " HTTP/1.1\r\n\r\n", "414"),
        ("GET /" + String(repeating: "a", count: 9000), "414"),
        ("GET / HTTP/1.1\r\nX: " + String(repeating: "b", count: 20000) + "\r\n\r\n", "431"),
        ("GET / HTTP/1.1\r\n" + String(repeating: "X: y\r\n", count: 101) + "\r\n", "431"),
        // RFC 9112 §6.3: Content-Length is digits, and every value the same (request smuggling).
        ("POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 5\r\n\r\nabcde", "400"),
        ("POST / HTTP/1.1\r\nContent-Length: 3, 5\r\n\r\nabcde", "400"),
        ("POST / HTTP/1.1\r\nContent-Length: +3\r\n\r\nabc", "400"),
        ("POST / HTTP/1.1\r\nContent-Length: 0x3\r\n\r\nabc", "400"),
        ("POST / HTTP/1.1\r\nContent-Length: \r\n\r\n", "400"),
        ("POST / HTTP/1.1\r\nContent-Length: 3 3\r\n\r\nabc", "400"),
        ("POST /-/reload HTTP/1.1\r\nHost: evil\r\nhost: 127.0.0.1\r\n\r\n", "400"),
        ("GET / HTTP/1.1\r\nX: " + String(repeating: "b", count: 30000), "431"),
    ].map(Case.init)

    @Test(arguments: rejectionCases)
    func rejections(_ c: Case) {
        let (input, expected) = (c.input, c.expected)
        switch parse(input) {
        case .incomplete: #expect(expected == "incomplete")
        case .continueBody: #expect(expected == "continue")
        case .request(let r, _): Issue.record("accepted \(r.method) \(r.target.prefix(20)), expected \(expected)")
        case .reject(let status, _): #expect(String(status) == expected)
        }
    }

    @Test func randomBytesNeverCrash() {
        var rng = SplitMix64(seed: 42)
        for _ in 0..<2000 {
            let n = Int(rng.next() % 300)
            var bytes = (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            if rng.next() % 2 == 0 { bytes = Array("GET / HTTP/1.1\r\n".utf8) + bytes + Array("\r\n\r\n".utf8) }
            _ = parser.parse(bytes[...])
        }
    }
}

/// A table row whose test description stays one short line, however long its input.
struct Case: Sendable, CustomTestStringConvertible {
    let input: String
    let expected: String
    init(_ row: (String, String)) { (input, expected) = row }
    var testDescription: String {
        let head = input.prefix(24).unicodeScalars.map { $0.value < 0x20 ? "." : String($0) }.joined()
        return "\(head)…(\(input.utf8.count) bytes) → \(expected)"
    }
}

/// The parser resumes where it stopped (#41: a head of 15.6 KB re-parsed at every byte of a
/// trickled body pinned 1.45 cores for 1,000 clients).
@Suite struct HTTPRequestParserResumeTests {
    static let head =
        "POST /-/reload HTTP/1.1\r\nHost: h\r\n"
        + (0..<15).map { "X-Filler-\($0): " + String(repeating: "f", count: 1000) + "\r\n" }.joined()
        + "Content-Length: 64\r\n\r\n"

    /// Fed a byte at a time, a request is found as a whole parse finds it, and the head-end
    /// search looks at each byte about once: O(n), not O(n²).
    @Test func aTrickledHeadAndBodyAreScannedOnce() throws {
        let request = Array((Self.head + String(repeating: "b", count: 64)).utf8)
        let headBytes = Self.head.utf8.count
        #expect(headBytes > 15_000)
        let parser = HTTPRequestParser()
        var progress = HTTPRequestParser.Progress()
        var buffer: [UInt8] = []
        var outcomes: [HTTPRequestParser.Outcome] = []
        for byte in request {
            buffer.append(byte)
            let scannedBefore = progress.scannedBytes
            let outcome = parser.parse(buffer[...], resuming: &progress)
            if case .request = outcome {
                outcomes.append(outcome)
            } else {
                #expect(outcome == .incomplete)
                // One byte in, at most one byte (plus the few held for lookahead) looked at.
                #expect(progress.scannedBytes - scannedBefore <= 3)
            }
            if buffer.count == headBytes { #expect(progress.scannedBytes <= headBytes) }
        }
        #expect(outcomes.count == 1)
        #expect(outcomes.first == parser.parse(request[...]))
        guard case .request(let r, let consumed) = try #require(outcomes.first) else { return }
        #expect(r.header("x-filler-14")?.count == 1000)
        #expect(consumed == request.count)
    }

    /// Resuming gives the same outcome as parsing the whole buffer, for every split of every
    /// rejection case and of a pipelined pair.
    @Test(arguments: HTTPRequestParserTests.rejectionCases + [Case(("GET /a HTTP/1.1\r\n\r\nGET /b", "200"))])
    func resumingAgreesWithAWholeParse(_ c: Case) {
        let bytes = Array(c.input.utf8)
        let parser = HTTPRequestParser()
        let whole = parser.parse(bytes[...])
        for cut in stride(from: 0, through: bytes.count, by: max(1, bytes.count / 50)) {
            var progress = HTTPRequestParser.Progress()
            let first = parser.parse(bytes[..<cut], resuming: &progress)
            if case .reject = first {
                #expect(first == whole, "cut at \(cut)")
                continue
            }
            if case .request = first { continue }
            #expect(parser.parse(bytes[...], resuming: &progress) == whole, "cut at \(cut)")
        }
    }

    /// Empty lines before a request are tolerated (RFC 9112 §2.2), but not without end.
    @Test func emptyLinesBeforeARequestAreBounded() {
        let parser = HTTPRequestParser()
        guard case .request(let r, _) = parser.parse(Array("\r\n\r\nGET / HTTP/1.1\r\n\r\n".utf8)[...]) else {
            Issue.record("not parsed")
            return
        }
        #expect(r.path == "/")
        let endless = Array(String(repeating: "\r\n", count: 5000).utf8)
        guard case .reject(400, _) = parser.parse(endless[...]) else {
            Issue.record("endless empty lines accepted")
            return
        }
    }
}
