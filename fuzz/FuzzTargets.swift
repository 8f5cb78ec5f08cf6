import Glibc

// libFuzzer entry point for the parsers that read outside input. scripts/fuzz.sh compiles this
// file together with every source of the Reachability module (so internal decoders such as
// NetlinkDecoder are reachable) with -sanitize=fuzzer,address; RX_FUZZ_TARGET picks the parser.
// Each target also checks the promises its parser makes about its output: a broken promise
// traps, and libFuzzer keeps the input like any crash. Not part of the package.
//
// Crashes become regression inputs under fuzz/regressions/<target>/, replayed by
// Tests/ReachabilityTests/FuzzRegressionTests.swift (which repeats these calls; keep them in step).

/// The parsers under fuzz.
enum FuzzTarget: String, CaseIterable, Sendable {
    case httpRequest = "http-request"
    case httpResponse = "http-response"
    case dns
    case netlink
    case config
    case history
    case tlsHandshake = "tls-handshake"
}

let fuzzTarget: FuzzTarget = {
    guard let name = getenv("RX_FUZZ_TARGET").map({ String(cString: $0) }), let t = FuzzTarget(rawValue: name) else {
        let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
        fputs_stderr("set RX_FUZZ_TARGET to one of: \(names)\n")
        exit(64)
    }
    return t
}()

private func fputs_stderr(_ s: String) { _ = s.withCString { write(2, $0, strlen($0)) } }

@_cdecl("LLVMFuzzerTestOneInput")
package func rxFuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = (data != nil && size > 0) ? Array(UnsafeBufferPointer(start: data, count: size)) : []
    switch fuzzTarget {
    case .httpRequest: fuzzHTTPRequest(bytes)
    case .httpResponse: fuzzHTTPResponse(bytes)
    case .dns: fuzzDNS(bytes)
    case .netlink: fuzzNetlink(bytes)
    case .config: fuzzConfig(bytes)
    case .history: fuzzHistory(bytes)
    case .tlsHandshake: fuzzTLSHandshake(bytes)
    }
    return 0
}

func fuzzHTTPRequest(_ bytes: [UInt8]) {
    let parser = HTTPRequestParser()
    let outcome = parser.parse(bytes[...])
    if case .request(_, let consumed) = outcome {
        precondition(consumed > 0 && consumed <= bytes.count, "consumed \(consumed) of \(bytes.count)")
    }
    // Pure: the same bytes give the same answer, also from a non-zero slice start.
    precondition(parser.parse(bytes[...]) == outcome)
    let shifted = [0x20] + bytes
    _ = parser.parse(shifted[1...])
}

func fuzzHTTPResponse(_ bytes: [UInt8]) {
    guard let first = bytes.first else { return }
    let body = Array(bytes.dropFirst())
    var parser = HTTPResponseParser(
        limits: .init(headBytes: 2048, fieldCount: 20, bodyBytes: 1024), isHeadRequest: first & 1 == 1)
    // Split the stream where the first byte says, as a socket would deliver it.
    let cut = body.isEmpty ? 0 : Int(first >> 1) % (body.count + 1)
    do {
        if try parser.consume(body[..<cut]) == .needMore {
            _ = try parser.consume(body[cut...])
        }
        try parser.finish()
    } catch {
        return
    }
    precondition(parser.body.count <= 1024, "body \(parser.body.count) over its limit")
}

func fuzzDNS(_ bytes: [UInt8]) {
    guard let r = try? DNSMessage.decodeResponse(bytes) else { return }
    precondition(r.questions.count == r.header.questionCount && r.answers.count == r.header.answerCount)
    _ = r.addresses(for: "www.example.com", type: .a)
    _ = r.addresses(for: r.questions.first?.name ?? "x", type: .aaaa)
}

func fuzzNetlink(_ bytes: [UInt8]) {
    let messages = NetlinkDecoder.decode(bytes)
    // Every message has at least a 16-byte header.
    precondition(messages.count <= bytes.count / 16 + 1)
    var model = NetworkModel()
    for m in messages {
        model.apply(m) { name, kind, type, _ in
            InterfaceClassifier.classify(name: name, kind: kind, hardwareType: type, sysfs: nil)
        }
    }
    _ = model.snapshot(changeCount: 0)
}

func fuzzConfig(_ bytes: [UInt8]) {
    #if RX_FUZZ_CONFIG
        _ = try? YAMLParser.parse(bytes, file: "fuzz.yml")
        _ = try? ConfigLoader.parse(bytes, file: "fuzz.yml")
        // The same YAML as a blackbox module file (`--modules.file`): every module decoded.
        _ = try? BlackboxModuleFile.parse(bytes, file: "fuzz.yml")
    #endif
}

func fuzzHistory(_ bytes: [UInt8]) {
    #if RX_FUZZ_HISTORY
        _ = try? HistoryRecord.decode(bytes)
    #endif
}

/// The web server's TLS context at its strictest: client certificates required
/// and verified, a SAN allow-list. Certificates from RX_FUZZ_TLS_DIR (scripts/fuzz.sh
/// makes them with openssl).
let fuzzTLSContext: TLSServerContext = {
    let dir = getenv("RX_FUZZ_TLS_DIR").map { String(cString: $0) } ?? ".build/fuzz/tls"
    func read(_ name: String) -> [UInt8] {
        guard let bytes = try? FileContents.read("\(dir)/\(name)", limit: 1 << 20) else {
            fputs_stderr("fuzz: cannot read \(dir)/\(name)\n")
            exit(1)
        }
        return bytes
    }
    var settings = TLSServerContext.Settings()
    settings.certificatePEM = read("server.pem")
    settings.keyPEM = read("server.key")
    settings.clientCAPEM = read("server.pem")
    settings.clientAuth = .requireAndVerify
    settings.clientAllowedSANs = ["prometheus.example"]
    settings.minVersion = "TLS10"
    do throws(TLSServerContext.Failure) {
        return try TLSServerContext(settings)
    } catch {
        fputs_stderr("fuzz: TLS context: \(error)\n")
        exit(1)
    }
}()

func fuzzTLSHandshake(_ bytes: [UInt8]) {
    guard let first = bytes.first else { return }
    let client = Array(bytes.dropFirst())
    let split = client.isEmpty ? 0 : Int(first) * client.count / 255
    let outcome = fuzzTLSContext.acceptInMemory(client, split: split)
    // Nothing a client sends alone completes a handshake: the client's Finished needs keys.
    precondition(!outcome.completed, "a handshake completed from bytes alone")
}
