/// The record type a DNS probe asks for. A and AAAA answers are addresses (judged by the
/// portal rule); the others are judged by their presence, and by `expect_answer` when set.
public enum DNSQueryType: String, Sendable, CaseIterable, Codable {
    /// `A`: IPv4 addresses.
    case a = "A"
    /// `AAAA`: IPv6 addresses.
    case aaaa = "AAAA"
    /// `CNAME`: the canonical name of an alias.
    case cname = "CNAME"
    /// `MX`: mail exchangers.
    case mx = "MX"
    /// `TXT`: text records.
    case txt = "TXT"
    /// `NS`: the zone's name servers.
    case ns = "NS"
    /// `SOA`: the zone's start of authority.
    case soa = "SOA"

    /// The QTYPE code on the wire.
    package var code: UInt16 {
        switch self {
        case .a: 1
        case .ns: 2
        case .cname: 5
        case .soa: 6
        case .mx: 15
        case .txt: 16
        case .aaaa: 28
        }
    }
    /// The IP family whose addresses this type returns (A: IPv4; every other type: IPv6, the
    /// system resolver's only other choice).
    package var family: IPFamily { self == .a ? .ipv4 : .ipv6 }
    /// Whether the answers are addresses (A, AAAA).
    package var isAddress: Bool { self == .a || self == .aaaa }
}

/// Why a DNS message could not be built or read. Decoding never traps: every malformed,
/// truncated or hostile input ends up as one of these.
package enum DNSMessageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The name to encode breaks a rule (empty, label > 63, name > 253, bad character).
    case invalidName(String)
    /// The message ended before a field that should be there (offset of the read).
    case truncated(at: Int)
    /// A compression pointer that does not point strictly backwards, or too many jumps.
    case badPointer(at: Int)
    /// A label length byte with the reserved 0x40/0x80 bits set.
    case badLabelType(at: Int)
    /// A decoded name longer than 255 bytes on the wire.
    case nameTooLong(at: Int)
    /// An A/AAAA record whose data length is not 4/16, or a name, TXT string or SOA field that leaves its rdata.
    case badRecordData(at: Int)
    /// The header is not a standard query response (QR clear or opcode not 0).
    case notAResponse

    package var description: String {
        switch self {
        case .invalidName(let why): "invalid name: \(why)"
        case .truncated(let at): "message truncated at byte \(at)"
        case .badPointer(let at): "bad compression pointer at byte \(at)"
        case .badLabelType(let at): "bad label type at byte \(at)"
        case .nameTooLong(let at): "name longer than 255 bytes at byte \(at)"
        case .badRecordData(let at): "bad record data at byte \(at)"
        case .notAResponse: "not a query response"
        }
    }
}

