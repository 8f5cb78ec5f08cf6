import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// Fuzz-style robustness of the DNS decoder: seeded, bounded, repeatable. A crash, a hang (the
/// time bound) or a decoded value that contradicts its own header fails the test. The loops run
/// off the cooperative pool (see `runOffCooperativePool`).
@Suite struct DNSFuzzTests {
    /// Decodes `bytes`; returns nil when it does not decode, else the broken promises (if any).
    private static func violations(_ bytes: [UInt8]) -> [String]? {
        guard let r = try? DNSMessage.decodeResponse(bytes) else { return nil }
        var out: [String] = []
        if r.questions.count != r.header.questionCount { out.append("question count") }
        if r.answers.count != r.header.answerCount { out.append("answer count") }
        if !r.header.isResponse { out.append("not a response") }
        // 255 wire bytes at most; escaping makes the text at most 4× longer.
        if (r.questions.map(\.name) + r.answers.map(\.name)).contains(where: { $0.utf8.count > 4 * 255 }) {
            out.append("long name")
        }
        _ = r.addresses(for: "www.example.com", type: .a)
        return out
    }

    @Test func randomBytesNeverCrash() async {
        let clock = ContinuousClock()
        let start = clock.now
        let broken = await runOffCooperativePool { () -> [String] in
            var rng = SplitMix64(seed: 42)
            var broken: [String] = []
            for _ in 0..<10_000 {
                let length = Int(rng.next() % 600)
                var bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                // Make half of them look like responses so decoding goes past the header.
                if bytes.count > 3, rng.next() % 2 == 0 {
                    bytes[2] = 0x81
                    bytes[3] = 0x80
                }
                broken += Self.violations(bytes) ?? []
            }
            return broken
        }
        #expect(broken.isEmpty, "\(broken.prefix(5))")
        #expect(clock.now - start < .seconds(5))
    }

    @Test func mutatedValidResponsesNeverCrash() async {
        let (decoded, broken) = await runOffCooperativePool { () -> (Int, [String]) in
            var rng = SplitMix64(seed: 7)
            var decoded = 0
            var broken: [String] = []
            for _ in 0..<10_000 {
                var bytes = cnameResponse
                for _ in 0..<(1 + Int(rng.next() % 4)) {
                    let index = Int(rng.next() % UInt64(bytes.count))
                    switch rng.next() % 3 {
                    case 0: bytes[index] ^= UInt8(1 << (rng.next() % 8))
                    case 1: bytes[index] = UInt8(truncatingIfNeeded: rng.next())
                    default: bytes.removeSubrange(index...)
                    }
                    if bytes.isEmpty { break }
                }
                if let v = Self.violations(bytes) {
                    decoded += 1
                    broken += v
                }
            }
            return (decoded, broken)
        }
        #expect(broken.isEmpty, "\(broken.prefix(5))")
        // Flips in TTLs and address bytes leave valid messages: the fuzzer must reach the deep paths.
        #expect(decoded > 500)
        #expect(decoded < 10_000)
    }

    @Test func exchangeNeverCrashesOnRandomDatagrams() async {
        let (answered, ignored) = await runOffCooperativePool { () -> (Int, Int) in
            var rng = SplitMix64(seed: 99)
            var exchange = DNSExchange(id: 0x1234, name: "www.example.com", type: .a)
            var answered = 0
            for _ in 0..<5_000 {
                var bytes = cnameResponse
                let index = Int(rng.next() % UInt64(bytes.count))
                bytes[index] = UInt8(truncatingIfNeeded: rng.next())
                if case .answer = exchange.consider(bytes) { answered += 1 }
            }
            return (answered, exchange.ignored)
        }
        #expect(answered > 0)
        #expect(ignored > 0)
    }
}
