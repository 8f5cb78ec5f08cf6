import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// The DNS-over-HTTPS kind's configuration: the flag, the file's `doh:` section and the
/// validating initialiser, with the errors a user sees; its evidence; the query's encoding.
@Suite struct DoHProbeConfigTests {
    static let url = "https://dns.example/dns-query"

    /// RFC 8484 §4.1.1's example: `www.example.com` A, id 0, RD set, as base64url without padding.
    @Test func theQueryIsEncodedAsRFC8484Says() throws {
        let query = try DNSMessage.encodeQuery(name: "www.example.com", type: .a, id: 0)
        #expect(DoHProber.base64url(query) == "AAABAAABAAAAAAAAA3d3dwdleGFtcGxlA2NvbQAAAQAB")
        // Every byte value, so '+' and '/' must become '-' and '_', and no '=' is left.
        let all = DoHProber.base64url((0...255).map { UInt8($0) } + [0xFB, 0xFF])
        #expect(!all.contains("+") && !all.contains("/") && !all.contains("="))
        #expect(all.contains("-") && all.contains("_"))
    }

    @Test func evidenceNeedsVerifiedHTTPS() throws {
        #expect(try DoHProbeConfig(name: "example.com", url: Self.url).evidence == .internet)
        #expect(try DoHProbeConfig(name: "example.com", url: Self.url, insecureSkipVerify: true).evidence == .local)
        #expect(try DoHProbeConfig(name: "example.com", url: "http://dns.example/dns-query").evidence == .local)
        #expect(Probe.doh("example.com", url: Self.url).spec.evidence == .internet)
        #expect(ProbeKind.doh.typicalEvidence == .internet && ProbeType.doh.kind.section == "doh")
    }

    @Test(arguments: [
        ("192.0.2.1", url, "doh name \"192.0.2.1\": is an IP address; a DNS probe needs a name"),
        ("example.com", "ftp://dns.example/", "doh url: "),
        ("example.com", "", "doh url: missing: give the DoH server's URL, as https://dns.example/dns-query"),
    ])
    func refusals(name: String, url: String, message: String) {
        let probe = Probe.doh(name, url: url)
        #expect(probe.problem?.hasPrefix(message) == true, "\(probe.problem ?? "no problem")")
    }

    @Test func theFlagGivesNameAtURL() throws {
        let flags = try FlagParser(ProbeFlags.specs).parse(["--probe.doh=example.com@\(Self.url)"])
        let specs = try ProbeFlags.probes(flags, environment: [ProbeFlags.refuseDefaultsVariable: "1"])
        #expect(specs.map(\.name) == ["example.com@\(Self.url)"] && specs.map(\.type) == [.doh])
        #expect(specs[0].target == "example.com@\(Self.url)" && specs[0].bindsToUplinks)
        #expect(throws: UsageError.self) {
            let bare = try FlagParser(ProbeFlags.specs).parse(["--probe.doh=example.com"])
            _ = try ProbeFlags.probes(bare, environment: [ProbeFlags.refuseDefaultsVariable: "1"])
        }
    }

    @Test func theFileDecodesTheSection() throws {
        let config = try ConfigLoader.parse(
            """
            probes:
              - type: doh
                target: example.com
                family: ipv6
                doh:
                  url: \(Self.url)
                  record_type: aaaa
                  expect_answer: {addresses: ["2001:db8::1"]}
                  tls: {server_name: dns.example}
            """, file: "t.yml")
        let doh = try #require(config.probes[0].configuration as? DoHProbeConfig)
        #expect(doh.name == "example.com" && doh.queryType == .aaaa && doh.urlText == Self.url)
        #expect(doh.serverName == "dns.example" && doh.client.family == .ipv6)
        #expect(doh.expectAnswer == .addresses(["2001:db8::1"]))
    }

    /// Each error points at the key (`file:line:col`), as the other kinds' do.
    @Test(arguments: [
        (
            "probes:\n  - {type: doh, target: example.com}\n",
            "t.yml:2:5: probes[0]: expected a key \"doh\" (a doh section with the server's url), found none"
        ),
        (
            "probes:\n  - {type: doh, target: example.com, doh: {}}\n",
            "t.yml:2:43: probes[0].doh: expected a key \"url\" (the https:// URL of a DoH server, as https://dns.example/dns-query), found none"
        ),
        (
            "probes:\n  - {type: doh, target: example.com, doh: {url: \"\(url)\", record_typ: A}}\n",
            "probes[0].doh.record_typ: expected one of the keys url, record_type, allow_private_answers, expect_answer, tls, found an unknown key (did you mean \"record_type\"?)"
        ),
        (
            "probes:\n  - {type: doh, target: example.com, doh: {url: \"http://x/q\", tls: {server_name: x}}}\n",
            "probes[0].doh.tls: expected TLS options on an https:// url only, found doh tls: applies to an https:// url only"
        ),
        (
            "probes:\n  - {type: doh, target: example.com, doh: {url: \"\(url)\", record_type: TXT, expect_answer: {addresses: [192.0.2.1]}}}\n",
            "probes[0].doh.expect_answer: expected an answer expectation that fits the record type, found doh expect_answer addresses: apply to A and AAAA records, not TXT; use regex"
        ),
        (
            "probes:\n  - {type: dns, target: example.com, doh: {url: \"\(url)\"}}\n",
            "t.yml:2:38: probes[0].doh: expected no doh section on a probe of type dns, found a doh section (it applies to type doh)"
        ),
    ])
    func fileErrors(text: String, message: String) {
        let error = ConfigSchemaTests.error(text)
        #expect(error?.contains(message) == true, "\(error ?? "no error")")
    }
}
