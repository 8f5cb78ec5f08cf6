/// How a DNS probe judges a matched response, whoever carried the query (a server over UDP,
/// TCP or TLS: `DNSProber`; an HTTPS server: `DoHProber`): the rcode, no record, a public name
/// on a private address (a portal, `DNSPortalRule`), an answer outside the expectation.
package struct DNSAnswerJudge {
    package let name: String
    package let queryType: DNSQueryType
    package let allowPrivateAnswers: Bool
    package let expectAnswer: DNSAnswerExpectation?
    /// This network's NAT64 prefixes: an address inside one is not private.
    package let nat64: [NAT64Prefix]

    private var what: String { "\(queryType.rawValue) \(name)" }

    /// Turns a matched response into the round's result.
    package func conclude(_ response: DNSResponse, via: String, elapsed: Duration) -> ProbeResult {
        let rcode = response.header.rcode
        let records = response.records(for: name, type: queryType).map(\.presentation)
        let addresses = queryType.isAddress ? records : []
        var detail = DNSDetail(
            rcode: rcode, answers: response.answers.count, addresses: addresses,
            truncated: response.header.isTruncated, records: records)
        detail.authorityCount = response.header.authorityCount
        detail.additionalCount = response.header.additionalCount
        detail.answerTexts = response.answers.map(\.zoneText)
        guard rcode == 0 else {
            let reason: FailureReason =
                switch rcode {
                case 2: .servfail
                case 3: .nxdomain
                case 5: .refused
                default: .dns
                }
            var r = ProbeResult.failure(reason, "\(what) \(via): \(Self.rcodeName(rcode))", duration: elapsed)
            r.dns = detail
            return r
        }
        return judge(values: records, detail: detail, via: via, elapsed: elapsed)
    }

    /// The verdict on a NOERROR answer: no record, a portal signal, an answer that does not
    /// meet the expectation, or success.
    package func judge(values: [String], detail: DNSDetail, via: String, elapsed: Duration) -> ProbeResult {
        let what = "\(what) \(via)"
        let tc = detail.truncated && detail.transport != "tcp" ? " (TC set: truncated)" : ""
        var result: ProbeResult
        if values.isEmpty {
            result = .failure(
                .noAnswer, "\(what): no \(queryType.rawValue) records in \(detail.answers) answers\(tc)",
                duration: elapsed)
        } else if case let offending = DNSPortalRule.offendingAddresses(
            queryType.isAddress ? values : [], name: name,
            allowPrivateAnswers: allowPrivateAnswers, nat64: nat64), !offending.isEmpty
        {
            result = ProbeResult(
                status: .portal, reason: .privateAddress,
                detail: "\(what): public name answered with private address \(offending.joined(separator: ", "))\(tc)",
                duration: elapsed)
        } else if let expectation = expectAnswer, let problem = Self.mismatch(values, expectation) {
            result = .failure(
                .answerMismatch, "\(what): \(values.joined(separator: ", ")): \(problem)", duration: elapsed)
        } else {
            result = ProbeResult(
                status: .success, detail: "\(what): \(values.joined(separator: ", "))\(tc)", duration: elapsed)
        }
        result.dns = detail
        return result
    }

    /// Why `values` do not meet `expectation`; nil when they do.
    package static func mismatch(_ values: [String], _ expectation: DNSAnswerExpectation) -> String? {
        switch expectation {
        case .regex(let pattern):
            // Validated at configuration time, so this compiles.
            guard let regex = try? Regex(pattern) else { return "the pattern /\(pattern)/ does not compile" }
            return values.contains { $0.contains(regex) } ? nil : "no answer matches /\(pattern)/"
        case .addresses(let set):
            let foreign = values.filter { !set.contains(SocketAddress(ip: $0)?.ip ?? $0) }
            return foreign.isEmpty ? nil : "\(foreign.joined(separator: ", ")) not in the expected addresses"
        }
    }

    package static func rcodeName(_ rcode: Int) -> String {
        switch rcode {
        case 0: "NOERROR"
        case 1: "FORMERR"
        case 2: "SERVFAIL"
        case 3: "NXDOMAIN"
        case 4: "NOTIMP"
        case 5: "REFUSED"
        default: "rcode \(rcode)"
        }
    }
}