/// The DNS wire format as far as a reachability probe needs it (RFC 1035): build one query,
/// read one response. Pure: no sockets, no clock. Not a general DNS library (no EDNS, no
/// authority/additional parsing, no encoding of responses).
package enum DNSMessage {
    package static let classIN: UInt16 = 1
    package static let typeCNAME: UInt16 = 5

    /// Builds a standard query (RD set, one question, class IN) for `name`.
    package static func encodeQuery(name: String, type: DNSQueryType, id: UInt16) throws(DNSMessageError) -> [UInt8] {
        let labels = try validatedLabels(name)
        var out: [UInt8] = []
        out.reserveCapacity(18 + name.utf8.count)
        out.appendBE16(id)
        out.appendBE16(0x0100)  // standard query, recursion desired
        out.appendBE16(1)
        out.appendBE16(0)
        out.appendBE16(0)
        out.appendBE16(0)
        for label in labels {
            out.append(UInt8(label.count))
            out.append(contentsOf: label)
        }
        out.append(0)
        out.appendBE16(type.code)
        out.appendBE16(classIN)
        return out
    }

    /// Checks a host name for use in a query and returns its labels. Rules: 1–253 characters
    /// (a trailing dot is allowed and dropped), labels 1–63 of letters, digits, `-` and `_`,
    /// no label starting or ending with `-`.
    package static func validatedLabels(_ name: String) throws(DNSMessageError) -> [[UInt8]] {
        var bytes = Array(name.utf8)
        if bytes.last == UInt8(ascii: ".") { bytes.removeLast() }
        guard !bytes.isEmpty else { throw .invalidName("empty name") }
        guard bytes.count <= 253 else { throw .invalidName("name is \(bytes.count) characters, more than 253") }
        let labels = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        var out: [[UInt8]] = []
        for label in labels {
            guard !label.isEmpty else { throw .invalidName("empty label in \(name.debugDescription)") }
            guard label.count <= 63 else { throw .invalidName("label of \(label.count) characters, more than 63") }
            guard label.allSatisfy(isHostNameByte) else {
                throw .invalidName("\(name.debugDescription) has a character outside letters, digits, '-' and '_'")
            }
            guard label.first != UInt8(ascii: "-"), label.last != UInt8(ascii: "-") else {
                throw .invalidName(
                    "label \(String(decoding: label, as: UTF8.self).debugDescription) starts or ends with '-'")
            }
            out.append(Array(label))
        }
        return out
    }

    /// Reads a response. Any malformed input gives an error; reading is bounded by the input
    /// size (every count is checked against the bytes that remain) and compression pointers
    /// must point strictly backwards, so no input can loop.
    package static func decodeResponse(_ bytes: [UInt8]) throws(DNSMessageError) -> DNSResponse {
        var reader = DNSReader(bytes)
        let header = try readHeader(&reader)
        guard header.isResponse, header.opcode == 0 else { throw .notAResponse }
        // A question needs at least 5 bytes and a record 11: reject impossible counts up front.
        let minimum = header.questionCount * 5 + header.answerCount * 11
        guard minimum <= reader.remaining else { throw .truncated(at: bytes.count) }
        var questions: [DNSQuestion] = []
        for _ in 0..<header.questionCount {
            let name = try reader.readName()
            let type = try reader.u16()
            let klass = try reader.u16()
            questions.append(DNSQuestion(name: name, type: type, klass: klass))
        }
        var answers: [DNSRecord] = []
        for _ in 0..<header.answerCount {
            answers.append(try readRecord(&reader))
        }
        return DNSResponse(header: header, questions: questions, answers: answers)
    }

    /// Reads just the header (used to match an id before a full decode).
    package static func decodeHeader(_ bytes: [UInt8]) throws(DNSMessageError) -> DNSHeader {
        var reader = DNSReader(bytes)
        return try readHeader(&reader)
    }

    /// The form names are compared in: lower-case ASCII, no trailing dot.
    package static func canonical(_ name: String) -> String {
        var n = name.lowercased()
        if n.count > 1, n.hasSuffix(".") { n.removeLast() }
        return n
    }

    private static func readHeader(_ reader: inout DNSReader) throws(DNSMessageError) -> DNSHeader {
        DNSHeader(
            id: try reader.u16(), flags: try reader.u16(),
            questionCount: Int(try reader.u16()), answerCount: Int(try reader.u16()),
            authorityCount: Int(try reader.u16()), additionalCount: Int(try reader.u16()))
    }

    private static func readRecord(_ reader: inout DNSReader) throws(DNSMessageError) -> DNSRecord {
        let name = try reader.readName()
        let type = try reader.u16()
        let klass = try reader.u16()
        let ttl = try reader.u32()
        let length = Int(try reader.u16())
        let start = reader.offset
        let rdata = try reader.take(length)
        let data: DNSRecord.Data
        switch type {
        case 1:
            guard length == 4 else { throw .badRecordData(at: start) }
            data = .a(IPAddressText.format(rdata))
        case 28:
            guard length == 16 else { throw .badRecordData(at: start) }
            data = .aaaa(IPAddressText.format(rdata))
        case typeCNAME, 2:
            var inner = DNSReader(reader.bytes, offset: start)
            let target = try inner.readName()
            guard inner.offset <= start + length else { throw .badRecordData(at: start) }
            data = type == typeCNAME ? .cname(target) : .ns(target)
        case 15:
            var inner = DNSReader(reader.bytes, offset: start)
            let preference = try inner.u16()
            let exchange = try inner.readName()
            guard inner.offset <= start + length else { throw .badRecordData(at: start) }
            data = .mx(preference: preference, exchange: exchange)
        case 16:
            data = .txt(try txtStrings(rdata, at: start))
        case 6:
            var inner = DNSReader(reader.bytes, offset: start)
            let mname = try inner.readName()
            let rname = try inner.readName()
            let serial = try inner.u32()
            _ = try inner.take(16)  // refresh, retry, expire, minimum
            guard inner.offset <= start + length else { throw .badRecordData(at: start) }
            data = .soa(primary: mname, mailbox: rname, serial: serial)
        default:
            data = .other(type: type)
        }
        return DNSRecord(name: name, type: type, klass: klass, ttl: ttl, data: data)
    }

    /// The character-strings of a TXT record (RFC 1035 §3.3.14): length-prefixed, at least one.
    private static func txtStrings(_ rdata: ArraySlice<UInt8>, at start: Int) throws(DNSMessageError) -> [String] {
        var strings: [String] = []
        var i = rdata.startIndex
        while i < rdata.endIndex {
            let n = Int(rdata[i])
            guard i + 1 + n <= rdata.endIndex else { throw .badRecordData(at: start) }
            strings.append(String(decoding: rdata[(i + 1)..<(i + 1 + n)], as: UTF8.self))
            i += 1 + n
        }
        guard !strings.isEmpty else { throw .badRecordData(at: start) }
        return strings
    }

    package static func isHostNameByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b == 0x2d || b == 0x5f
    }
}

extension [UInt8] {
    package mutating func appendBE16(_ v: UInt16) {
        append(UInt8(v >> 8))
        append(UInt8(v & 0xff))
    }
}
