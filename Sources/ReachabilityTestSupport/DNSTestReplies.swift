import ReachabilityExporter
import ReachabilityVerdict

/// Builds the datagrams `DNSTestServer` sends back, independently of the prober's codec.
package enum DNSTestReplies {
    static func replies(to query: [UInt8], behaviour: DNSTestServer.Behaviour) -> [[UInt8]] {
        guard query.count >= 12 else { return [] }
        let id = UInt16(query[0]) << 8 | UInt16(query[1])
        // The question, copied verbatim (queries carry no compression).
        var labels: [[UInt8]] = []
        var p = 12
        while p < query.count, query[p] != 0 {
            let length = Int(query[p])
            guard p + 1 + length <= query.count else { return [] }
            labels.append(Array(query[p + 1..<p + 1 + length]))
            p += 1 + length
        }
        guard p + 5 <= query.count else { return [] }
        let question = Array(query[12..<p + 5])
        let toQuestion: [UInt8] = [0xC0, 0x0C]

        switch behaviour {
        case .silence:
            return []
        case .answer(let addresses):
            return [
                message(id: id, rcode: 0, question: question, answers: addresses.map { address(owner: toQuestion, $0) })
            ]
        case .rcode(let rcode):
            return [message(id: id, rcode: rcode, question: question, answers: [])]
        case .noAnswer:
            return [message(id: id, rcode: 0, question: question, answers: [])]
        case .records(let records):
            let answers = records.map { record(owner: toQuestion, type: $0.type, rdata: $0.rdata) }
            return [message(id: id, rcode: 0, question: question, answers: answers)]
        case .truncated:
            return [message(id: id, rcode: 0, question: question, answers: [], extraFlags: 0x0200)]
        case .wrongIDFirst(let decoy, let addresses):
            return [
                message(
                    id: id ^ 0x5A5A, rcode: 0, question: question, answers: decoy.map { address(owner: toQuestion, $0) }
                ),
                message(
                    id: id, rcode: 0, question: question, answers: addresses.map { address(owner: toQuestion, $0) }),
            ]
        case .garbageWithID:
            // Claims 1 question and 3 answers, then 8 bytes: cannot hold them.
            return [
                [UInt8(id >> 8), UInt8(id & 0xFF), 0x81, 0x80, 0, 1, 0, 3, 0, 0, 0, 0, 0xC0, 0xFF, 0x3F, 1, 2, 3, 4, 5]
            ]
        case .raw(let bytes):
            return [bytes]
        case .byName(let table):
            let name = labels.map { String(decoding: $0, as: UTF8.self).lowercased() }.joined(separator: ".")
            guard let addresses = table[name] else {
                return [message(id: id, rcode: 3, question: question, answers: [])]
            }
            return [
                message(id: id, rcode: 0, question: question, answers: addresses.map { address(owner: toQuestion, $0) })
            ]
        case .compressedCNAME(let alias, let addresses):
            let aliasName = compressed(alias, against: labels)
            let cname = record(owner: toQuestion, type: 5, rdata: aliasName)
            // The alias's wire form starts right after the CNAME's fixed fields.
            let aliasOffset = 12 + question.count + 2 + 10
            let toAlias: [UInt8] = [0xC0 | UInt8(aliasOffset >> 8), UInt8(aliasOffset & 0xFF)]
            let answers = [cname] + addresses.map { address(owner: toAlias, $0) }
            return [message(id: id, rcode: 0, question: question, answers: answers)]
        }
    }

    private static func message(id: UInt16, rcode: Int, question: [UInt8], answers: [[UInt8]], extraFlags: UInt16 = 0)
        -> [UInt8]
    {
        let flags: UInt16 = 0x8180 | extraFlags | UInt16(rcode & 0xF)  // QR, RD, RA
        var out = be16(id) + be16(flags) + be16(1) + be16(UInt16(answers.count)) + be16(0) + be16(0)
        out += question
        for answer in answers { out += answer }
        return out
    }

    private static func address(owner: [UInt8], _ text: String) -> [UInt8] {
        let bytes = SocketAddress(ip: text)?.addressBytes ?? []
        return record(owner: owner, type: bytes.count == 16 ? 28 : 1, rdata: bytes)
    }

    private static func record(owner: [UInt8], type: UInt16, rdata: [UInt8]) -> [UInt8] {
        owner + be16(type) + be16(1) + [0, 0, 0, 60] + be16(UInt16(rdata.count)) + rdata
    }

    /// `name` in wire form, ending in a pointer to the longest tail it shares with the question name.
    private static func compressed(_ name: String, against question: [[UInt8]]) -> [UInt8] {
        let labels = name.split(separator: ".").map { Array($0.utf8) }
        for i in labels.indices {
            let tail = Array(labels[i...])
            guard tail.count <= question.count, question.suffix(tail.count).elementsEqual(tail) else { continue }
            let offset = 12 + question.prefix(question.count - tail.count).reduce(0) { $0 + $1.count + 1 }
            var out: [UInt8] = []
            for label in labels[..<i] { out += [UInt8(label.count)] + label }
            return out + [0xC0 | UInt8(offset >> 8), UInt8(offset & 0xFF)]
        }
        return labels.flatMap { [UInt8($0.count)] + $0 } + [0]
    }

    private static func be16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }

    /// `name` in uncompressed wire form, for record data.
    package static func name(_ name: String) -> [UInt8] {
        name.split(separator: ".").flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) } + [0]
    }

    /// TXT record data: each string length-prefixed.
    package static func txt(_ strings: [String]) -> [UInt8] {
        strings.flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) }
    }
}

extension LoopbackHTTPBehavior {
    /// DNS over a stream (TCP, or TLS when the server has an identity): reads length-prefixed
    /// queries and answers each per `behaviour`, framed, until the client closes. `.silence`
    /// holds the connection open without answering.
    package static func dns(_ behaviour: DNSTestServer.Behaviour) -> LoopbackHTTPBehavior {
        LoopbackHTTPBehavior { c in
            while let prefix = c.readExactly(2) {
                let length = Int(prefix[0]) << 8 | Int(prefix[1])
                guard let query = c.readExactly(length) else { return }
                c.record(request: "dns query of \(length) bytes")
                let replies = DNSTestReplies.replies(to: query, behaviour: behaviour)
                if replies.isEmpty {
                    c.holdOpen()
                    return
                }
                for reply in replies {
                    guard c.write([UInt8(reply.count >> 8), UInt8(reply.count & 0xFF)] + reply) else { return }
                }
            }
        }
    }
}
