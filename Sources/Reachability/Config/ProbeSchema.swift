/// The schema of one `probes:` entry and its type-specific sections (`http`, `dns`, `icmp`).
/// Values the probe configs check themselves (URL syntax, DNS names, CA files) are checked
/// again when the probe is built (`ConfigProbeBuilder`); this layer checks shape and
/// combinations, so that a typo never silently turns a check off.
enum ProbeSchema {
    static let keys = [
        "name", "type", "target", "interval", "timeout", "family", "labels", "http", "dns", "icmp", "mtu", "tcp",
    ]
    static let httpKeys = [
        "mode", "method", "expected_status", "expected_body", "follow_redirects", "max_redirects", "host_header",
        "headers", "tls", "proxy_url", "proxy_from_environment",
    ]
    static let bodyKeys = ["contains", "equals", "prefix"]
    static let tlsKeys = ["ca_file", "server_name", "insecure_skip_verify"]
    static let dnsKeys = [
        "server", "transport", "record_type", "allow_private_answers", "expect_answer", "tls", "tcp_fallback",
    ]
    static let expectAnswerKeys = ["regex", "addresses"]
    static let icmpKeys = ["count", "size", "dont_fragment"]
    static let mtuKeys = ["expect"]
    static let tcpKeys = ["expect", "canary_port"]
    /// Label names a probe's constant labels may not use: the join key, the series' own labels,
    /// and the labels Prometheus attaches at scrape time.
    static let reservedLabels: Set<String> = ["target", "probe", "interface", "le", "job", "instance"]
    /// The longest label value (and label name) a probe may export, in bytes: every series of the
    /// probe repeats it at every scrape (Prometheus' `label_value_length_limit`, set here).
    static let maxLabelValueBytes = 1024

    static func decode(_ node: YAMLNode, path: String, file: String) throws(ConfigError) -> ProbeDefinition {
        let p = try ConfigMap(node, path: path, file: file, keys: keys, what: "a probe with name, type and target")
        guard let type = try p.choice("type", ProbeType.self) else {
            throw p.missing("type", expected: "http, https, icmp, dns, tcp or mtu")
        }
        guard let target = try p.string("target", expected: targetText(type)) else {
            throw p.missing("target", expected: targetText(type))
        }
        // The target is a label value (the probe's name when it has none): bounded like one.
        guard target.utf8.count <= maxLabelValueBytes else {
            throw p.fail(
                "target", expected: "a target of at most \(maxLabelValueBytes) bytes (it is a label value)",
                found: "\(target.utf8.count) bytes")
        }
        // An mtu probe usually shares its host with an icmp probe: its default name says which it is.
        let defaultName = type == .mtu ? Probe.mtuName(target) : target
        var def = ProbeDefinition(name: defaultName, type: type, target: target, mark: node.mark, path: path)
        for e in p.entries { def.marks[e.key] = e.value.mark }
        if let name = try p.string("name") {
            if let bad = name.unicodeScalars.first(where: { $0 == "@" || $0.value < 0x20 || $0.value == 0x7F }) {
                throw p.fail(
                    "name", expected: "a name without '@' or control characters", found: name.debugDescription,
                    hint: bad == "@" ? "'@' separates the uplink in target labels (name@eth1)" : nil)
            }
            guard name.utf8.count <= 200 else {
                throw p.fail("name", expected: "a name of at most 200 bytes", found: "\(name.utf8.count) bytes")
            }
            def.name = name
        }
        if p.value("name") == nil, target.contains("@") {
            throw p.fail(
                "target", expected: "a target without '@', or a separate name", found: target.debugDescription,
                hint: "'@' separates the uplink in target labels; give the probe a name")
        }
        def.interval = try ConfigSchema.positive(p, "interval")
        def.timeout = try ConfigSchema.positive(p, "timeout")
        if let i = def.interval, let t = def.timeout, !MonitorSettings.timeoutFits(t, interval: i) {
            throw p.fail("timeout", expected: "a timeout below the probe's interval (\(DurationParser.format(i)))")
        }
        def.family = try p.choice("family", FamilyPreference.self)
        if type == .dns, p.has("family") {
            throw p.fail(
                "family", expected: "no family on a dns probe", found: "family: \(def.family?.rawValue ?? "")",
                hint: "the server address decides the transport; dns.record_type (A or AAAA) decides the answer")
        }
        def.labels = try labels(p)
        for (section, owner) in [
            ("http", [ProbeType.http, .https]), ("dns", [.dns]), ("icmp", [.icmp]), ("mtu", [.mtu]), ("tcp", [.tcp]),
        ]
        where p.has(section) && !owner.contains(type) {
            throw ConfigError(
                file: file, mark: p.keyMark(section), path: p.path(section),
                expected: "no \(section) section on a probe of type \(type.rawValue)", found: "a \(section) section",
                hint: "it applies to type \(owner.map(\.rawValue).joined(separator: " or "))")
        }
        switch type {
        case .http, .https:
            try checkURL(p, type: type, target: target)
            def.http = try http(p.map("http", keys: httpKeys, what: "the HTTP options"), type: type, marks: &def.marks)
        case .dns:
            let m = try p.map("dns", keys: dnsKeys, what: "the DNS options")
            for e in m?.entries ?? [] { def.marks["dns.\(e.key)"] = e.value.mark }
            def.dns = try dns(m)
        case .icmp:
            var icmp = ICMPOptions()
            if let m = try p.map("icmp", keys: icmpKeys, what: "the ICMP options") {
                icmp.count = try m.int("count", 1...1000) ?? icmp.count
                icmp.size = try m.int("size", 0...ICMPProber.Configuration.maxPayloadSize) ?? icmp.size
                icmp.dontFragment = try m.bool("dont_fragment") ?? false
            }
            def.icmp = icmp
        case .mtu:
            var mtu = MTUOptions()
            if let m = try p.map("mtu", keys: mtuKeys, what: "the MTU options") {
                mtu.expect = try m.int("expect", MTUProber.Configuration.expectRange) ?? mtu.expect
            }
            def.mtu = mtu
        case .tcp:
            var tcp = TCPOptions()
            if let m = try p.map("tcp", keys: tcpKeys, what: "the TCP options") {
                tcp.expect = try m.string("expect", expected: "a regular expression such as ^SSH-2\\.0-")
                if let port = try m.int("canary_port", 0...65535) { tcp.canaryPort = port == 0 ? nil : UInt16(port) }
                for e in m.entries { def.marks["tcp.\(e.key)"] = e.value.mark }
            }
            def.tcp = tcp
        }
        return def
    }

