import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// blackbox module files: what loads, what is honoured, and what is refused with its key.
@Suite struct BlackboxModuleFileTests {
    func parse(_ text: String) throws(ConfigError) -> BlackboxModuleFile {
        try BlackboxModuleFile.parse(Array(text.utf8), file: "blackbox.yml")
    }

    /// The file's error, else its first refused module's.
    func error(_ text: String) -> String? {
        do throws(ConfigError) {
            return try parse(text).refused.values.first?.description
        } catch { return error.description }
    }

    /// blackbox's own `blackbox.yml` modules that the probers can run load as written.
    @Test func theShippedModulesThatFitLoad() throws {
        let file = try parse(
            """
            modules:
              http_2xx:
                prober: http
                http:
                  preferred_ip_protocol: "ip4"
              tcp_connect:
                prober: tcp
              icmp:
                prober: icmp
              http_2xx_example:
                prober: http
                timeout: 5s
                http:
                  valid_http_versions: ["HTTP/1.1", "HTTP/2.0"]
                  valid_status_codes: []  # Defaults to 2xx
                  method: GET
                  headers:
                    Host: vhost.example.com
                    Accept-Language: en-US
                    Origin: example.com
                  follow_redirects: true
                  fail_if_ssl: false
                  fail_if_not_ssl: false
                  fail_if_body_matches_regexp:
                    - "Could not connect to database"
                  fail_if_body_not_matches_regexp:
                    - "Download the latest version here"
                  fail_if_header_matches: # Verifies that no cookies are set
                    - header: Set-Cookie
                      allow_missing: true
                      regexp: '.*'
                  fail_if_header_not_matches:
                    - header: Access-Control-Allow-Origin
                      regexp: '(\\*|example\\.com)'
                  tls_config:
                    insecure_skip_verify: false
                  preferred_ip_protocol: "ip4" # defaults to "ip6"
                  ip_protocol_fallback: false  # no fallback to "ip6"
              dns_tcp_example:
                prober: dns
                dns:
                  transport_protocol: "tcp" # defaults to "udp"
                  preferred_ip_protocol: "ip4" # defaults to "ip6"
                  query_name: "www.prometheus.io"
                  query_type: "A"

            """)
        #expect(
            file.modules.keys.sorted() == ["dns_tcp_example", "http_2xx", "http_2xx_example", "icmp", "tcp_connect"])
        let example = try #require(file.modules["http_2xx_example"])
        #expect(example.timeout == .seconds(5) && example.ipProtocol.preferred == .ipv4 && !example.ipProtocol.fallback)
        guard case .http(let h) = example.settings else {
            Issue.record("not http")
            return
        }
        #expect(h.hostHeader == "vhost.example.com" && h.headers.count == 2)
        #expect(h.checks.versions == ["HTTP/1.1", "HTTP/2.0"] && h.checks.statusCodes.isEmpty)
        #expect(h.checks.failIfHeaderMatches == [.init(header: "Set-Cookie", pattern: ".*", allowMissing: true)])
        #expect(h.checks.failIfBodyNotMatches == ["Download the latest version here"])
        #expect(example.text.contains("http_2xx_example:") && !example.text.contains("dns_tcp_example"))
        let defaults = try #require(file.modules["http_2xx"])
        #expect(defaults.ipProtocol.preferred == .ipv4 && defaults.ipProtocol.fallback)
        #expect(file.modules["icmp"]?.ipProtocol.preferred == .ipv6, "blackbox prefers ip6 by default")
        #expect(file.refused.isEmpty)
    }

    /// Debian's own /etc/prometheus/blackbox.yml (upstream 0.23.0's) loads: its grpc modules and
    /// icmp_ttl5 are refused each with the key and why; every other module works.
    @Test func debiansBlackboxYmlLoadsWithItsRefusedModules() throws {
        let file = try parse(
            """
            modules:
              http_2xx:
                prober: http
              http_post_2xx:
                prober: http
                http:
                  method: POST
              tcp_connect:
                prober: tcp
              pop3s_banner:
                prober: tcp
                tcp:
                  query_response:
                  - expect: "^+OK"
                  tls: true
                  tls_config:
                    insecure_skip_verify: false
              grpc:
                prober: grpc
                grpc:
                  tls: true
                  preferred_ip_protocol: "ip4"
              grpc_plain:
                prober: grpc
                grpc:
                  tls: false
                  service: "service1"
              ssh_banner:
                prober: tcp
                tcp:
                  query_response:
                  - expect: "^SSH-2.0-"
                  - send: "SSH-2.0-blackbox-ssh-check"
              irc_banner:
                prober: tcp
                tcp:
                  query_response:
                  - send: "NICK prober"
                  - send: "USER prober prober prober :prober"
                  - expect: "PING :([^ ]+)"
                    send: "PONG ${1}"
                  - expect: "^:[^ ]+ 001"
              icmp:
                prober: icmp
              icmp_ttl5:
                prober: icmp
                timeout: 5s
                icmp:
                  ttl: 5

            """)
        #expect(
            file.modules.keys.sorted() == [
                "http_2xx", "http_post_2xx", "icmp", "irc_banner", "pop3s_banner", "ssh_banner", "tcp_connect",
            ])
        #expect(file.refused.keys.sorted() == ["grpc", "grpc_plain", "icmp_ttl5"])
        #expect(file.refused["grpc"]?.description.contains("blackbox.yml:19:13: modules.grpc.prober") == true)
        #expect(file.refused["icmp_ttl5"]?.description.contains("modules.icmp_ttl5.icmp.ttl: expected 64 or 0") == true)
    }

    /// What the probers cannot do is refused with the file, line, key and why; never ignored.
    @Test(arguments: [
        (
            "modules:\n  p:\n    prober: http\n    http:\n      method: TRACE\n",
            "blackbox.yml:5:15: modules.p.http.method: expected HEAD, GET, POST, PUT, PATCH, DELETE, OPTIONS, found \"TRACE\""
        ),
        (
            "modules:\n  p:\n    prober: http\n    http:\n      body: '{}'\n",
            "modules.p.http.method: expected POST, PUT, PATCH, DELETE or OPTIONS with a body"
        ),
        (
            "modules:\n  p:\n    prober: tcp\n    tcp:\n      query_response:\n        - expect: a\n          labels: [{name: x, value: y}]\n",
            "modules.p.tcp.query_response[0].labels: expected no labels"
        ),
        ("modules:\n  p:\n    prober: icmp\n    icmp:\n      ttl: 5\n", "modules.p.icmp.ttl: expected 64 or 0"),
        (
            "modules:\n  p:\n    prober: icmp\n    icmp:\n      source_ip_address: 127.0.0.1\n",
            "bind the module to an interface with uplink:"
        ),
        (
            "modules:\n  p:\n    prober: grpc\n",
            "modules.p.prober: expected http, tcp, icmp or dns, found \"grpc\" (this exporter has no grpc prober)"
        ),
        (
            "modules:\n  p:\n    prober: dns\n    dns:\n      query_name: a.example\n",
            "modules.p.dns: expected a key \"query_type\""
        ),
        (
            "modules:\n  p:\n    prober: dns\n    dns:\n      query_name: a.example\n      query_type: A\n      dns_over_tls: true\n",
            "modules.p.dns.dns_over_tls: expected transport_protocol: tcp beside it"
        ),
        (
            "modules:\n  p:\n    prober: dns\n    dns:\n      query_name: a.example\n      query_type: A\n      validate_authority_rrs:\n        fail_if_matches_regexp: [x]\n",
            "modules.p.dns.validate_authority_rrs: expected no validate_authority_rrs (not supported by this exporter)"
        ),
        (
            "modules:\n  p:\n    prober: http\n    http:\n      fail_if_body_matches_regexp: ['(']\n",
            "modules.p.http.fail_if_body_matches_regexp[0]: expected a regular expression"
        ),
        (
            "modules:\n  p:\n    prober: http\n    http:\n      vaild_status_codes: [200]\n",
            "(did you mean \"valid_status_codes\"?)"
        ),
        (
            "modules:\n  p:\n    prober: http\n    tcp: {}\n",
            "modules.p.tcp: expected only the http section (prober: http)"
        ),
        (
            "modules:\n  p:\n    prober: http\n    http:\n      tls_config:\n        cert_file: c.pem\n",
            "client certificates are not presented here"
        ),
        (
            "modules:\n  p:\n    prober: http\n    http:\n      enable_http2: true\n",
            "the HTTP client speaks HTTP/1.1 only"
        ),
        ("modules:\n  p:\n    prober: http\n    timeout: 0s\n", "modules.p.timeout: expected a duration above 0"),
        (
            "modules:\n  p:\n    prober: http\n    http:\n      valid_http_versions: [HTTP/2.0]\n",
            "modules.p.http.valid_http_versions: expected HTTP/1.1 or HTTP/1.0 among them"
        ),
        ("probes: []\n", "expected one of the keys modules"),
        ("", "found an empty file"),
    ])
    func refusals(text: String, message: String) {
        let e = error(text)
        #expect(e?.contains(message) == true, "\(e ?? "loaded")")
    }

    @Test func secretsAreNotShown() {
        let e = error(
            "modules:\n  p:\n    prober: http\n    http:\n      basic_auth: {username: u, password: hunter2}\n      bearer_token: t\n"
        )
        #expect(e?.contains("one way to authenticate") == true && e?.contains("hunter2") == false, "\(e ?? "")")
    }

    @Test func authorizationBecomesAHeader() throws {
        let file = try parse(
            "modules:\n  p:\n    prober: http\n    http:\n      basic_auth: {username: u, password: p}\n")
        guard case .http(let h) = file.modules["p"]?.settings else {
            Issue.record("not http")
            return
        }
        #expect(h.authorization == "Basic dTpw")
        let url = try ProbeURL("http://127.0.0.1/")
        #expect(try h.config(url: url, address: nil, interface: nil).headers == [.init("Authorization", "Basic dTpw")])
        // A target URL's user information comes first, as Go's client sends it.
        let given = try h.config(url: url, address: nil, interface: nil, userinfo: "Basic eDp5")
        #expect(given.headers == [.init("Authorization", "Basic eDp5")])
    }
}
