import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// The configuration schema: a full file decodes to the expected values, and a table of bad
/// files, each with its exact error message (file:line:column, key path, expected, found).
@Suite struct ConfigSchemaTests {
    /// Loads, builds every probe and applies the interval rules, as `check-config` does.
    static func error(_ text: String) -> String? {
        do throws(ConfigError) {
            _ = try CheckConfigCommand.check(ConfigLoader.parse(text, file: "t.yml"))
            return nil
        } catch {
            return error.description
        }
    }

    /// A smokeping-sized file: 10,000 ICMP probes (some 110,000 YAML nodes, no alias) loads and
    /// checks; only what aliases repeat is bounded at 100,000 (`YAMLParser`).
    @Test func tenThousandProbesLoad() throws {
        var text = "global: {interval: 1s, timeout: 500ms}\nprobes:\n"
        for i in 1...10_000 {
            let ip = "10.\(i >> 16 & 255).\(i >> 8 & 255).\(i & 255)"
            text += "  - name: \(ip)\n    type: icmp\n    target: \(ip)\n    icmp: {count: 1}\n"
        }
        #expect(text.utf8.count < ConfigLoader.maximumSize)
        let config = try ConfigLoader.parse(text, file: "t.yml")
        #expect(config.probes.count == 10_000)
        #expect(Self.error(text) == nil)
        // The same with each probe merging a shared anchor (what templating tools write).
        var merged = "probes:\n  - &d {name: first, target: 10.0.0.0, type: icmp, icmp: {count: 1}, timeout: 500ms}\n"
        for i in 1..<10_000 {
            let ip = "10.\(i >> 16 & 255).\(i >> 8 & 255).\(i & 255)"
            merged += "  - {<<: *d, name: \(ip), target: \(ip)}\n"
        }
        #expect(try ConfigLoader.parse(merged, file: "t.yml").probes.count == 10_000)
        // An anchor larger than each probe's own part (labels shared by all) is fine too.
        var labelled = "probes:\n  - &d {name: a, target: 10.0.0.1, type: icmp, icmp: {count: 1}, "
        labelled += "labels: {site: x, rack: y, row: z}}\n"
        for i in 1..<9_000 { labelled += "  - {<<: *d, name: p\(i)}\n" }
        #expect(try ConfigLoader.parse(labelled, file: "t.yml").probes.count == 9_000)
    }

    /// What Helm and Ansible write: anchors, aliases and merge keys, a multi-line flow list, a
    /// block scalar. It decodes to the same probes as the file written out by hand.
    @Test func anchorsAndMergeKeysDecodeAsWrittenOut() throws {
        let templated = try ConfigLoader.parse(
            """
            probes:
              - &portal
                name: portal
                type: http
                target: http://127.0.0.1:8080/generate_204
                interval: 20s
                timeout: 1s
                labels: &labels {site: home}
              - <<: *portal
                name: tls
                type: tcp
                target: >-
                  127.0.0.1:443
                timeout: 2s
              - name: dns
                type: dns
                target: localhost
                labels: *labels
                dns: {
                  server: 127.0.0.1,
                  transport: udp,
                }
            """, file: "t.yml")
        let written = try ConfigLoader.parse(
            """
            probes:
              - {name: portal, type: http, target: "http://127.0.0.1:8080/generate_204", interval: 20s, timeout: 1s, labels: {site: home}}
              - {name: tls, type: tcp, target: "127.0.0.1:443", interval: 20s, timeout: 2s, labels: {site: home}}
              - {name: dns, type: dns, target: localhost, labels: {site: home}, dns: {server: 127.0.0.1, transport: udp}}
            """, file: "t.yml")
        // Equal but for where each value was written (a merged value keeps its anchor's place).
        func unplaced(_ probes: [ProbeDefinition]) -> [ProbeDefinition] {
            probes.map {
                var p = $0
                (p.mark, p.marks) = (YAMLMark(line: 0, column: 0), [:])
                return p
            }
        }
        #expect(unplaced(templated.probes) == unplaced(written.probes))
        #expect(templated.probes.count == 3 && templated.probes[1].marks["interval"] == YAMLMark(line: 6, column: 15))
    }

