import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

@Suite struct HTTPResponseParserTests {
    typealias Parser = HTTPResponseParser

    /// Feeds `text` in pieces of `split` bytes, then ends the stream if the parser still wants more.
    func parse(
        _ text: String, head: Bool = false, limits: Parser.Limits = .init(), split: Int = .max, atEOF: Bool = true
    ) throws(Parser.Failure) -> Parser {
        try parseBytes(Array(text.utf8), head: head, limits: limits, split: split, atEOF: atEOF)
    }

    func parseBytes(
        _ bytes: [UInt8], head: Bool = false, limits: Parser.Limits = .init(), split: Int = .max, atEOF: Bool = true
    ) throws(Parser.Failure) -> Parser {
        var parser = Parser(limits: limits, isHeadRequest: head)
        var i = 0
        while i < bytes.count {
            let end = i + min(split, bytes.count - i)
            if try parser.consume(bytes[i..<end]) == .complete { return parser }
            i = end
        }
        if atEOF { try parser.finish() }
        return parser
    }

    @Test func noContentCompletesWithoutEOF() throws {
        let p = try parse("HTTP/1.1 204 No Content\r\nServer: x\r\n\r\n", atEOF: false)
        #expect(p.isComplete)
        #expect(p.head?.status == 204)
        #expect(p.head?.reasonPhrase == "No Content")
        #expect(p.head?.value(of: "server") == "x")
        #expect(p.body.isEmpty)
    }

    @Test(arguments: [1, 2, 3, 5, 7, 64, Int.max])
    func contentLengthBodyAtAnySplit(split: Int) throws {
        let p = try parse("HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\nSuccessTRAILING", split: split, atEOF: false)
        #expect(p.isComplete)
        #expect(String(decoding: p.body, as: UTF8.self) == "Success")
        #expect(!p.bodyTruncated)
    }

    @Test(arguments: [1, 2, 3, 4, 9, Int.max])
    func chunkedBodyWithExtensionsAndTrailers(split: Int) throws {
        let text =
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
            + "3;name=value\r\nSuc\r\n4\r\ncess\r\n0\r\nX-Trailer: 1\r\n\r\n"
        let p = try parse(text, split: split, atEOF: false)
        #expect(p.isComplete)
        #expect(String(decoding: p.body, as: UTF8.self) == "Success")
    }

    @Test func readToCloseNeedsEOF() throws {
        var p = Parser(isHeadRequest: false)
        #expect(try p.consume(Array("HTTP/1.0 200 OK\r\n\r\nhello".utf8)[...]) == .needMore)
        try p.finish()
        #expect(p.isComplete)
        #expect(p.body == Array("hello".utf8))
    }

    @Test func headRequestIgnoresContentLength() throws {
        let p = try parse("HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n", head: true, atEOF: false)
        #expect(p.isComplete)
        #expect(p.body.isEmpty)
    }

    @Test func interimResponsesAreSkipped() throws {
        let p = try parse("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n", atEOF: false)
        #expect(p.head?.status == 204)
        #expect(p.isComplete)
    }

    @Test func bareLineFeedsAndFoldedFields() throws {
        let p = try parse("HTTP/1.1 200 OK\nX-Long: a\n  b\nContent-Length: 2\n\nok", atEOF: false)
        #expect(p.head?.value(of: "X-Long") == "a b")
        #expect(p.body == Array("ok".utf8))
    }

    @Test(arguments: ["SSH-2.0-OpenSSH_9.2p1\r\n", "\u{16}\u{03}\u{01}\u{02}\u{00}", "<html>"])
    func garbageFailsAfterFiveBytes(garbage: String) {
        var p = Parser(isHeadRequest: false)
        #expect(throws: Parser.Failure.self) { _ = try p.consume(Array(garbage.utf8).prefix(5)) }
    }

