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
        /// A name server of the owner's zone (lower-cased).
        case ns(String)
        /// A mail exchanger and its preference.
        case mx(preference: UInt16, exchange: String)
        /// The character-strings of a TXT record, decoded as UTF-8 (invalid bytes replaced).
        case txt([String])
        /// The start of authority: primary server, responsible mailbox and serial.
        case soa(primary: String, mailbox: String, serial: UInt32)
        /// Any other type, kept only as its code.
        case other(type: UInt16)
    }

    /// Lower-cased owner name.
    package var name: String
    package var type: UInt16
    package var klass: UInt16
    package var ttl: UInt32
    package var data: Data

    /// The record data in presentation form, as `expect_answer.regex` sees it: `192.0.2.1`,
    /// `alias.example.`, `10 mx.example.`, `"v=spf1 -all"` (TXT strings quoted, space-separated),
    /// `ns.example. hostmaster.example. 2024010101`.
    package var presentation: String {
        switch data {
        case .a(let ip), .aaaa(let ip): ip
        case .cname(let name), .ns(let name): Self.absolute(name)
        case .mx(let preference, let exchange): "\(preference) \(Self.absolute(exchange))"
        case .txt(let strings): strings.map { $0.debugDescription }.joined(separator: " ")
        case .soa(let primary, let mailbox, let serial): "\(Self.absolute(primary)) \(Self.absolute(mailbox)) \(serial)"
        case .other(let type): "type \(type)"
        }
    }

    /// Whether the decoded data is of `type` (decoding follows the type code).
    package func isOf(_ type: DNSQueryType) -> Bool {
        switch (data, type) {
        case (.a, .a), (.aaaa, .aaaa), (.cname, .cname), (.ns, .ns), (.mx, .mx), (.txt, .txt), (.soa, .soa): true
        default: false
        }
    }

    /// The record as miekg/dns writes it (blackbox's `validate_*_rrs` match this):
    /// `owner.\tTTL\tIN\tTYPE\tdata`. A SOA's refresh, retry, expire and minimum are not read
    /// here and are left out.
    package var zoneText: String {
        let klass = klass == 1 ? "IN" : "CLASS\(klass)"
        let type = DNSQueryType.allCases.first { isOf($0) }?.rawValue ?? "TYPE\(self.type)"
        let data = if case .other = data { "\\# 0" } else { presentation }
        return "\(Self.absolute(name))\t\(ttl)\t\(klass)\t\(type)\t\(data)"
    }

    private static func absolute(_ name: String) -> String { name == "." || name.hasSuffix(".") ? name : name + "." }
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
        guard type.isAddress else { return [] }
        return records(for: name, type: type).map(\.presentation)
    }

    /// The records of `type` that answer `name`: for CNAME the aliases `name` itself has; for
    /// every other type those owned by `name` or by a name it is an alias of (CNAME chains in
    /// the answer section followed, owners compared case-insensitively).
    package func records(for name: String, type: DNSQueryType) -> [DNSRecord] {
        let canonical = DNSMessage.canonical(name)
        if type == .cname { return answers.filter { $0.isOf(type) && $0.name == canonical } }
        // Walk the alias graph from the question name; linear in the number of records, so a
        // hostile answer section full of CNAMEs costs no more than reading it did.
        var aliases: [String: [String]] = [:]
        for record in answers {
            if case .cname(let target) = record.data { aliases[record.name, default: []].append(target) }
        }
        var names: Set<String> = [canonical]
        var pending = Array(names)
        while let next = pending.popLast() {
            for target in aliases[next] ?? [] where names.insert(target).inserted {
                pending.append(target)
            }
        }
        return answers.filter { names.contains($0.name) && $0.isOf(type) }
    }
}