    /// `tcp:`: an expected banner (no canary then), or a canary port (default 1, `0` for none).
    @Test func tcpOptionsDecode() throws {
        let c = try ConfigLoader.parse(
            """
            probes:
              - {type: tcp, target: "192.0.2.1:22", tcp: {expect: "^SSH-2\\\\.0-"}}
              - {name: b, type: tcp, target: "192.0.2.1:25", tcp: {canary_port: 0}}
              - {name: c, type: tcp, target: "192.0.2.1:993", tcp: {canary_port: 9}}
              - {name: d, type: tcp, target: "192.0.2.1:8080"}
            """, file: "t.yml")
        #expect(c.probes.map { $0.tcp?.expect } == ["^SSH-2\\.0-", nil, nil, nil])
        #expect(c.probes.map { $0.tcp?.canaryPort } == [nil, nil, 9, 1], "a banner check needs no canary")
        #expect(c.probes[3].configuration.isEqual(to: try TCPProbeConfig(target: "192.0.2.1:8080")), "the default")
        _ = try CheckConfigCommand.check(c)
    }

    @Test func uplinkSettingsDecodeMarksSourcesAndIntervals() throws {
        let c = try ConfigLoader.parse(
            """
            uplinks: auto
            uplink_settings:
              wwan0: {mark: 0x2, source: 100.64.0.2}
              eth1: {mark: 7}
              eth2: {source: [198.51.100.2, "2001:db8::2"]}
              wwan1: {interval: 5m, probes: [ssh]}
              wwan2: {budget: 200MB}
              wwan3: {budget: 1GiB, budget_period: 1d, budget_start: 2026-01-05}
            probes:
              - {name: ssh, type: tcp, target: "192.0.2.1:22"}
            """, file: "t.yml")
        #expect(c.uplinkRouting["wwan0"] == UplinkRouting(mark: 2, sources: ["100.64.0.2"]))
        #expect(c.uplinkRouting["eth1"] == UplinkRouting(mark: 7))
        #expect(c.uplinkRouting["eth2"]?.source(for: .ipv6)?.ip == "2001:db8::2")
        #expect(c.uplinkIntervals == ["wwan1": .seconds(300)] && c.uplinkRouting["wwan1"] == nil)
        #expect(c.uplinkProbes == ["wwan1": ["ssh"]])
        #expect(c.uplinkBudgets["wwan2"] == TrafficBudget(bytes: 200_000_000, period: .seconds(30 * 86_400), start: 0))
        #expect(
            c.uplinkBudgets["wwan3"] == TrafficBudget(bytes: 1 << 30, period: .seconds(86_400), start: 1_767_571_200))
        _ = try CheckConfigCommand.check(c)
        let probe = "probes:\n  - {type: tcp, target: \"192.0.2.1:22\"}\n"
        for (text, message) in [
            (
                "uplink_settings: [wwan0]\n",
                "uplink_settings: expected a map of interface names to {probes, interval, mark, source"
            ),
            ("uplink_settings:\n  wwan0: {mark: 0}\n", "uplink_settings.wwan0.mark: expected a firewall mark"),
            (
                "uplink_settings:\n  wwan0: {mark: 0x1ffffffff}\n",
                "uplink_settings.wwan0.mark: expected a firewall mark"
            ),
            ("uplink_settings:\n  wwan0: {source: nowhere}\n", "uplink_settings.wwan0.source: expected an IP address"),
            (
                "uplink_settings:\n  wwan0: {source: [192.0.2.1, 192.0.2.2]}\n",
                "uplink_settings.wwan0.source: expected one address per family"
            ),
            ("uplink_settings:\n  wwan0: {}\n", "uplink_settings.wwan0: expected a key \"probes\""),
            (
                "global: {interval: 10s}\nuplink_settings:\n  wwan0: {interval: 5s}\n",
                "t.yml:3:21: uplink_settings.wwan0.interval: expected from the global interval (10s) to 10d"
            ),
            ("uplink_settings:\n  wwan0: {interval: soon}\n", "uplink_settings.wwan0.interval: expected a duration"),
            (
                "uplink_settings:\n  wwan0: {probes: [nope]}\n",
                "t.yml:2:20: uplink_settings.wwan0.probes[0]: expected the name of a probe, found \"nope\""
            ),
            (
                "uplink_settings:\n  wwan0: {probes: [a, a]}\n",
                "uplink_settings.wwan0.probes: expected a list of probe names, each once"
            ),
            (
                "uplink_settings:\n  wwan0: {table: 100}\n",
                "uplink_settings.wwan0.table: expected one of the keys probes, interval, mark, source, budget"
            ),
            ("uplink_settings:\n  ipv4: {mark: 1}\n", "uplink_settings.ipv4: expected an interface name"),
            ("uplink_settings:\n  wwan0: {budget: 0}\n", "uplink_settings.wwan0.budget: expected a size such as 200MB"),
            ("uplink_settings:\n  wwan0: {budget: lots}\n", "uplink_settings.wwan0.budget: expected a size"),
            ("uplink_settings:\n  wwan0: {budget: -5MB}\n", "uplink_settings.wwan0.budget: expected a size"),
            (
                "uplink_settings:\n  wwan0: {budget_period: 1d}\n",
                "uplink_settings.wwan0.budget_period: expected no budget_period without a budget"
            ),
            (
                "uplink_settings:\n  wwan0: {budget: 1MB, budget_period: 30s}\n",
                "uplink_settings.wwan0.budget_period: expected from 1m to 366d, found 30s"
            ),
            (
                "uplink_settings:\n  wwan0: {budget: 1MB, budget_start: 2026-02-30}\n",
                "uplink_settings.wwan0.budget_start: expected a UTC date"
            ),
            (
                "uplink_settings:\n  wwan0: {budget: 1MB, budget_start: \"2026-1-5\"}\n",
                "uplink_settings.wwan0.budget_start: expected a UTC date"
            ),
        ] {
            let e = Self.error(text + probe) ?? "accepted"
            #expect(e.contains(message), "\(text): \(e)")
        }
    }

    @Test func decodesAFullFile() throws {
        let c = try ConfigLoader.parse(
            """
            global:
              interval: 10s
              timeout: 2s500ms
              policy: quorum
              quorum: 60%
              fail_after: 4
              recover_after: 1
              fast_recheck: 0
              path_monitor: false
            uplinks: [eth0, "wwan0"]
            history:
              dir: /var/lib/rx
              max_file_size: 16MiB
              max_total_size: 512MiB
              retention: 30d
            probes:
              - name: portal
                type: http
                target: http://127.0.0.1:8080/generate_204
                interval: 20s
                timeout: 1s
                family: ipv4
              - type: https
                target: https://127.0.0.1:8443/
                labels:
                  site: home
                  tier: "1"
                http:
                  mode: web
                  follow_redirects: false
                  headers:
                    X-Probe: rx
                  tls:
                    server_name: example.test
                    insecure_skip_verify: true
              - name: body
                type: http
                target: http://127.0.0.1:8080/hotspot
                http:
                  expected_status: [200, 204]
                  expected_body:
                    prefix: Success
              - name: resolver
                type: dns
                target: example.test
                dns:
                  server: 127.0.0.1:5353
                  record_type: AAAA
                  allow_private_answers: true
              - name: ping
                type: icmp
                target: ::1
                icmp:
                  count: 5
              - type: tcp
                target: 127.0.0.1:9
            """, file: "t.yml")
        #expect(c.global.interval == .seconds(10))
        #expect(c.global.timeout == .milliseconds(2500))
        #expect(c.global.policy == .quorum(minimum: nil, fraction: 0.6))
        #expect(c.global.failAfter == 4 && c.global.recoverAfter == 1)
        #expect(c.global.fastRecheck == .zero && c.global.pathMonitor == false)
        #expect(c.global.marks["interval"] == YAMLMark(line: 2, column: 13))
        #expect(c.uplinks == .interfaces(["eth0", "wwan0"]))
        #expect(
            c.history
                == HistorySection(
                    dir: "/var/lib/rx", maxFileSize: 16 << 20, retention: .seconds(30 * 86400), maxTotalSize: 512 << 20)
        )
        // The spellings of --probe.mode, in the file too.
        for (text, policy) in [
            ("quorum:2", VerdictPolicy.quorum(minimum: 2, fraction: nil)),
            ("quorum:60%", .quorum(minimum: nil, fraction: 0.6)), ("icmp", .icmp),
        ] {
            #expect(try ConfigLoader.parse("global:\n  policy: \(text)\n", file: "t.yml").global.policy == policy)
        }
        #expect(
            c.probes.map(\.name) == ["portal", "https://127.0.0.1:8443/", "body", "resolver", "ping", "127.0.0.1:9"])
        #expect(c.probes.map(\.type) == [.http, .https, .http, .dns, .icmp, .tcp])
        let portal = c.probes[0]
        #expect(portal.interval == .seconds(20) && portal.timeout == .seconds(1) && portal.family == .ipv4)
        #expect(portal.http?.mode == .captive(.noContent))
        #expect(portal.mark == YAMLMark(line: 17, column: 5) && portal.path == "probes[0]")
        let web = c.probes[1]
        #expect(web.labels == [ProbeLabel("site", "home"), ProbeLabel("tier", "1")])
        #expect(web.http?.mode == .web && web.http?.followRedirects == false)
        #expect(web.http?.headers == [HTTPProbeConfig.Header("X-Probe", "rx")])
        #expect(web.http?.serverName == "example.test" && web.http?.insecureSkipVerify == true)
        #expect(c.probes[2].http?.mode == .captive(HTTPExpectation(statusCodes: [200, 204], body: .prefix("Success"))))
        #expect(
            c.probes[3].dns
                == (try DNSProbeConfig(
                    name: "example.test", queryType: .aaaa, server: "127.0.0.1:5353", allowPrivateAnswers: true)))
        #expect(c.probes[4].icmp?.count == 5)
        #expect(c.probes[5].http == nil && c.probes[5].dns == nil && c.probes[5].icmp == nil && c.probes[5].tcp != nil)

        let specs = try CheckConfigCommand.check(c)
        #expect(
            specs.map(\.target) == [
                "http://127.0.0.1:8080/generate_204", "https://127.0.0.1:8443/", "http://127.0.0.1:8080/hotspot",
                "example.test@127.0.0.1:5353", "::1", "127.0.0.1:9",
            ])
        #expect(specs[0].family == .ipv4 && specs[0].interval == .seconds(20))
        #expect(specs[1].type == .https)
    }

    /// OpenSSL words the reason; the place and the start of the message are ours.
    @Test func anUnreadableCAFileIsAConfigurationError() {
        let text =
            Self.probe
            + "    type: https\n    target: https://127.0.0.1/\n    http:\n      tls:\n        ca_file: /nonexistent/ca.pem\n"
        let message = Self.error(text) ?? ""
        #expect(
            message.hasPrefix(
                "t.yml:7:18: probes[0].http.tls.ca_file: expected a readable PEM file of CA certificates, found "),
            "\(message)")
        #expect(message.contains("/nonexistent/ca.pem"))
    }

    @Test func bodyChecksDefaultToStatus200AndGET() throws {
        let c = try ConfigLoader.parse(
            "probes:\n  - type: http\n    target: http://127.0.0.1/\n    http:\n      expected_body:\n        contains: ok\n",
            file: "t.yml")
        #expect(c.probes[0].http?.mode == .captive(.bodyContains("ok")))
        #expect(c.probes[0].http?.method == .get)
    }

    static let probe = "probes:\n  - name: p\n"

    @Test(arguments: [
        (
            "",
            "t.yml: expected a map of settings (global, uplinks, uplink_settings, history, captive_portal, probes), found an empty file (an empty file is refused so that a truncated file never replaces the probes)"
        ),
        (
            "- a\n",
            "t.yml:1:1: expected a map (with the keys global, uplinks, uplink_settings, history, captive_portal, probes), found a list"
        ),
        (
            "probe:\n  - type: tcp\n",
            "t.yml:1:1: probe: expected one of the keys global, uplinks, uplink_settings, history, captive_portal, probes, found an unknown key (did you mean \"probes\"?)"
        ),
        (
            "global:\n  intervall: 5s\n",
            "t.yml:2:3: global.intervall: expected one of the keys interval, timeout, policy, quorum, fail_after, recover_after, fast_recheck, path_monitor, trust_local_targets, found an unknown key (did you mean \"interval\"?)"
        ),
        ("global: 5s\n", "t.yml:1:9: global: expected a map (the global settings), found \"5s\""),
        (
            "global:\n  interval: 5 seconds\n",
            "t.yml:2:13: global.interval: expected a duration such as 500ms, 5s or 1m30s, found \"5 seconds\" (missing unit (ms, s, m, h, d, w, y))"
        ),
        (
            "global:\n  interval:\n",
            "t.yml:2:12: global.interval: expected a duration such as 500ms, 5s or 1m30s, found nothing"
        ),
        ("global:\n  interval: 0s\n", "t.yml:2:13: global.interval: expected a duration above 0, found \"0s\""),
        (
            "global:\n  interval: 5s\n  timeout: 5s\n",
            "t.yml:3:12: global.timeout: expected a timeout below the interval (5s), found \"5s\""
        ),
        (
            "global:\n  timeout: 10s\n",
            "t.yml:2:12: global.timeout: expected a timeout below the interval (5s, the default), found 10s"
        ),
        (
            "global:\n  policy: majority\n",
            "t.yml:2:11: global.policy: expected one of parallel, http, icmp, quorum, quorum:N, quorum:N%, found \"majority\""
        ),
        (
            "global:\n  policy: quorum:2\n  quorum: 3\n",
            "t.yml:3:11: global.quorum: expected the quorum in one place, found policy quorum:2 and a quorum key (write either policy: quorum:2 or policy: quorum with quorum: N)"
        ),
        (
            "global:\n  policy: quorum:0\n",
            "t.yml:2:11: global.policy: expected one of parallel, http, icmp, quorum, quorum:N, quorum:N%, found \"quorum:0\""
        ),
        (
            "history:\n  dir: /tmp/h\n  max_file_size: 2GiB\n",
            "t.yml:3:18: history.max_file_size: expected a size of at most max_total_size (1GiB by default), found \"2GiB\" (raise max_total_size too)"
        ),
        (
            "history:\n  dir: /tmp/h\n  max_file_size: 16MiB\n  max_total_size: 1MiB\n",
            "t.yml:4:19: history.max_total_size: expected a size of at least max_file_size (16MiB) such as 16MiB, 512KiB or 1048576 (bytes), found \"1MiB\""
        ),
        (
            "global:\n  quorum: 2\n",
            "t.yml:2:11: global.quorum: expected a quorum only together with policy: quorum, found policy parallel (the default)"
        ),
        (
            "global:\n  policy: http\n  quorum: 2\n",
            "t.yml:3:11: global.quorum: expected a quorum only together with policy: quorum, found policy http"
        ),
        (
            "global:\n  policy: quorum\n  quorum: 150%\n",
            "t.yml:3:11: global.quorum: expected a number of probes (2) or a share of them (50%), found \"150%\""
        ),
        (
            "global:\n  fail_after: 0\n",
            "t.yml:2:15: global.fail_after: expected a whole number from 1 to 1000, found \"0\""
        ),
        ("global:\n  path_monitor: yes\n", "t.yml:2:17: global.path_monitor: expected true or false, found \"yes\""),
        (
            "global:\n  path_monitor: \"true\"\n",
            "t.yml:2:17: global.path_monitor: expected true or false, found \"true\""
        ),
        ("uplinks: eth0\n", "t.yml:1:10: uplinks: expected auto, or a list of interface names, found \"eth0\""),
        ("uplinks: [eth0, eth0]\n", "t.yml:1:17: uplinks[1]: expected each interface once, found \"eth0\" again"),
        (
            "uplinks:\n  - bad/name\n",
            "t.yml:2:5: uplinks[0]: expected an interface name (1–15 bytes, no '/', ':', white space or control characters), found \"bad/name\""
        ),
        (
            "uplinks: [auto]\n",
            "t.yml:1:11: uplinks[0]: expected an interface name, found \"auto\" (write uplinks: auto on its own, not inside a list)"
        ),
        (
            "history:\n  max_file_size: 10 parsecs\n",
            "t.yml:2:18: history.max_file_size: expected a size of at least 4KiB such as 16MiB, 512KiB or 1048576 (bytes), found \"10 parsecs\""
        ),
        (
            "history:\n  retention: forever\n",
            "t.yml:2:14: history.retention: expected a duration such as 500ms, 5s or 1m30s, found \"forever\" (expected a duration such as 500ms, 5s, 1m30s)"
        ),
        ("probes:\n  type: tcp\n", "t.yml:2:3: probes: expected a list of probes ('- name: ...' entries), found a map"),
        (
            "probes:\n  - tcp\n",
            "t.yml:2:5: probes[0]: expected a map (a probe with name, type and target), found \"tcp\""
        ),
        (
            probe + "    target: 127.0.0.1:9\n",
            "t.yml:2:5: probes[0]: expected a key \"type\" (http, https, icmp, dns, tcp, mtu or doh), found none"
        ),
        (
            probe + "    type: ping\n    target: x\n",
            "t.yml:3:11: probes[0].type: expected one of icmp, http, https, dns, tcp, mtu, doh, found \"ping\""
        ),
        (probe + "    type: tcp\n", "t.yml:2:5: probes[0]: expected a key \"target\" (host:port), found none"),
        (
            "probes:\n  - type: icmp\n    target: 192.0.2.1\n    tcp: {expect: x}\n",
            "t.yml:4:5: probes[0].tcp: expected no tcp section on a probe of type icmp, found a tcp section (it applies to type tcp)"
        ),
        (
            "probes:\n  - type: tcp\n    target: 192.0.2.1:22\n    tcp: {expect: \"(x\"}\n",
            "t.yml:4:19: probes[0].tcp.expect: expected a regular expression (Swift Regex syntax), found tcp expect \"(x\": not a regular expression (Swift Regex syntax)"
        ),
        (
            "probes:\n  - type: tcp\n    target: 192.0.2.1:22\n    tcp: {canary_port: 70000}\n",
            "t.yml:4:24: probes[0].tcp.canary_port: expected a whole number from 0 to 65535, found \"70000\""
        ),
        (
            probe + "    type: tcp\n    target: 127.0.0.1:9\n    intervall: 10s\n",
            "t.yml:5:5: probes[0].intervall: expected one of the keys name, type, target, interval, timeout, family, labels, http, icmp, dns, tcp, mtu, doh, found an unknown key (did you mean \"interval\"?)"
        ),
        (
            probe + "    type: http\n    target: https://127.0.0.1/\n",
            "t.yml:4:13: probes[0].target: expected an http:// URL, found \"https://127.0.0.1/\" (type http needs the http:// scheme; or set type: https)"
        ),
        (
            probe + "    type: https\n    target: 127.0.0.1\n",
            "t.yml:4:13: probes[0].target: expected an https:// URL, found \"127.0.0.1\" (expected scheme://host)"
        ),
        (
            probe + "    type: tcp\n    target: 127.0.0.1:9\n    dns:\n      server: 127.0.0.1\n",
            "t.yml:5:5: probes[0].dns: expected no dns section on a probe of type tcp, found a dns section (it applies to type dns)"
        ),
        (
            probe + "    type: dns\n    target: example.test\n    family: ipv4\n",
            "t.yml:5:13: probes[0].family: expected no family on a dns probe, found family: ipv4 (the server address decides the transport; dns.record_type (A or AAAA) decides the answer)"
        ),
        (
            probe + "    type: tcp\n    target: 127.0.0.1:9\n  - name: p\n    type: tcp\n    target: 127.0.0.1:10\n",
            "t.yml:5:11: probes[1].name: expected a name no other probe has, found \"p\" (probes[0] has it too; give each probe its own name)"
        ),
        (
            "probes:\n  - type: tcp\n    target: 127.0.0.1:9\n  - type: tcp\n    target: 127.0.0.1:9\n",
            "t.yml:5:13: probes[1].name: expected a name no other probe has, found \"127.0.0.1:9\" (probes[0] has it too; give each probe its own name)"
        ),
        (
            "probes:\n  - name: a@b\n    type: tcp\n    target: 127.0.0.1:9\n",
            "t.yml:2:11: probes[0].name: expected a name without '@' or control characters, found \"a@b\" ('@' separates the uplink in target labels (name@eth1))"
        ),
        (
            probe + "    type: tcp\n    target: 127.0.0.1:9\n    labels:\n      target: x\n",
            "t.yml:6:7: probes[0].labels.target: expected a label name other than instance, interface, job, le, probe, target, found \"target\" (these are the probe series' own labels or Prometheus's target labels)"
        ),
        (
            probe + "    type: tcp\n    target: 127.0.0.1:9\n    labels:\n      1abc: x\n",
            "t.yml:6:7: probes[0].labels.1abc: expected a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, not starting with __), found \"1abc\""
        ),
        (
            probe + "    type: tcp\n    target: 127.0.0.1:9\n    labels:\n      site:\n",
            "t.yml:6:12: probes[0].labels.site: expected a non-empty label value, found nothing"
        ),
        (
            probe + "    type: tcp\n    target: 127.0.0.1:9\n    timeout: 5s\n    interval: 5s\n",
            "t.yml:5:14: probes[0].timeout: expected a timeout below the probe's interval (5s), found \"5s\""
        ),
        (
            probe + "    type: http\n    target: http://127.0.0.1/\n    http:\n      expected_status: [204, 999]\n",
            "t.yml:6:30: probes[0].http.expected_status[1]: expected HTTP status codes (100–599), ranges such as 200-399 or classes such as 2xx, found \"999\" (\"999\" is not a status code (100–599), a range such as 200-399, or a class such as 2xx)"
        ),
        (
            probe + "    type: http\n    target: http://127.0.0.1/\n    http:\n      expected_status: []\n",
            "t.yml:6:24: probes[0].http.expected_status: expected a status set such as 204, 200-399 or 2xx, or a list of them, such as [200, 204], found a list"
        ),
        (
            probe
                + "    type: http\n    target: http://127.0.0.1/\n    http:\n      mode: web\n      expected_status: 200\n",
            "t.yml:7:24: probes[0].http.expected_status: expected no expected_status in web mode, found expected_status (web mode accepts 200–399)"
        ),
        (
            probe
                + "    type: http\n    target: http://127.0.0.1/\n    http:\n      expected_body:\n        contains: a\n        equals: b\n",
            "t.yml:7:9: probes[0].http.expected_body: expected exactly one of contains, equals, prefix, found contains and equals"
        ),
        (
            probe
                + "    type: http\n    target: http://127.0.0.1/\n    http:\n      expected_body:\n        contain: a\n",
            "t.yml:7:9: probes[0].http.expected_body.contain: expected one of the keys contains, equals, prefix, found an unknown key (did you mean \"contains\"?)"
        ),
        (
            probe
                + "    type: http\n    target: http://127.0.0.1/\n    http:\n      method: HEAD\n      expected_body:\n        contains: a\n",
            "t.yml:6:15: probes[0].http.method: expected GET (a body check needs a body), found HEAD"
        ),
        (
            probe + "    type: http\n    target: http://127.0.0.1/\n    http:\n      method: get\n",
            "t.yml:6:15: probes[0].http.method: expected GET or HEAD, found \"get\""
        ),
        (
            probe + "    type: http\n    target: http://127.0.0.1/\n    http:\n      follow_redirects: true\n",
            "t.yml:6:25: probes[0].http.follow_redirects: expected false or nothing in captive mode, found true (in captive mode a redirect is the portal signal; use mode: web to follow)"
        ),
        (
            probe
                + "    type: http\n    target: http://127.0.0.1/\n    http:\n      tls:\n        insecure_skip_verify: true\n",
            "t.yml:6:7: probes[0].http.tls: expected no tls section on a captive http:// probe, found a tls section (tls applies to https probes, and to web probes that may be redirected to https)"
        ),
        (
            probe
                + "    type: https\n    target: https://127.0.0.1/\n    http:\n      tls:\n        ca_file: /etc/ssl/certs/ca-certificates.crt\n        insecure_skip_verify: true\n",
            "t.yml:7:18: probes[0].http.tls.ca_file: expected a readable PEM file of CA certificates, found a CA file and insecure_skip_verify exclude each other"
        ),
        (
            probe
                + "    type: https\n    target: https://127.0.0.1/\n    http: {proxy_url: \"http://u:pw@p\", proxy_from_environment: true}\n",
            "t.yml:5:64: probes[0].http.proxy_from_environment: expected either proxy_url or proxy_from_environment, found both (proxy_url names the proxy; proxy_from_environment takes HTTP_PROXY/HTTPS_PROXY/NO_PROXY)"
        ),
        (
            probe
                + "    type: https\n    target: https://127.0.0.1/\n    http: {proxy_url: \"socks5://u:pw@p:1080\"}\n",
            "t.yml:5:23: probes[0].http.proxy_url: expected an http:// proxy URL (http://[user:password@]host[:port]), found proxy \"socks5://<credentials>@p:1080\": the socks5:// scheme is not supported; use an http:// proxy (HTTPS still runs end to end through CONNECT)"
        ),
        (
            probe + "    type: dns\n    target: example.test\n    dns:\n      record_type: SRV\n",
            "t.yml:6:20: probes[0].dns.record_type: expected A, AAAA, CNAME, MX, TXT, NS, SOA, found \"SRV\""
        ),
        (
            probe + "    type: dns\n    target: example.test\n    dns:\n      record_type: MX\n",
            "t.yml:6:20: probes[0].dns.record_type: expected a record type the probe can ask for, found dns record type MX: needs a server; the system resolver looks up addresses only"
        ),
        (
            probe
                + "    type: dns\n    target: example.test\n    dns:\n      server: tcp://127.0.0.1\n      transport: tls\n",
            "t.yml:6:15: probes[0].dns.server: expected an IP address, optionally with a port and a scheme, found dns server \"tcp://127.0.0.1\": says tcp:// but the transport is tls"
        ),
        (
            probe
                + "    type: dns\n    target: example.test\n    dns:\n      server: 127.0.0.1\n      tls: {server_name: dns.test}\n",
            "t.yml:7:12: probes[0].dns.tls: expected TLS options on a tls-transport probe only, found dns tls: applies to the tls transport only, not udp"
        ),
        (
            probe
                + "    type: dns\n    target: example.test\n    dns: {server: 127.0.0.1, record_type: TXT, expect_answer: {addresses: [192.0.2.1]}}\n",
            "t.yml:5:63: probes[0].dns.expect_answer: expected an answer expectation that fits the record type, found dns expect_answer addresses: apply to A and AAAA records, not TXT; use regex"
        ),
        (
            probe
                + "    type: dns\n    target: example.test\n    dns: {server: 127.0.0.1, expect_answer: {regex: \"(\"}}\n",
            "t.yml:5:45: probes[0].dns.expect_answer: expected a regular expression (Swift Regex syntax), found dns expect_answer regex \"(\": expected ')'"
        ),
        (
            probe
                + "    type: dns\n    target: example.test\n    dns: {server: 127.0.0.1, expect_answer: {regex: a, addresses: [192.0.2.1]}}\n",
            "t.yml:5:45: probes[0].dns.expect_answer: expected exactly one of regex, addresses, found regex and addresses"
        ),
        (
            probe + "    type: dns\n    target: example.test\n    dns:\n      server: dns.example\n",
            "t.yml:6:15: probes[0].dns.server: expected an IP address, optionally with a port and a scheme, found dns server \"dns.example\": must be an IP address, optionally with :port or [ipv6]:port"
        ),
        (
            probe + "    type: dns\n    target: 127.0.0.1\n",
            "t.yml:4:13: probes[0].target: expected a DNS name to look up, found dns name \"127.0.0.1\": is an IP address; a DNS probe needs a name"
        ),
        (
            probe + "    type: tcp\n    target: 127.0.0.1\n",
            "t.yml:4:13: probes[0].target: expected host:port, found tcp target \"127.0.0.1\": missing port, expected host:port or [ipv6]:port"
        ),
        (
            probe + "    type: icmp\n    target: ::1\n    family: ipv4\n",
            "t.yml:5:13: probes[0].family: expected a family that admits the ipv6 address ::1, found ipv4"
        ),
        (
            probe + "    type: icmp\n    target: not a host\n",
            "t.yml:4:13: probes[0].target: expected a host name or IP address, found \"not a host\""
        ),
        (
            probe + "    type: icmp\n    target: 127.0.0.1\n    icmp:\n      count: 0\n",
            "t.yml:6:14: probes[0].icmp.count: expected a whole number from 1 to 1000, found \"0\""
        ),
        (
            "global:\n  interval: 10s\n" + probe + "    type: tcp\n    target: 127.0.0.1:9\n    interval: 5s\n",
            "t.yml:7:15: probes[0].interval: expected an interval of at least the global interval (10s), found 5s (probes run in rounds every global interval; a probe's own interval can only skip rounds)"
        ),
        (
            probe + "    type: tcp\n    target: 127.0.0.1:9\n    timeout: 6s\n",
            "t.yml:5:14: probes[0].timeout: expected a timeout below the probe's interval (5s), found 6s"
        ),
    ])
    func refuses(_ text: String, _ message: String) {
        #expect(Self.error(text) == message)
    }
}

