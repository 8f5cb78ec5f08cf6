import Testing

@testable import Reachability

/// The YAML subset: what it accepts (rendered compactly), and every refusal with its exact message.
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
            "probes:\n  - name: a\n  \ttype: tcp\n",
            "t.yml:3:3: probes[0]: expected spaces for indentation, found a tab (YAML does not allow tabs in indentation)"
        ),
        (
            "global:\n  interval: 5s\n  timeout: 1s\n  interval: 10s\n",
            "t.yml:4:3: global.interval: expected each key once per map, found \"interval\" again (first at line 2, column 3)"
        ),
        (
            "global:\n  interval: 5s\n   timeout: 3s\n",
            "t.yml:3:4: global: expected indentation of 2 spaces (as the entries above), found 3 spaces"
        ),
        (
            "probes:\n    - name: a\n  - name: b\n",
            "t.yml:3:3: expected indentation of 0 spaces (as the entries above), found 2 spaces"
        ),
        (
            "a: one\n  two\n",
            "t.yml:2:3: a: expected a new entry at 0 spaces or less after a one-line value, found \"two\" (multi-line values are not supported; write the value on one line, quoted if needed)"
        ),
        (
            "a: 1\n- b\n",
            "t.yml:2:1: expected a 'key: value' entry (this map's keys are at column 1), found a list item"
        ),
        (
            "a:\n  b: 1\n  c:2\n",
            "t.yml:3:3: a: expected a 'key: value' entry, found \"c:2\" (a key's ':' must be followed by a space or the end of the line)"
        ),
        (
            "name: \"abc\n",
            "t.yml:1:7: name: expected a closing double quote on the same line, found the end of the line (quoted strings must fit on one line)"
        ),
        (
            "name: 'abc\n",
            "t.yml:1:7: name: expected a closing single quote on the same line, found the end of the line (quoted strings must fit on one line)"
        ),
        (
            "name: \"a\\qb\"\n",
            "t.yml:1:9: name: expected a known escape (\\\\ \\\" \\/ \\n \\t \\r \\0 \\a \\b \\e \\f \\v \\xHH \\uHHHH \\UHHHHHHHH), found '\\q'"
        ),
        (
            "name: \"\\u12\"\n",
            "t.yml:1:8: name: expected '\\u' followed by 4 hex digits of a Unicode scalar, found \"\\\\u12\\\"\""
        ),
        (
            "name: \"\\uD800\"\n",
            "t.yml:1:8: name: expected '\\u' followed by 4 hex digits of a Unicode scalar, found \"\\\\uD800\\\"\""
        ),
        (
            "a: \"x\" y\n",
            "t.yml:1:8: a: expected the end of the line or a comment, found \"y\""
        ),
        (
            "a: &anchor 1\n",
            "t.yml:1:4: a: expected a value, found an anchor (anchors and aliases are not supported)"
        ),
        (
            "a: *anchor\n",
            "t.yml:1:4: a: expected a value, found an alias (anchors and aliases are not supported)"
        ),
        (
            "a: !!str 1\n",
            "t.yml:1:4: a: expected a value, found a tag (tags are not supported)"
        ),
        (
            "a: |\n  text\n",
            "t.yml:1:4: a: expected a value, found a block scalar ('|') (block scalars are not supported; use a quoted string with \\n escapes)"
        ),
        (
            "a: {b: 1\n",
            "t.yml:1:9: a: expected '}' to close the map opened at column 4, found the end of the line (flow maps must fit on one line; use 'key: value' lines for longer maps)"
        ),
        (
            "a: {b: 1, b: 2}\n",
            "t.yml:1:11: a.b: expected each key once per map, found \"b\" again (first at line 1, column 5)"
        ),
        (
            "a: {b:1}\n",
            "t.yml:1:8: a: expected ':' after the key \"b:1\", found \"}\" (put a space after the ':' that ends a key)"
        ),
        (
            "a: {b}\n",
            "t.yml:1:6: a: expected ':' after the key \"b\", found \"}\" (flow map entries are 'key: value')"
        ),
        (
            "a: {b: 1,, c: 2}\n",
            "t.yml:1:10: a: expected a 'key: value' entry, found ',' (empty entries are not allowed)"
        ),
        (
            "a: {[x]: 1}\n",
            "t.yml:1:5: a: expected a key, found a list as a key (complex keys are not supported)"
        ),
        (
            "a: {b: c d: e}\n",
            "t.yml:1:11: a.b: expected a value, found ':' followed by a space inside the unquoted value \"c d: e}\" (quote the value, or start a nested map on the next line)"
        ),
        (
            "a: {b: 1} c\n",
            "t.yml:1:11: a: expected the end of the line or a comment, found \"c\""
        ),
        (
            "a: {b: [1, 2}\n",
            "t.yml:1:13: a.b: expected ',' or ']' in the list opened at column 8, found \"}\""
        ),
        (
            "a: {b: *x}\n",
            "t.yml:1:8: a.b: expected a value, found an alias (anchors and aliases are not supported)"
        ),
        (
            "a: [1, 2\n",
            "t.yml:1:9: a: expected ']' to close the list opened at column 4, found the end of the line (flow lists must fit on one line; use '- item' lines for longer lists)"
        ),
        (
            "a: [1,\n  2]\n",
            "t.yml:1:7: a: expected ']' to close the list opened at column 4, found the end of the line (flow lists must fit on one line; use '- item' lines for longer lists)"
        ),
        (
            "a: [1,, 2]\n",
            "t.yml:1:7: a[1]: expected a list item, found ',' (empty entries are not allowed)"
        ),
        (
            "a: [x: y]\n",
            "t.yml:1:6: a[0]: expected a value, found ':' followed by a space inside the unquoted value \"x: y]\" (quote the value, or start a nested map on the next line)"
        ),
        (
            "a: [x] y\n",
            "t.yml:1:8: a: expected the end of the line or a comment, found \"y\""
        ),
        (
            "a: [x y, 'z' w]\n",
            "t.yml:1:14: a: expected ',' or ']' in the list opened at column 4, found \"w]\""
        ),
        (
            "a: b: c\n",
            "t.yml:1:5: a: expected a value, found ':' followed by a space inside the unquoted value \"b: c\" (quote the value, or start a nested map on the next line)"
        ),
        (
            "a: - b\n",
            "t.yml:1:4: a: expected a value, found a list item (a list starts on the line after its key)"
        ),
        (
            "? a\n: b\n",
            "t.yml:1:1: expected a value, found a complex key ('?') (complex keys are not supported)"
        ),
        (
            "a: 1\n---\nb: 2\n",
            "t.yml:2:1: expected a single document, found \"---\" (several documents, or content on the '---' line, are not supported)"
        ),
        (
            "a: 1\n...\n",
            "t.yml:2:1: expected a single document, found \"...\" (several documents, or content on the '---' line, are not supported)"
        ),
        (
            "%YAML 1.2\na: 1\n",
            "t.yml:1:1: expected a key or a list item, found a directive (directives (%YAML, %TAG) are not supported)"
        ),
        (
            "a: \u{7}\n",
            "t.yml:1:4: expected printable text, found the control character U+0007"
        ),
        (
            "- a\nb: 1\n",
            "t.yml:2:1: expected the end of the document, found \"b: 1\" (this line does not belong to the document's top-level list)"
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
            #expect(error.description == "t.yml:2:1: expected UTF-8 text, found bytes that are not valid UTF-8")
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

    /// Whatever the bytes, the parser returns or throws; it never traps.
    @Test func survivesArbitraryInput() {
        var rng = SystemRandomNumberGenerator()
        let alphabet = Array("ab:-[]{}'\"\\#&*!|> \t\n,?%0".utf8)
        for _ in 0..<3000 {
            let bytes = (0..<Int.random(in: 0...60, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }
            _ = try? YAMLParser.parse(bytes, file: "fuzz.yml")
        }
    }
}
