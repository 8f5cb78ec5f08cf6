import Foundation
import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// Replays the fuzzing seeds (fuzz/corpus/<target>/) and every input a fuzzer ever crashed on
/// (fuzz/regressions/<target>/) through the same parsers and output promises as
/// fuzz/FuzzTargets.swift (keep the two in step). A crash fails the whole run; a broken
/// promise fails the input's test.
@Suite struct FuzzRegressionTests {
    static let root = RepositoryRoot.url
        .appendingPathComponent("fuzz")

    /// (target, file name, bytes) of every stored input.
    static func inputs(_ target: String) -> [(name: String, bytes: [UInt8])] {
        var out: [(String, [UInt8])] = []
        for dir in ["corpus", "regressions"] {
            let folder = root.appendingPathComponent(dir).appendingPathComponent(target)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            for name in names.sorted() {
                if let data = FileManager.default.contents(atPath: folder.appendingPathComponent(name).path) {
                    out.append(("\(dir)/\(name)", Array(data)))
                }
            }
        }
        return out
    }

    @Test(arguments: ["http-request", "http-response", "dns", "netlink", "config", "history", "tls-handshake"])
    func storedInputsKeepTheirPromises(target: String) throws {
        let tls = target == "tls-handshake" ? try Self.tlsContext() : nil
        let inputs = Self.inputs(target)
        #expect(inputs.count >= 2, "seeds for \(target) missing under \(Self.root.path)")
        for input in inputs {
            switch target {
            case "http-request":
                let parser = HTTPRequestParser()
                let outcome = parser.parse(input.bytes[...])
                if case .request(_, let consumed) = outcome {
                    #expect(consumed > 0 && consumed <= input.bytes.count, "\(input.name)")
                }
                #expect(parser.parse(input.bytes[...]) == outcome, "\(input.name)")
            case "http-response":
                guard let first = input.bytes.first else { continue }
                let body = Array(input.bytes.dropFirst())
                var parser = HTTPResponseParser(
                    limits: .init(headBytes: 2048, fieldCount: 20, bodyBytes: 1024), isHeadRequest: first & 1 == 1)
                let cut = body.isEmpty ? 0 : Int(first >> 1) % (body.count + 1)
                do {
                    if try parser.consume(body[..<cut]) == .needMore { _ = try parser.consume(body[cut...]) }
                    try parser.finish()
                    #expect(parser.body.count <= 1024, "\(input.name)")
                } catch {}
            case "dns":
                if let r = try? DNSMessage.decodeResponse(input.bytes) {
                    #expect(
                        r.questions.count == r.header.questionCount && r.answers.count == r.header.answerCount,
                        "\(input.name)")
                    _ = r.addresses(for: "www.example.com", type: .a)
                }
            case "config":
                _ = try? YAMLParser.parse(input.bytes, file: "fuzz.yml")
                _ = try? ConfigLoader.parse(input.bytes, file: "fuzz.yml")
                _ = try? BlackboxModuleFile.parse(input.bytes, file: "fuzz.yml")
            case "history":
                _ = try? HistoryRecord.decode(input.bytes)
            case "tls-handshake":
                guard let first = input.bytes.first, let tls else { continue }
                let client = Array(input.bytes.dropFirst())
                let split = client.isEmpty ? 0 : Int(first) * client.count / 255
                let outcome = tls.acceptInMemory(client, split: split)
                #expect(!outcome.completed, "\(input.name)")
                // A real ClientHello gets the server's first flight; anything else gets at most an alert.
                if input.name.hasPrefix("corpus/") && client.first == 0x16 {
                    #expect(outcome.answered > 100, "\(input.name): \(outcome.answered) bytes answered")
                }
            default:
                let messages = NetlinkDecoder.decode(input.bytes)
                #expect(messages.count <= input.bytes.count / 16 + 1, "\(input.name)")
                var model = NetworkModel()
                for m in messages {
                    model.apply(m) { name, kind, type, _ in
                        InterfaceClassifier.classify(name: name, kind: kind, hardwareType: type, sysfs: nil)
                    }
                }
                _ = model.snapshot(changeCount: 0)
            }
        }
    }

    /// The fuzz target's TLS context (scripts/fuzz.sh's), with the tests' certificates.
    static func tlsContext() throws -> TLSServerContext {
        let certs = try TestCertificates.shared()
        func read(_ path: String) -> [UInt8] { Array(FileManager.default.contents(atPath: path) ?? Data()) }
        var settings = TLSServerContext.Settings()
        settings.certificatePEM = read(certs.valid.certificate)
        settings.keyPEM = read(certs.valid.key)
        settings.clientCAPEM = read(certs.caFile)
        settings.clientAuth = .requireAndVerify
        settings.clientAllowedSANs = ["prometheus.example"]
        settings.minVersion = "TLS10"
        return try TLSServerContext(settings)
    }

    /// The seeds are real messages: make sure they decode, so the replay above exercises more
    /// than the parsers' first rejection.
    @Test func seedsDecode() throws {
        let dns = Self.inputs("dns").filter { $0.name.hasPrefix("corpus/") }
        for input in dns { #expect((try? DNSMessage.decodeResponse(input.bytes)) != nil, "\(input.name)") }
        let netlink = Self.inputs("netlink").filter { $0.name.hasPrefix("corpus/") }
        #expect(netlink.allSatisfy { !NetlinkDecoder.decode($0.bytes).isEmpty })
        for input in Self.inputs("config").filter({ $0.name.hasPrefix("corpus/") }) {
            if input.name.hasPrefix("corpus/blackbox-") {
                // Module files (`--modules.file`): they load, with modules that work.
                let file = try? BlackboxModuleFile.parse(input.bytes, file: input.name)
                #expect(file?.modules.isEmpty == false, "\(input.name)")
            } else {
                #expect((try? ConfigLoader.parse(input.bytes, file: input.name)) != nil, "\(input.name)")
            }
        }
        for input in Self.inputs("history").filter({ $0.name.hasPrefix("corpus/") }) {
            #expect((try? HistoryRecord.decode(input.bytes)) != nil, "\(input.name)")
        }
        let get = try #require(Self.inputs("http-request").first { $0.name == "corpus/get" })
        guard case .request(let request, _) = HTTPRequestParser().parse(get.bytes[...]) else {
            Issue.record("corpus/get does not parse as a request")
            return
        }
        #expect(request.path == "/metrics")
    }
}
