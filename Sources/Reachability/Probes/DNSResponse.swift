/// The fixed 12-byte header of a DNS message.
package struct DNSHeader: Sendable, Equatable {
    package var id: UInt16
    package var flags: UInt16
    package var questionCount: Int
    package var answerCount: Int
    package var authorityCount: Int
    package var additionalCount: Int

    package var isResponse: Bool { flags & 0x8000 != 0 }
    package var opcode: Int { Int(flags >> 11) & 0xF }
    /// TC: the answer did not fit in the datagram.
    package var isTruncated: Bool { flags & 0x0200 != 0 }
    package var recursionAvailable: Bool { flags & 0x0080 != 0 }
    /// RCODE: 0 NOERROR, 1 FORMERR, 2 SERVFAIL, 3 NXDOMAIN, 4 NOTIMP, 5 REFUSED.
    package var rcode: Int { Int(flags & 0xF) }
}

/// One entry of the question section.
package struct DNSQuestion: Sendable, Equatable {
    /// Lower-cased presentation form, without the trailing dot ("." for the root).
    package var name: String
    package var type: UInt16
    package var klass: UInt16
}

/// One answer record; only the data this prober needs is decoded.
package struct DNSRecord: Sendable, Equatable {
    /// The decoded record data.
    package enum Data: Sendable, Equatable {
        /// An IPv4 address in dotted-quad form.
        case a(String)
        /// An IPv6 address in RFC 5952 form.
        case aaaa(String)
        /// The canonical name this owner is an alias of (lower-cased).
        case cname(String)
        /// Any other type, kept only as its code.
        case other(type: UInt16)
    }

    /// Lower-cased owner name.
    package var name: String
    package var type: UInt16
    package var klass: UInt16
    package var ttl: UInt32
    package var data: Data
}

/// A decoded response: header, questions and the answer section. Authority and additional
/// sections are not read (the probe has no use for them, and less parsing is less risk).
package struct DNSResponse: Sendable, Equatable {
    package var header: DNSHeader
    package var questions: [DNSQuestion]
    package var answers: [DNSRecord]

    /// Addresses of `type` that answer `name`, following CNAME records in the answer section
    /// (owner names compared case-insensitively). Records for unrelated owners are ignored.
    package func addresses(for name: String, type: DNSQueryType) -> [String] {
        // Walk the alias graph from the question name; linear in the number of records, so a
        // hostile answer section full of CNAMEs costs no more than reading it did.
        var aliases: [String: [String]] = [:]
        for record in answers {
            if case .cname(let target) = record.data { aliases[record.name, default: []].append(target) }
        }
        var names: Set<String> = [DNSMessage.canonical(name)]
        var pending = Array(names)
        while let next = pending.popLast() {
            for target in aliases[next] ?? [] where names.insert(target).inserted {
                pending.append(target)
            }
        }
        return answers.compactMap { record in
            guard names.contains(record.name) else { return nil }
            switch (record.data, type) {
            case (.a(let ip), .a), (.aaaa(let ip), .aaaa): return ip
            default: return nil
            }
        }
    }
}