    static func targetText(_ type: ProbeType) -> String {
        switch type {
        case .http: "an http:// URL"
        case .https: "an https:// URL"
        case .icmp, .mtu: "a host name or IP address"
        case .dns: "a DNS name to look up"
        case .tcp: "host:port"
        }
    }

    static func checkURL(_ p: ConfigMap, type: ProbeType, target: String) throws(ConfigError) {
        let url: ProbeURL
        do throws(ProbeURL.ParseError) { url = try ProbeURL(target) } catch {
            throw p.fail("target", expected: targetText(type), hint: error.message)
        }
        let scheme: ProbeType = url.scheme == .https ? .https : .http
        if scheme != type {
            throw p.fail(
                "target", expected: targetText(type),
                hint: "type \(type.rawValue) needs the \(type.rawValue):// scheme; or set type: \(scheme.rawValue)")
        }
    }

    static func labels(_ p: ConfigMap) throws(ConfigError) -> [ProbeLabel] {
        guard let node = p.value("labels") else { return [] }
        guard case .map(let entries) = node.kind else {
            throw p.fail("labels", expected: "a map of label names to values")
        }
        var out: [ProbeLabel] = []
        for e in entries {
            let path = KeyPath.child(p.path("labels"), e.key)
            guard MetricName.isValidLabelName(e.key), !e.key.hasPrefix("__") else {
                throw ConfigError(
                    file: p.file, mark: e.keyMark, path: path,
                    expected: "a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, not starting with __)",
                    found: e.key.debugDescription)
            }
            guard !reservedLabels.contains(e.key) else {
                throw ConfigError(
                    file: p.file, mark: e.keyMark, path: path,
                    expected: "a label name other than \(reservedLabels.sorted().joined(separator: ", "))",
                    found: e.key.debugDescription,
                    hint: "these are the probe series' own labels or Prometheus's target labels")
            }
            guard let s = e.value.scalar, !s.isNull, !s.text.isEmpty else {
                throw ConfigError(
                    file: p.file, mark: e.value.mark, path: path, expected: "a non-empty label value",
                    found: e.value.foundDescription)
            }
            guard e.key.utf8.count <= maxLabelValueBytes, s.text.utf8.count <= maxLabelValueBytes else {
                throw ConfigError(
                    file: p.file, mark: e.value.mark, path: path,
                    expected: "a label name and value of at most \(maxLabelValueBytes) bytes each",
                    found: "\(e.key.utf8.count) and \(s.text.utf8.count) bytes")
            }
            out.append(ProbeLabel(e.key, s.text))
        }
        return out
    }

