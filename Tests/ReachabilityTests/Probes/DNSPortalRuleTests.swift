import Testing

@testable import Reachability

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
}
