import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

@Suite struct DNSPortalRuleTests {
    @Test(arguments: [
        "10.0.0.1", "10.255.255.255", "172.16.0.1", "172.31.255.254", "192.168.1.1", "127.0.0.1", "127.8.9.10",
        "169.254.1.1", "100.64.0.1", "100.127.255.255", "0.0.0.0", "::1", "::", "fc00::1", "fd12:3456::1",
        "fe80::1", "febf::1", "::ffff:192.168.0.1", "::ffff:127.0.0.1",
    ])
    func privateAddresses(address: String) {
        #expect(DNSPortalRule.isPrivate(address: address))
    }

    @Test(arguments: [
        "192.0.2.1", "8.8.8.8", "172.15.255.255", "172.32.0.1", "100.63.255.255", "100.128.0.1", "169.253.0.1",
        "192.169.0.1", "11.0.0.1", "2001:db8::1", "2606:4700::1111", "fec0::1", "fbff::1", "::ffff:8.8.8.8",
        "not-an-ip",
    ])
    func publicAddresses(address: String) {
        #expect(!DNSPortalRule.isPrivate(address: address))
    }

    @Test func localNamesAreExempt() {
        for name in [
            "router", "localhost", "printer.local", "nas.lan", "db.internal", "x.home.arpa", "a.b.localhost",
            "NAS.LAN.",
        ] {
            #expect(DNSPortalRule.isLocalName(name), "\(name)")
        }
        for name in [
            "example.com", "local.example.com", "lan.example.org", "internal-example.com", "home.arpa.example.net",
        ] {
            #expect(!DNSPortalRule.isLocalName(name), "\(name)")
        }
    }