    // Long on purpose: the `http:` keys checked one after another, in the order the docs list them.
    static func http(_ m: ConfigMap?, type: ProbeType, marks: inout [String: YAMLMark]) throws(ConfigError)
        -> HTTPOptions
    {
        var o = HTTPOptions()
        guard let m else { return o }
        for e in m.entries { marks["http.\(e.key)"] = e.value.mark }
        o.mode = try m.choice("mode", HTTPOptions.Mode.self) ?? .captive
        if let method = try m.string("method", expected: "GET or HEAD") {
            guard let v = HTTPProbeConfig.Method(rawValue: method) else {
                throw m.fail("method", expected: "GET or HEAD")
            }
            o.method = v
        }
        if m.has("expected_status") {
            guard o.mode == .captive else {
                throw m.fail(
                    "expected_status", expected: "no expected_status in web mode", found: "expected_status",
                    hint: "web mode accepts 200–399")
            }
            o.expectedStatus = try statusCodes(m)
        }
        if let b = try m.map("expected_body", keys: bodyKeys, what: "one of contains, equals, prefix") {
            guard o.mode == .captive else {
                throw m.fail(
                    "expected_body", expected: "no expected_body in web mode", found: "expected_body",
                    hint: "body checks are captive-mode checks")
            }
            guard b.entries.count == 1, let key = b.keys.first,
                let text = try b.string(key, expected: "the text to look for")
            else {
                throw ConfigError(
                    file: m.file, mark: b.node.mark, path: b.path, expected: "exactly one of contains, equals, prefix",
                    found: b.entries.isEmpty ? "none" : b.keys.joined(separator: " and "))
            }
            o.expectedBody = key == "contains" ? .contains(text) : key == "equals" ? .exact(text) : .prefix(text)
            if o.method == .head { throw m.fail("method", expected: "GET (a body check needs a body)", found: "HEAD") }
        }
        o.followRedirects = try m.bool("follow_redirects")
        if o.mode == .captive, o.followRedirects == true {
            throw m.fail(
                "follow_redirects", expected: "false or nothing in captive mode", found: "true",
                hint: "in captive mode a redirect is the portal signal; use mode: web to follow")
        }
        if m.has("max_redirects") {
            guard o.mode == .web else {
                throw m.fail(
                    "max_redirects", expected: "no max_redirects in captive mode", found: "max_redirects",
                    hint: "captive mode never follows redirects")
            }
            o.maxRedirects = try m.int("max_redirects", 0...100)
        }
        o.hostHeader = try m.string("host_header", expected: "a host name")
        if let node = m.value("headers") {
            guard case .map(let entries) = node.kind else {
                throw m.fail("headers", expected: "a map of header names to values")
            }
            for e in entries {
                guard let s = e.value.scalar, !s.isNull else {
                    throw ConfigError(
                        file: m.file, mark: e.value.mark, path: KeyPath.child(m.path("headers"), e.key),
                        expected: "a header value", found: e.value.foundDescription)
                }
                o.headers.append(HTTPProbeConfig.Header(e.key, s.text))
                marks["http.headers"] = e.keyMark
            }
        }
        o.proxyURL = try m.string("proxy_url", expected: "an http:// proxy URL (http://[user:password@]host[:port])")
        o.proxyFromEnvironment = try m.bool("proxy_from_environment") ?? false
        if o.proxyURL != nil, o.proxyFromEnvironment {
            throw m.fail(
                "proxy_from_environment", expected: "either proxy_url or proxy_from_environment", found: "both",
                hint: "proxy_url names the proxy; proxy_from_environment takes HTTP_PROXY/HTTPS_PROXY/NO_PROXY")
        }
        if let t = try m.map("tls", keys: tlsKeys, what: "the TLS options") {
            guard type == .https || o.mode == .web else {
                throw ConfigError(
                    file: m.file, mark: m.keyMark("tls"), path: m.path("tls"),
                    expected: "no tls section on a captive http:// probe",
                    found: "a tls section",
                    hint: "tls applies to https probes, and to web probes that may be redirected to https")
            }
            for e in t.entries { marks["http.tls.\(e.key)"] = e.value.mark }
            o.tls.caFile = try t.string("ca_file", expected: "a path to a PEM file of CA certificates")
            o.tls.serverName = try t.string("server_name", expected: "a host name")
            o.tls.insecureSkipVerify = try t.bool("insecure_skip_verify") ?? false
        }
        return o
    }

