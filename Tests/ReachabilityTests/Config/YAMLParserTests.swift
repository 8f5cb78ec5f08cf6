import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// YAML through libyaml: what it accepts (rendered compactly), and what a configuration refuses,
/// with the exact message.
@Suite struct YAMLParserTests {
    /// `{k: v}`, `[a, b]`, plain text bare, single-quoted as '…', double-quoted as "…".
    static func render(_ node: YAMLNode?) -> String {
        guard let node else { return "<empty>" }
        switch node.kind {
        case .scalar(let s):
            switch s.style {
            case .plain: return s.isNull ? "~" : s.text
            case .singleQuoted: return "'\(s.text)'"
            case .doubleQuoted: return s.text.debugDescription
            case .literal: return "|" + s.text.debugDescription
            case .folded: return ">" + s.text.debugDescription
            }
        case .list(let items): return "[" + items.map { render($0) }.joined(separator: ", ") + "]"
        case .map(let entries):
            return "{" + entries.map { "\($0.key): \(render($0.value))" }.joined(separator: ", ") + "}"
        }
    }

    static func parse(_ text: String) throws -> String { render(try YAMLParser.parse(text, file: "t.yml")) }

    static func error(_ text: String) -> String? {
        do throws(ConfigError) {
            _ = try YAMLParser.parse(text, file: "t.yml")
            return nil
        } catch { return error.description }
    }