/// The flow style people paste from Prometheus configs means what the block style means.
@Suite struct FlowStyleConfigTests {
    @Test func flowStyleBuildsTheSameProbes() throws {
        let block = try ConfigLoader.parse(
            """
            global:
              interval: 5s
              timeout: 2s
            uplinks: [eth0]
            probes:
              - type: dns
                target: example.test
                dns:
                  server: 127.0.0.1:5353
                  record_type: AAAA
              - type: tcp
                target: 127.0.0.1:9
                labels:
                  site: x
            """, file: "block.yml")
        let flow = try ConfigLoader.parse(
            "global: {interval: 5s, timeout: 2s}\nuplinks: [eth0]\nprobes: ["
                + "{type: dns, target: example.test, dns: {server: \"127.0.0.1:5353\", record_type: AAAA}}, "
                + "{type: tcp, target: \"127.0.0.1:9\", labels: {site: x}}]\n", file: "flow.yml")
        #expect(flow.global.interval == block.global.interval && flow.global.timeout == block.global.timeout)
        #expect(flow.uplinks == block.uplinks)
        let a = try CheckConfigCommand.check(block)
        let b = try CheckConfigCommand.check(flow)
        #expect(a.map(\.target) == b.map(\.target) && a.map(\.name) == b.map(\.name))
        #expect(flow.probes.map(\.labels) == block.probes.map(\.labels))
    }

    /// Schema errors inside a flow map point at the flow map's own line and column.
    @Test func schemaErrorsInsideFlowMapsHaveTheirColumn() {
        let message = ConfigSchemaTests.error("global: {interval: 5s, timeout: soon}\n")
        #expect(message?.hasPrefix("t.yml:1:33: global.timeout: expected a duration") == true, "\(message ?? "")")
        let unknown = ConfigSchemaTests.error("probes: [{type: tcp, target: \"127.0.0.1:9\", colour: red}]\n")
        #expect(unknown?.hasPrefix("t.yml:1:45: probes[0].colour:") == true, "\(unknown ?? "")")
    }
}

/// The kind's configuration of a decoded entry, by kind (nil for another kind).
extension ProbeDefinition {
    var http: HTTPProbeConfig? { configuration as? HTTPProbeConfig }
    var dns: DNSProbeConfig? { configuration as? DNSProbeConfig }
    var icmp: ICMPProber.Configuration? { configuration as? ICMPProber.Configuration }
    var mtu: MTUProber.Configuration? { configuration as? MTUProber.Configuration }
    var tcp: TCPProbeConfig? { configuration as? TCPProbeConfig }
}
