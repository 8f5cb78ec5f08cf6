/// What an RFC 8908 captive-portal API answered (`application/captive+json`): whether the
/// network holds this host captive, where a person logs in, and what is left of the session.
///
/// The network writes every field, so each is bounded before anything shows it: the body at
/// 16 KiB, each URL at 2,048 bytes of `https://` (the venue page may be `http://`) with no
/// control characters, spaces or characters RFC 3986 keeps out of URIs, the numbers from 0 to 2^53. `captive` is required;
/// a known field of the wrong type refuses the whole answer (a forger must not half-succeed);
/// unknown fields are ignored, as RFC 8908 asks.
///
/// Evidence: `captive: true` comes from the local network and is believed: a network that says
/// it holds the host captive is, for this host, a portal. `captive: false` proves nothing about
/// the internet (the same local box could say it while intercepting): the probes still decide.
package struct CaptivePortalAnswer: Sendable, Equatable {
    package var captive: Bool
    package var userPortalURL: String?
    package var venueInfoURL: String?
    package var canExtendSession: Bool?
    package var secondsRemaining: Double?
    package var bytesRemaining: Double?

    package static let maxBody = 16 << 10
    package static let maxURL = 2048

    package struct Problem: Error, Equatable, CustomStringConvertible {
        package let description: String
        package init(_ description: String) { self.description = description }
    }

    package init(captive: Bool) { self.captive = captive }

    /// The answer in `body`, or why it is not one.
    package static func parse(_ body: [UInt8]) throws(Problem) -> CaptivePortalAnswer {
        guard body.count <= maxBody else { throw Problem("the answer is over \(maxBody) bytes") }
        guard let value = JSONValue.parse(body) else { throw Problem("the answer is not JSON") }
        guard case .object(let fields) = value else { throw Problem("the answer is not a JSON object") }
        var seen = Set<String>()
        var answer: CaptivePortalAnswer?
        var rest: [(String, JSONValue)] = []
        for (key, v) in fields {
            // A repeated key is refused: which one a reader keeps differs between readers.
            guard seen.insert(key).inserted else { throw Problem("the key \(key.debugDescription) is repeated") }
            if key == "captive" {
                guard case .bool(let b) = v else { throw Problem("captive: expected true or false") }
                answer = CaptivePortalAnswer(captive: b)
            } else {
                rest.append((key, v))
            }
        }
        guard var out = answer else { throw Problem("captive: missing") }
        for (key, v) in rest {
            switch key {
            case "user-portal-url": out.userPortalURL = try url(v, key, schemes: ["https"])
            case "venue-info-url": out.venueInfoURL = try url(v, key, schemes: ["https", "http"])
            case "can-extend-session":
                guard case .bool(let b) = v else { throw Problem("\(key): expected true or false") }
                out.canExtendSession = b
            case "seconds-remaining", "bytes-remaining":
                // At most 2^53: every count up to it is exact, and any integer type can hold it.
                guard case .number(let n) = v, n.isFinite, n >= 0, n <= 9_007_199_254_740_992 else {
                    throw Problem("\(key): expected a number from 0 to 2^53")
                }
                if key == "seconds-remaining" { out.secondsRemaining = n } else { out.bytesRemaining = n }
            default: continue
            }
        }
        return out
    }

    /// The characters RFC 3986 lets a URI hold: unreserved, reserved and `%`.
    package static func isURICharacter(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default: Array("-._~:/?#[]@!$&'()*+,;=%".utf8).contains(c)
        }
    }

    private static func url(_ v: JSONValue, _ key: String, schemes: [String]) throws(Problem) -> String {
        guard case .string(let s) = v else { throw Problem("\(key): expected a URL") }
        let lower = s.lowercased()
        guard s.utf8.count <= maxURL else { throw Problem("\(key): over \(maxURL) bytes") }
        guard !s.unicodeScalars.contains(where: { $0.value <= 0x20 || Logger.isControl($0) }) else {
            throw Problem("\(key): control characters or spaces")
        }
        guard s.utf8.allSatisfy(Self.isURICharacter) else {
            throw Problem("\(key): characters a URI cannot hold (RFC 3986: \", <, >, \\, ^, `, {, |, } or non-ASCII)")
        }
        guard schemes.contains(where: { lower.hasPrefix($0 + "://") && lower.count > $0.count + 3 }) else {
            throw Problem("\(key): expected a \(schemes.joined(separator: " or ")) URL")
        }
        return s
    }
}