    @Test(arguments: [
        ("a: 1\nb: two words\n", "{a: 1, b: two words}"),
        ("a:\n  b:\n    c: 1\n  d: 2\ne: 3\n", "{a: {b: {c: 1}, d: 2}, e: 3}"),
        ("list:\n  - one\n  - two\n", "{list: [one, two]}"),
        // A list at its key's own indentation (kubectl style).
        ("list:\n- one\n- two\nnext: 1\n", "{list: [one, two], next: 1}"),
        ("probes:\n  - name: a\n    type: tcp\n  - name: b\n", "{probes: [{name: a, type: tcp}, {name: b}]}"),
        ("- - a\n  - b\n- c\n", "[[a, b], c]"),
        ("-\n  k: v\n- \n", "[{k: v}, ~]"),
        ("a: [1, \"two\", 'three', [4], five six]\n", "{a: [1, \"two\", 'three', [4], five six]}"),
        ("a: []\nb: [x, ]\n", "{a: [], b: [x]}"),
        // Flow maps, nested in flow lists and maps, as pasted from Prometheus configs.
        ("global: {interval: 5s, timeout: '2s'}\n", "{global: {interval: 5s, timeout: '2s'}}"),
        ("a: {}\nb: {k: , l: }\n", "{a: {}, b: {k: ~, l: ~}}"),
        (
            "static_configs: [{targets: [a, \"b\"], labels: {site: x}}, {}]\n",
            "{static_configs: [{targets: [a, \"b\"], labels: {site: x}}, {}]}"
        ),
        ("- {name: a, url: http://h:80/x?y=1}\n- b\n", "[{name: a, url: http://h:80/x?y=1}, b]"),
        ("{\"quoted key\": 1, 'k2': {deep: [1]}} # comment\n", "{quoted key: 1, k2: {deep: [1]}}"),
        ("a: {k: v,}\n", "{a: {k: v}}"),
        ("a: # a comment\n  b: 1 # another\n# full line\n\n   # indented comment\n", "{a: {b: 1}}"),
        ("a: b#c\nd: 'e # f'\n", "{a: b#c, d: 'e # f'}"),
        (
            "a: 'it''s'\nb: \"tab\\there \\\"q\\\" \\u00e9 \\x41 \\U0001F600 \\\\ \\/\"\n",
            "{a: 'it's', b: \"tab\\there \\\"q\\\" é A 😀 \\\\ /\"}"
        ),
        ("a: http://example.com:8080/x?y=1\nb: 10:30\n", "{a: http://example.com:8080/x?y=1, b: 10:30}"),
        ("\"quoted key\": 1\n'k2' : 2\n", "{quoted key: 1, k2: 2}"),
        ("a:\nb: ~\nc: null\nd: ''\n", "{a: ~, b: ~, c: ~, d: ''}"),
        ("---\na: 1\n", "{a: 1}"),
        ("# leading comment\n--- # doc\na: 1\n", "{a: 1}"),
        ("a: 1\r\nb:\r\n  - x\r\n", "{a: 1, b: [x]}"),
        ("\u{FEFF}a: 1\n", "{a: 1}"),
        ("key:\n  value on its own line\n", "{key: value on its own line}"),
        ("a:\tx\n", "{a: x}"),
        ("", "<empty>"),
        ("---\n", "<empty>"),
        ("~\n", "<empty>"),
        // Block scalars: literal and folded, each chomping, an explicit indentation indicator.
        ("a: |\n  one\n  two\n\nb: 1\n", "{a: |\"one\\ntwo\\n\", b: 1}"),
        ("a: |-\n  one\n  two\n\n", "{a: |\"one\\ntwo\"}"),
        ("a: |+\n  one\n\n\nb: 1\n", "{a: |\"one\\n\\n\\n\", b: 1}"),
        ("a: >\n  one\n  two\n\n  three\n", "{a: >\"one two\\nthree\\n\"}"),
        ("a: >-\n  one\n  two\n", "{a: >\"one two\"}"),
        ("a: |2\n    indented\n  base\n", "{a: |\"  indented\\nbase\\n\"}"),
        ("- |\n  x\n- y\n", "[|\"x\\n\", y]"),
        // Anchors, aliases and merge keys (what Helm and Ansible write); the map's own keys win.
        ("base: &b {interval: 5s}\nprobe: *b\n", "{base: {interval: 5s}, probe: {interval: 5s}}"),
        (
            "defaults: &d\n  interval: 5s\n  timeout: 1s\nprobe:\n  <<: *d\n  timeout: 2s\n",
            "{defaults: {interval: 5s, timeout: 1s}, probe: {timeout: 2s, interval: 5s}}"
        ),
        (
            "a: &a {x: 1, y: 1}\nb: &b {y: 2, z: 2}\nc: {<<: [*a, *b], w: 0}\n",
            "{a: {x: 1, y: 1}, b: {y: 2, z: 2}, c: {w: 0, x: 1, y: 1, z: 2}}"
        ),
        ("targets: &t [a, b]\nmore: *t\n", "{targets: [a, b], more: [a, b]}"),
        ("k: &k name\n*k : v\n", "{k: name, name: v}"),
        ("'<<': 1\n", "{<<: 1}"),
        // Flow collections and scalars over several lines.
        ("a: [\n  1,\n  2, # two\n]\n", "{a: [1, 2]}"),
        ("a: {\n  b: 1,\n  c: [x,\n     y]\n}\n", "{a: {b: 1, c: [x, y]}}"),
        ("a: one\n  two\n", "{a: one two}"),
        ("a: \"one\n  two\"\n", "{a: \"one two\"}"),
        // Core tags; !!str keeps a plain scalar a string.
        ("a: !!str true\nb: !!int 5\n", "{a: 'true', b: 5}"),
        ("%YAML 1.1\n---\na: 1\n...\n", "{a: 1}"),
        ("# only a comment\n\n", "<empty>"),
    ])
    func accepts(_ text: String, _ expected: String) throws {
        #expect(try Self.parse(text) == expected)
    }

    @Test func marksPointAtLineAndColumn() throws {
        let root = try #require(try YAMLParser.parse("a:\n  - x: 1\n    y: [2, 'z']\n", file: "t.yml"))
        guard case .map(let top) = root.kind, case .list(let items) = top[0].value.kind,
            case .map(let entries) = items[0].kind,
            case .list(let flow) = entries[1].value.kind
        else {
            Issue.record("shape: \(Self.render(root))")
            return
        }
        #expect(top[0].keyMark == YAMLMark(line: 1, column: 1))
        #expect(entries[0].keyMark == YAMLMark(line: 2, column: 5))
        #expect(entries[1].keyMark == YAMLMark(line: 3, column: 5))
        #expect(flow[1].mark == YAMLMark(line: 3, column: 12))
    }