    @Test func offendingAddressesHonourNameAndOptOut() {
        let answers = ["192.0.2.1", "10.1.1.1"]
        #expect(
            DNSPortalRule.offendingAddresses(answers, name: "example.com", allowPrivateAnswers: false) == ["10.1.1.1"])
        #expect(DNSPortalRule.offendingAddresses(answers, name: "example.com", allowPrivateAnswers: true) == [])
        #expect(DNSPortalRule.offendingAddresses(answers, name: "gw.home.arpa", allowPrivateAnswers: false) == [])
        #expect(DNSPortalRule.offendingAddresses(["192.0.2.1"], name: "example.com", allowPrivateAnswers: false) == [])
    }

    // MARK: - NAT64 (RFC 6052, RFC 7050)

    static func bytes(_ ip: String) -> [UInt8] { SocketAddress(ip: ip)!.addressBytes }

    /// Discovery reads the prefix from where a synthesized `ipv4only.arpa` answer holds
    /// 192.0.0.170/171, for every length RFC 6052 allows (the u octet skipped below /96).
    @Test func nat64PrefixesAreDiscoveredFromIPv4OnlyArpa() throws {
        let cases: [(String, String)] = [
            ("64:ff9b::c000:aa", "64:ff9b::/96"), ("fd64:ff9b:1::c000:ab", "fd64:ff9b:1::/96"),
            ("2001:db8:100:200:c0:0:aa00:0", "2001:db8:100:200::/64"), ("2001:db8:c000:aa::", "2001:db8::/32"),
            ("2001:db8:100:c000:0:aa00::", "2001:db8:100::/48"),
        ]
        for (answer, prefix) in cases {
            #expect(NAT64Prefix.discover(fromAnswers: [Self.bytes(answer)]).map(\.description) == [prefix], "\(answer)")
        }
        #expect(NAT64Prefix.discover(fromAnswers: [Self.bytes("fd00::1"), Self.bytes("2001:db8::1")]).isEmpty)
        #expect(NAT64Prefix.discover(fromAnswers: [[1, 2, 3]]).isEmpty)
        let p = try #require(NAT64Prefix(bytes: Self.bytes("fd64:ff9b:1::"), length: 96))
        #expect(p.embeddedIPv4(Self.bytes("fd64:ff9b:1::c633:6401")) == [198, 51, 100, 1])
        #expect(p.embeddedIPv4(Self.bytes("fd64:ff9b:2::c633:6401")) == nil)
    }

    /// Inside a NAT64 prefix an answer is judged by the IPv4 address it stands for: public is
    /// no portal, private still is; a unique-local answer outside every prefix still is.
    @Test func synthesizedAnswersAreJudgedByTheirIPv4Address() throws {
        let prefix = try #require(NAT64Prefix(bytes: Self.bytes("fd64:ff9b:1::"), length: 96))
        #expect(!DNSPortalRule.isPrivate(address: "fd64:ff9b:1::c633:6401", nat64: [prefix]))
        #expect(DNSPortalRule.isPrivate(address: "fd64:ff9b:1::a00:1", nat64: [prefix]), "10.0.0.1 inside")
        #expect(DNSPortalRule.isPrivate(address: "fd00::1", nat64: [prefix]))
        #expect(DNSPortalRule.isPrivate(address: "fd64:ff9b:1::c633:6401"), "no prefix known: private")
        #expect(
            DNSPortalRule.needsNAT64(["fd64:ff9b:1::c633:6401"], name: "www.example.com", allowPrivateAnswers: false))
        #expect(
            !DNSPortalRule.needsNAT64(
                ["2001:db8::1", "192.0.2.1"], name: "www.example.com", allowPrivateAnswers: false))
        #expect(!DNSPortalRule.needsNAT64(["fd00::1"], name: "nas.lan", allowPrivateAnswers: false))
    }

    /// End to end against a DNS64 on loopback: the probe's own server is asked for
    /// `ipv4only.arpa` once, the synthesized answer is a success, the prefix is kept (and shown);
    /// a server without DNS64 (NXDOMAIN for it) leaves a unique-local answer a portal signal.
    @Test func aDNS64ServerIsNotAPortal() async throws {
        let dns64 = try DNSTestServer(
            host: "::1",
            behaviour: .byName([
                "ipv4only.arpa": ["fd64:ff9b:1::c000:aa", "fd64:ff9b:1::c000:ab"],
                "www.example.com": ["fd64:ff9b:1::c633:6401"],
            ]))
        defer { dns64.stop() }
        let prefixes = NAT64Prefixes()
        let config = try DNSProbeConfig(
            name: "www.example.com", queryType: .aaaa, server: dns64.address.description,
            retransmitInterval: .milliseconds(100))
        let first = await DNSProber(config: config, nat64: prefixes).probe(deadline: .now + .seconds(3))
        #expect(first.status == .success, "\(first.detail)")
        #expect(prefixes.current.map(\.description) == ["fd64:ff9b:1::/96"])
        #expect(dns64.queries == 2)
        _ = await DNSProber(config: config, nat64: prefixes).probe(deadline: .now + .seconds(3))
        #expect(dns64.queries == 3, "the prefix is asked for once per refresh interval, not every round")

        let plain = try DNSTestServer(host: "::1", behaviour: .byName(["www.example.com": ["fd64:ff9b:1::c633:6401"]]))
        defer { plain.stop() }
        let none = NAT64Prefixes()
        let portal = await DNSProber(
            config: try DNSProbeConfig(
                name: "www.example.com", queryType: .aaaa, server: plain.address.description,
                retransmitInterval: .milliseconds(100)), nat64: none
        ).probe(deadline: .now + .seconds(3))
        #expect(portal.status == .portal && portal.reason == .privateAddress, "\(portal.detail)")
        #expect(none.current.isEmpty)
    }

    /// A failed discovery (timeout, SERVFAIL) keeps what was known and asks again next time; a
    /// definite "no such address" is remembered for the interval.
    @Test func aFailedDiscoveryForgetsNothing() async throws {
        let known = try #require(NAT64Prefix(bytes: Self.bytes("fd64:ff9b:1::"), length: 96))
        let prefixes = NAT64Prefixes()
        prefixes.set([known], at: .now - NAT64Prefixes.refreshInterval - .seconds(1))
        var asked = 0
        #expect(
            await prefixes.refresh {
                asked += 1
                return nil
            } == [known])
        #expect(
            await prefixes.refresh {
                asked += 1
                return nil
            } == [known])
        #expect(asked == 2, "a failure is not remembered: the next answer asks again")
        #expect(
            await prefixes.refresh {
                asked += 1
                return []
            } == [])
        #expect(
            await prefixes.refresh {
                asked += 1
                return []
            } == [])
        #expect(asked == 3, "a definite answer holds for the interval")
    }
}