    @Test(arguments: [
        "HTTP/2 200 OK\r\n\r\n", "HTTP/1.1 2000 OK\r\n\r\n", "HTTP/1.1 OK\r\n\r\n", "HTTP/1.1 099 x\r\n\r\n",
    ])
    func badStatusLines(line: String) {
        #expect { _ = try parse(line) } throws: {
            ($0 as? Parser.Failure).map { if case .malformed = $0 { true } else { false } } ?? false
        }
    }

    @Test func headLimitBoundsAnEndlessHeaderLine() throws {
        var p = Parser(limits: .init(headBytes: 1024), isHeadRequest: false)
        #expect(try p.consume(Array("HTTP/1.1 200 OK\r\nX: ".utf8)[...]) == .needMore)
        let filler = [UInt8](repeating: 0x61, count: 512)
        #expect(throws: Parser.Failure.headTooLarge(limit: 1024)) {
            for _ in 0..<4 { _ = try p.consume(filler[...]) }
        }
    }

    @Test func fieldCountLimit() {
        let text = "HTTP/1.1 200 OK\r\n" + (0..<11).map { "X-\($0): v\r\n" }.joined() + "\r\n"
        #expect(throws: Parser.Failure.tooManyFields(limit: 10)) { _ = try parse(text, limits: .init(fieldCount: 10)) }
        #expect(throws: Never.self) { _ = try parse(text, limits: .init(fieldCount: 11)) }
    }

    @Test func contentLengthRules() throws {
        #expect(try parse("HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\nok").body.count == 2)
        #expect(throws: Parser.Failure.self) {
            _ = try parse("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok")
        }
        #expect(throws: Parser.Failure.self) { _ = try parse("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n") }
        #expect(throws: Parser.Failure.self) {
            _ = try parse("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n")
        }
    }

    @Test func bodyLimitTruncatesEveryFraming() throws {
        let limits = Parser.Limits(bodyBytes: 10)
        let long = String(repeating: "z", count: 100)
        for text in [
            "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + long,
            "HTTP/1.1 200 OK\r\n\r\n" + long,
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n64\r\n" + long,
        ] {
            let p = try parse(text, limits: limits, split: 7, atEOF: false)
            #expect(p.isComplete, "\(text.prefix(40))")
            #expect(p.bodyTruncated)
            #expect(p.body.count == 10)
        }
        // The excess and the body's end in one read: still truncated.
        let whole = try parse("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + long, limits: limits, atEOF: false)
        #expect(whole.isComplete && whole.bodyTruncated && whole.body.count == 10)
        let exact = try parse("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789", limits: limits, atEOF: false)
        #expect(exact.isComplete && !exact.bodyTruncated)
    }

    @Test func earlyEndOfStream() {
        #expect(throws: Parser.Failure.truncated("connection closed before any response")) { _ = try parse("") }
        #expect(throws: Parser.Failure.truncated("connection closed inside the response head")) {
            _ = try parse("HTTP/1.1 200 OK\r\n")
        }
        #expect(throws: Parser.Failure.truncated("connection closed 3 bytes before the end of the body")) {
            _ = try parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab")
        }
        #expect(throws: Parser.Failure.truncated("connection closed inside the chunked body")) {
            _ = try parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab")
        }
    }

    @Test func chunkFramingErrors() {
        let base = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        #expect(throws: Parser.Failure.self) { _ = try parse(base + "zz\r\n") }
        #expect(throws: Parser.Failure.self) { _ = try parse(base + "+5\r\nabcde\r\n0\r\n\r\n") }
        #expect(throws: Parser.Failure.self) { _ = try parse(base + "2\r\nabc\r\n0\r\n\r\n") }
        #expect(throws: Parser.Failure.self) { _ = try parse(base + String(repeating: "1", count: 2000)) }
    }

    @Test func invalidHeaderNames() {
        #expect(throws: Parser.Failure.self) { _ = try parse("HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n") }
        #expect(throws: Parser.Failure.self) { _ = try parse("HTTP/1.1 200 OK\r\nno colon here\r\n\r\n") }
    }

    @Test func unknownTransferCodingReadsToClose() throws {
        var p = Parser(isHeadRequest: false)
        #expect(
            try p.consume(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 1\r\n\r\nabc".utf8)[...])
                == .needMore)
        try p.finish()
        #expect(p.body.count == 3)
    }
}