    @Test(arguments: [
        (
            "global:\n\tinterval: 5s\n",
            "t.yml:2:1: global: expected spaces for indentation, found a tab (YAML does not allow tabs in indentation)"
        ),
        (
            "global:\n  interval: 5s\n  timeout: 1s\n  interval: 10s\n",
            "t.yml:4:3: global.interval: expected each key once per map, found \"interval\" again (first at line 2, column 3)"
        ),
        (
            "global:\n  interval: 5s\n   timeout: 3s\n",
            "t.yml:3:11: global: expected a value, found ':' followed by a space inside an unquoted value (quote the value, start a nested map on the next line, or check this line's indentation)"
        ),
        (
            "probes:\n    - name: a\n  - name: b\n",
            "t.yml:3:3: expected a 'key: value' entry at this map's indentation, found \"- name: b\" (in the map that starts at line 1, column 1)"
        ),
        (
            "a: 1\n- b\n",
            "t.yml:2:1: expected a 'key: value' entry at this map's indentation, found \"- b\" (in the map that starts at line 1, column 1)"
        ),
        (
            "a:\n  b: 1\n  c:2\n",
            "t.yml:4:1: a: expected ':' after the key, found the end of the line (a key's ':' must be followed by a space or the end of the line; reading the key that starts at line 3, column 3)"
        ),
        (
            "name: \"abc\n",
            "t.yml:2:1: name: expected the closing quote, found the end of the file (in the quoted text that starts at line 1, column 7)"
        ),
        (
            "name: \"a\\qb\"\n",
            "t.yml:1:9: name: expected a known escape, found \"\\\\qb\\\"\" (in the quoted text that starts at line 1, column 7)"
        ),
        (
            "a: {b: 1\n",
            "t.yml:2:1: a: expected ',' or '}', found the end of the line (in the '{' map that opens at line 1, column 4)"
        ),
        (
            "a: [1, 2\n",
            "t.yml:2:1: a[2]: expected ',' or ']', found the end of the line (in the '[' list that opens at line 1, column 4)"
        ),
        (
            "a: {b: 1, b: 2}\n",
            "t.yml:1:11: a.b: expected each key once per map, found \"b\" again (first at line 1, column 5)"
        ),
        (
            "a: b: c\n",
            "t.yml:1:5: expected a value, found ':' followed by a space inside an unquoted value (quote the value, start a nested map on the next line, or check this line's indentation)"
        ),
        (
            "a: - b\n",
            "t.yml:1:4: a: expected a value, found a list item (a list starts on the line after its key)"
        ),
        (
            "a: @x\n",
            "t.yml:1:4: a: expected a value, found '@' (quote values that start with it)"
        ),
        (
            "- a\nb: 1\n",
            "t.yml:2:1: [1]: expected a '- item' at this list's indentation, found \"b: 1\" (in the list that starts at line 1, column 1)"
        ),
        (
            "a: *anchor\n",
            "t.yml:1:4: a: expected an alias to an anchor defined above, found *anchor"
        ),
        (
            "a: &x [*x]\n",
            "t.yml:1:8: a[0]: expected an alias to an anchor defined above, found *x"
        ),
        (
            "a: !vault |\n  abc\n",
            "t.yml:1:4: a: expected a value, found the tag !vault (only YAML's core tags (!!str, !!int, …) are supported)"
        ),
        (
            "a: !!binary aGk=\n",
            "t.yml:1:4: a: expected a value, found the tag !!binary (only YAML's core tags (!!str, !!int, …) are supported)"
        ),
        (
            "? [a]\n: b\n",
            "t.yml:1:3: expected a key (text), found a list or map as a key (complex keys are not supported)"
        ),
        (
            "<<: 1\n",
            "t.yml:1:5: \"<<\": expected a map to merge (usually an alias such as *defaults), found \"1\""
        ),
        (
            "d: &d {x: 1}\ne: {<<: *d, <<: *d}\n",
            "t.yml:2:13: e.\"<<\": expected one merge key per map, found \"<<\" again (first at line 2, column 5; merge several maps with <<: [*a, *b])"
        ),
        (
            "a: 1\n---\nb: 2\n",
            "t.yml:2:1: expected a single document, found a second document (one file holds one document; remove the '---' or split the file)"
        ),
        (
            "a: 1\n--- \n",
            "t.yml:2:1: expected a single document, found a second document (one file holds one document; remove the '---' or split the file)"
        ),
        (
            "a: \u{7}\n",
            "t.yml:1:4: expected printable text, found the control character U+0007"
        ),
        (
            "a: x\u{7F}\n",
            "t.yml:1:5: expected printable text, found the control character U+007F"
        ),
    ])
    func refuses(_ text: String, _ message: String) {
        #expect(Self.error(text) == message)
    }

