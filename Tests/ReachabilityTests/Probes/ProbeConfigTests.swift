import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

@Suite struct ProbeConfigTests {
    @Test(arguments: [
        ("example.com:443", "example.com", 443), ("127.0.0.1:80", "127.0.0.1", 80), ("[::1]:8080", "::1", 8080),
        ("[2001:db8::1]:1", "2001:db8::1", 1), ("Example.COM.:65535", "Example.COM", 65535),
    ])
    func hostPortParses(text: String, host: String, port: Int) throws {
        let parsed = try HostPort(parsing: text)
        #expect(parsed.host == host)
        #expect(Int(parsed.port) == port)
    }

    @Test func hostPortDefaults() throws {
        #expect(try HostPort(parsing: "::1", defaultPort: 53) == HostPort(host: "::1", port: 53))
        #expect(try HostPort(parsing: "[::1]", defaultPort: 53) == HostPort(host: "::1", port: 53))
        #expect(try HostPort(parsing: "192.0.2.53", defaultPort: 53).description == "192.0.2.53:53")
        #expect(try HostPort(parsing: "[::1]:5353").description == "[::1]:5353")
    }

    @Test(arguments: [
        ("", "empty"), ("example.com", "missing port"), ("example.com:", "port must be"),
        ("example.com:0", "port must be"),
        ("example.com:65536", "port must be"), ("example.com:8o", "port must be"), ("example.com:+80", "port must be"),
        ("[::1", "without ']'"), ("[::1]80", "expected ':port'"), ("[127.0.0.1]:80", "IPv6"),
        ("::1:80:zz", "not an IPv6"),
        ("bad host:80", "neither an IP"), ("a..b:80", "neither an IP"), ("-x.com:80", "neither an IP"),
    ])
    func hostPortRejects(text: String, why: String) {
        #expect {
            _ = try HostPort(parsing: text)
        } throws: { error in
            (error as? ProbeConfigError)?.message.contains(why) == true
        }
    }

    @Test func tcpConfigValidates() throws {
        let c = try TCPProbeConfig(target: "[::1]:22", family: .ipv6, interface: "lo")
        #expect(c.target == HostPort(host: "::1", port: 22))
        #expect(throws: ProbeConfigError.self) { try TCPProbeConfig(target: "127.0.0.1:22", family: .ipv6) }
        #expect(throws: ProbeConfigError.self) { try TCPProbeConfig(target: "localhost:22", interface: "") }
        #expect(throws: ProbeConfigError.self) {
            try TCPProbeConfig(target: "localhost:22", interface: "a-very-long-ifname")
        }
        #expect(throws: ProbeConfigError.self) { try TCPProbeConfig(target: "localhost:22", interface: "eth0/1") }
        #expect(throws: ProbeConfigError.self) { try TCPProbeConfig(target: "localhost:22", maxAddresses: 0) }
        let error = #expect(throws: ProbeConfigError.self) { try TCPProbeConfig(target: "localhost") }
        #expect(error?.message == "tcp target \"localhost\": missing port, expected host:port or [ipv6]:port")
    }

    @Test func dnsConfigValidates() throws {
        let c = try DNSProbeConfig(name: "Example.com.", queryType: .aaaa, server: "[::1]:5353", interface: "lo")
        #expect(c.name == "Example.com")
        #expect(c.server?.description == "[::1]:5353")
        #expect(try DNSProbeConfig(name: "example.com", server: "127.0.0.1").server?.description == "127.0.0.1:53")
        #expect(try DNSProbeConfig(name: "example.com").server == nil)
        #expect(throws: ProbeConfigError.self) { try DNSProbeConfig(name: "192.0.2.1") }
        #expect(throws: ProbeConfigError.self) { try DNSProbeConfig(name: "bad_name!") }
        #expect(throws: ProbeConfigError.self) { try DNSProbeConfig(name: "example.com", server: "dns.example.com") }
        #expect(throws: ProbeConfigError.self) { try DNSProbeConfig(name: "example.com", interface: "lo") }
        #expect(throws: ProbeConfigError.self) {
            try DNSProbeConfig(name: "example.com", server: "::1", retransmitInterval: .zero)
        }
        let error = #expect(throws: ProbeConfigError.self) {
            try DNSProbeConfig(name: "example.com", server: "127.0.0.1:99999")
        }
        #expect(error?.message.contains("port must be a number 1–65535") == true)
    }
}