    /// `expected_status`: one status set (`204`, `"200,204"`, `200-399`, `2xx`) or a list of them.
    static func statusCodes(_ m: ConfigMap) throws(ConfigError) -> [Int] {
        let expected = "a status set such as 204, 200-399 or 2xx, or a list of them, such as [200, 204]"
        guard let node = m.value("expected_status") else { return [] }
        let items: [YAMLNode]
        switch node.kind {
        case .scalar: items = [node]
        case .list(let list) where !list.isEmpty: items = list
        default: throw m.fail("expected_status", expected: expected)
        }
        var codes = Set<Int>()
        for (i, item) in items.enumerated() {
            let path = node.scalar == nil ? KeyPath.index(m.path("expected_status"), i) : m.path("expected_status")
            guard let text = item.scalar?.text, !(item.scalar?.isNull ?? true) else {
                throw ConfigError(
                    file: m.file, mark: item.mark, path: path, expected: expected, found: item.foundDescription)
            }
            do throws(HTTPStatusSet.ParseError) {
                codes.formUnion(try HTTPStatusSet.parse(text))
            } catch {
                throw ConfigError(
                    file: m.file, mark: item.mark, path: path,
                    expected: "HTTP status codes (100–599), ranges such as 200-399 or classes such as 2xx",
                    found: item.foundDescription, hint: error.message)
            }
        }
        return codes.sorted()
    }

    static func dns(_ m: ConfigMap?) throws(ConfigError) -> DNSOptions {
        var o = DNSOptions()
        guard let m else { return o }
        o.server = try m.string(
            "server",
            expected:
                "an IP address, optionally with a port and a scheme (192.0.2.53, [2001:db8::53]:5353, tls://192.0.2.53)"
        )
        o.transport = try m.choice("transport", DNSTransport.self)
        let types = DNSQueryType.allCases.map(\.rawValue).joined(separator: ", ")
        if let type = try m.string("record_type", expected: types) {
            guard let t = DNSQueryType(rawValue: type.uppercased()) else {
                throw m.fail("record_type", expected: types)
            }
            o.recordType = t
        }
        o.allowPrivateAnswers = try m.bool("allow_private_answers") ?? false
        o.tcpFallback = try m.bool("tcp_fallback") ?? true
        if let e = try m.map("expect_answer", keys: expectAnswerKeys, what: "regex or addresses") {
            guard e.entries.count == 1, let key = e.keys.first else {
                throw ConfigError(
                    file: m.file, mark: e.node.mark, path: e.path, expected: "exactly one of regex, addresses",
                    found: e.entries.isEmpty ? "none" : e.keys.joined(separator: " and "))
            }
            if key == "regex" {
                o.expectAnswer = .regex(try e.string("regex", expected: "a regular expression") ?? "")
            } else {
                let expected = "a list of IP addresses"
                let items = try e.list("addresses", expected: expected) ?? []
                var set = Set<String>()
                for (i, item) in items.enumerated() {
                    guard let text = item.scalar?.text, SocketAddress(ip: text) != nil else {
                        throw ConfigError(
                            file: m.file, mark: item.mark, path: KeyPath.index(e.path("addresses"), i),
                            expected: "an IP address", found: item.foundDescription)
                    }
                    set.insert(text)
                }
                o.expectAnswer = .addresses(set)
            }
        }
        if let t = try m.map("tls", keys: tlsKeys, what: "the TLS options") {
            o.tls.caFile = try t.string("ca_file", expected: "a path to a PEM file of CA certificates")
            o.tls.serverName = try t.string("server_name", expected: "a host name")
            o.tls.insecureSkipVerify = try t.bool("insecure_skip_verify") ?? false
        }
        return o
    }
}