    @Test func refusesInvalidUTF8() {
        do throws(ConfigError) {
            _ = try YAMLParser.parse(Array("a: 1\nb: ".utf8) + [0xC3, 0x28] + [0x0A], file: "t.yml")
            Issue.record("accepted invalid UTF-8")
        } catch {
            #expect(error.description == "t.yml:2:5: expected UTF-8 text, found bytes that are not valid UTF-8")
        }
    }

    /// Nesting is bounded, so no file can exhaust the stack.
    @Test func deepNestingIsRefusedNotACrash() {
        let blocks = String(repeating: "- ", count: 10_000) + "x\n"
        #expect(Self.error(blocks)?.hasSuffix("expected at most 64 levels of nesting, found more") == true)
        let flow = "a: " + String(repeating: "[", count: 10_000) + "\n"
        #expect(Self.error(flow)?.hasSuffix("expected at most 64 levels of nesting, found more") == true)
        let maps = "a: " + String(repeating: "{b: ", count: 10_000) + "\n"
        #expect(Self.error(maps)?.hasSuffix("expected at most 64 levels of nesting, found more") == true)
        #expect(Self.error(String(repeating: "- ", count: 60) + "x\n") == nil)
    }

    /// An alias bomb (each level nine aliases of the one above) is refused once the expansion
    /// passes the bound, long before it could take memory or time; a file that repeats a
    /// moderate anchor a few times is fine.
    @Test func aliasExpansionIsBounded() {
        var bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n"
        for (level, name) in ["b", "c", "d", "e", "f", "g", "h", "i"].enumerated() {
            let previous = level == 0 ? "a" : ["b", "c", "d", "e", "f", "g", "h"][level - 1]
            bomb += "\(name): &\(name) [" + Array(repeating: "*\(previous)", count: 9).joined(separator: ", ") + "]\n"
        }
        let message = Self.error(bomb) ?? "accepted"
        #expect(
            message.hasSuffix(
                "expected at most 100000 values repeated by aliases, found more (aliases that repeat aliases multiply)"
            ),
            "\(message)")
        let fine = "d: &d {interval: 5s, timeout: 1s, labels: {site: x}}\n" + (0..<50).map { "p\($0): *d\n" }.joined()
        #expect(Self.error(fine) == nil)
    }

    /// Whatever the bytes, the parser returns or throws; it never traps.
    @Test func survivesArbitraryInput() {
        var rng = SystemRandomNumberGenerator()
        let alphabet = Array("ab:-[]{}'\"\\#&*!|> \t\n,?%0<".utf8)
        for _ in 0..<3000 {
            let bytes = (0..<Int.random(in: 0...60, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }
            _ = try? YAMLParser.parse(bytes, file: "fuzz.yml")
        }
    }
}
