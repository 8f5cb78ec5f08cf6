import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

@Suite struct HTTPProbeURLTests {
    @Test(arguments: [
        ("http://example.com", "http", "example.com", 80, "/", "http://example.com/"),
        (
            "HTTPS://Example.COM:8443/a/b?c=d#frag", "https", "example.com", 8443, "/a/b?c=d",
            "https://example.com:8443/a/b?c=d"
        ),
        ("http://[::1]:8080/x", "http", "::1", 8080, "/x", "http://[::1]:8080/x"),
        ("https://[2001:db8::1]/", "https", "2001:db8::1", 443, "/", "https://[2001:db8::1]/"),
        ("http://127.0.0.1?q=1", "http", "127.0.0.1", 80, "/?q=1", "http://127.0.0.1/?q=1"),
        ("  http://h:/a b/é  ", "http", "h", 80, "/a%20b/%C3%A9", "http://h/a%20b/%C3%A9"),
        (
            "http://captive.apple.com/hotspot-detect.html", "http", "captive.apple.com", 80, "/hotspot-detect.html",
            "http://captive.apple.com/hotspot-detect.html"
        ),
    ])
    func parses(input: String, scheme: String, host: String, port: Int, target: String, text: String) throws {
        let url = try ProbeURL(input)
        #expect(url.scheme.rawValue == scheme)
        #expect(url.host == host)
        #expect(Int(url.port) == port)
        #expect(url.target == target)
        #expect(url.description == text)
    }

    @Test(arguments: [
        "ftp://example.com/", "example.com", "http://", "http:///path", "http://user@h/", "http://::1/",
        "http://[zz]/", "http://[127.0.0.1]/", "http://h:0/", "http://h:70000/", "http://h:8a/",
        "http://bad host/", "http://a..b/", "http://h/\r\nX-Injected: 1", "http://[::1/",
    ])
    func rejects(input: String) {
        #expect(throws: ProbeURL.ParseError.self) { _ = try ProbeURL(input) }
    }

    @Test func authorityOmitsDefaultPort() throws {
        #expect(try ProbeURL("https://h:443/").authority == "h")
        #expect(try ProbeURL("http://h:443/").authority == "h:443")
        #expect(try ProbeURL("http://[::1]/").authority == "[::1]")
        #expect(try ProbeURL("http://[::1]/").isIPLiteral)
        #expect(try !ProbeURL("http://localhost/").isIPLiteral)
    }

    /// RFC 3986 §5.4.1 normal examples (with `;p` kept as part of the path), plus HTTP specifics.
    @Test(arguments: [
        ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"), ("/g", "http://a/g"),
        ("//g", "http://g/"), ("?y", "http://a/b/c/d;p?y"), ("g?y", "http://a/b/c/g?y"), ("#s", "http://a/b/c/d;p?q"),
        ("g#s", "http://a/b/c/g"), (";x", "http://a/b/c/;x"), ("", "http://a/b/c/d;p?q"), (".", "http://a/b/c/"),
        ("./", "http://a/b/c/"), ("..", "http://a/b/"), ("../", "http://a/b/"), ("../g", "http://a/b/g"),
        ("../..", "http://a/"), ("../../g", "http://a/g"), ("../../../g", "http://a/g"), ("/./g", "http://a/g"),
        ("/../g", "http://a/g"), ("g.", "http://a/b/c/g."), ("g/../h", "http://a/b/c/h"),
        ("https://login.portal.example:8443/?from=x", "https://login.portal.example:8443/?from=x"),
    ])
    func resolvesReferences(reference: String, expected: String) throws {
        let base = try ProbeURL("http://a/b/c/d;p?q")
        #expect(try base.resolving(reference).description == expected)
    }

    @Test func refusesRedirectsToOtherSchemes() throws {
        let base = try ProbeURL("http://a/")
        #expect(throws: ProbeURL.ParseError.self) { _ = try base.resolving("ftp://a/") }
        #expect(throws: ProbeURL.ParseError.self) { _ = try base.resolving("/x\u{7}y") }
    }

    @Test func appendsQueryItems() throws {
        #expect(try ProbeURL("http://h/p").appendingQueryItem(name: "_rx", value: "1").target == "/p?_rx=1")
        #expect(try ProbeURL("http://h/p?a=b").appendingQueryItem(name: "_rx", value: "1").target == "/p?a=b&_rx=1")
    }
}
