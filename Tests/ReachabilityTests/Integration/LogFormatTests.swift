import Foundation
import Glibc
import ReachabilityTestSupport
import Testing

/// The built binary's logs, read back as a log shipper reads them: promslog's keys first
/// (`time`, `level`, `source`, `msg`), logfmt that parses whole, JSON whose numbers are numbers.
@Suite(.serialized) struct LogFormatTests {
    /// Runs the exporter at debug level until its first round is logged, then stops it.
    private func logs(format: String) throws -> [Substring] {
        let exporter = try ExporterProcess([
            "--web.listen-address=127.0.0.1:0", "--log.level=debug", "--log.format=\(format)",
            "--probe.tcp=127.0.0.1:9", "--probe.interval=1s", "--probe.timeout=500ms",
        ])
        try exporter.waitListening()
        try exporter.waitForLog(format == "json" ? "\"msg\":\"round\"" : "msg=round ")
        #expect(try exporter.stop(signal: SIGTERM).status == 0)
        let lines = exporter.stderr.split(separator: "\n")
        #expect(lines.count >= 4)
        return lines
    }

    @Test func logfmtLinesParseWhole() throws {
        var sawRound = false
        for line in try logs(format: "logfmt") {
            let pairs = try #require(Self.logfmt(line), "not logfmt: \(line)")
            #expect(pairs.prefix(4).map(\.key) == ["time", "level", "source", "msg"], "\(line)")
            #expect(["DEBUG", "INFO", "WARN", "ERROR"].contains(pairs[1].value), "\(line)")
            #expect(pairs[2].value.wholeMatch(of: /[A-Za-z+]+\.swift:[0-9]+/) != nil, "\(line)")
            #expect(pairs[0].value.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil, "\(line)")
            if pairs[3].value == "round" {
                sawRound = true
                let n = try #require(pairs.first { $0.key == "n" })
                #expect(Int(n.value) != nil)
            }
        }
        #expect(sawRound)
    }

    @Test func jsonLinesHaveTypedValues() throws {
        var sawRound = false
        var sawShutdown = false
        for line in try logs(format: "json") {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
            let record = try #require(object as? [String: Any], "not a JSON object: \(line)")
            #expect(record["time"] is String && record["source"] is String, "\(line)")
            #expect(["DEBUG", "INFO", "WARN", "ERROR"].contains(record["level"] as? String ?? ""), "\(line)")
            #expect(String(line).hasPrefix("{\"time\":"), "\(line)")
            if record["msg"] as? String == "round" {
                sawRound = true
                // Numbers, not strings holding numbers; a string is not an NSNumber.
                #expect(record["n"] is NSNumber && !(record["n"] is String), "\(line)")
                #expect(record["duration_ms"] is NSNumber, "\(line)")
                #expect(record["state"] is String, "\(line)")
            }
            if record["msg"] as? String == "probing" {
                #expect(record["probes"] as? Int == 1, "\(line)")
            }
            if record["msg"] as? String == "shutting down" { sawShutdown = true }
        }
        #expect(sawRound && sawShutdown)
    }

    /// A strict logfmt reader: `key=value` pairs split by one space; a value is bare (no space,
    /// `=` or quote) or a JSON string. `nil` for anything else.
    static func logfmt(_ line: Substring) -> [(key: String, value: String)]? {
        var pairs: [(key: String, value: String)] = []
        var rest = line[...]
        while !rest.isEmpty {
            guard let eq = rest.firstIndex(of: "="), eq != rest.startIndex else { return nil }
            let key = String(rest[..<eq])
            guard key.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else { return nil }
            rest = rest[rest.index(after: eq)...]
            var value: String
            if rest.first == "\"" {
                var end = rest.index(after: rest.startIndex)
                while end < rest.endIndex, rest[end] != "\"" {
                    if rest[end] == "\\" { end = rest.index(after: end) }
                    guard end < rest.endIndex else { return nil }
                    end = rest.index(after: end)
                }
                guard end < rest.endIndex else { return nil }
                let literal = String(rest[...end])
                guard let decoded = try? JSONDecoder().decode(String.self, from: Data(literal.utf8)) else { return nil }
                value = decoded
                rest = rest[rest.index(after: end)...]
            } else {
                let end = rest.firstIndex(of: " ") ?? rest.endIndex
                value = String(rest[..<end])
                guard !value.isEmpty, !value.contains("="), !value.contains("\"") else { return nil }
                rest = rest[end...]
            }
            pairs.append((key, value))
            if rest.first == " " {
                rest = rest.dropFirst()
                if rest.isEmpty { return nil }
            } else if !rest.isEmpty {
                return nil
            }
        }
        return pairs
    }
}
