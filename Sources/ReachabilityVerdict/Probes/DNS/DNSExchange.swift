/// Matches datagrams that arrive on a DNS query socket against the one query in flight.
/// Pure (no sockets), so the matching rules are tested without a network.
///
/// Rules: a datagram too short for a header, or with another id, is ignored (a late reply to an
/// earlier round, or noise). One with our id must decode and echo our question (name compared
/// case-insensitively, type, class IN); a reply with our id that does not decode is `malformed`
/// (the server is broken or something rewrites its replies). An error reply that carries no
/// question (some servers send REFUSED or FORMERR that way) is accepted on the id alone.
package struct DNSExchange {
    package enum Outcome {
        case ignored
        case malformed(DNSMessageError)
        case answer(DNSResponse)
    }

    /// Unmatched datagrams tolerated in one round before giving up.
    package static let maxIgnored = 256

    package let id: UInt16
    package let name: String
    package let type: DNSQueryType
    private(set) var ignoredMismatched = 0
    private(set) var ignoredMalformed = 0

    package init(id: UInt16, name: String, type: DNSQueryType) {
        self.id = id
        self.name = DNSMessage.canonical(name)
        self.type = type
    }

    package var ignored: Int { ignoredMismatched + ignoredMalformed }

    /// For details: "2 mismatched, 1 malformed".
    package var summary: String { "\(ignoredMismatched) mismatched, \(ignoredMalformed) malformed" }

    package mutating func consider(_ packet: [UInt8]) -> Outcome {
        guard let header = try? DNSMessage.decodeHeader(packet) else {
            ignoredMalformed += 1
            return .ignored
        }
        guard header.id == id else {
            ignoredMismatched += 1
            return .ignored
        }
        let response: DNSResponse
        do {
            response = try DNSMessage.decodeResponse(packet)
        } catch {
            return .malformed(error)
        }
        if response.questions.isEmpty, response.header.rcode != 0 { return .answer(response) }
        guard response.questions.count == 1, let q = response.questions.first,
            q.name == name, q.type == type.code, q.klass == DNSMessage.classIN
        else {
            ignoredMismatched += 1
            return .ignored
        }
        return .answer(response)
    }
}
