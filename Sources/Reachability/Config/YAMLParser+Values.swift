/// Values that sit on one line: plain and quoted scalars, flow lists and flow maps (the parser's
/// lexical half).
extension YAMLParser {
    /// A value that starts at `c` and must end the line (a comment may follow).
    func parseInlineValue(_ line: Line, from c: Int, path: String) throws(ConfigError) -> YAMLNode {
        guard let ch = line[c] else { return YAMLNode(.scalar(YAMLScalar("")), mark: line.mark(c)) }
        let node: YAMLNode
        let end: Int
        switch ch {
        case "[":
            (node, end) = try flowList(line, c, path: path, depth: depth + 1)
        case "{":
            (node, end) = try flowMap(line, c, path: path, depth: depth + 1)
        case "\"", "'":
            let (scalar, e) = try quoted(line, c, path: path)
            (node, end) = (YAMLNode(.scalar(scalar), mark: line.mark(c)), e)
        case "-" where line[c + 1] == nil || line[c + 1] == " " || line[c + 1] == "\t":
            throw fail(
                line, c, path, expected: "a value", found: "a list item",
                hint: "a list starts on the line after its key")
        default:
            try checkPlainStart(line, c, path: path)
            let (text, e) = try plain(line, c, flow: false, path: path)
            (node, end) = (YAMLNode(.scalar(YAMLScalar(text)), mark: line.mark(c)), e)
        }
        let after = skipBlanks(line, end)
        guard isLineEnd(line, after) else {
            throw fail(
                line, after, path, expected: "the end of the line or a comment", found: rest(line, after),
                hint: line[after] == ":" ? "a quoted value cannot be a key here" : nil)
        }
        return node
    }

    func flowList(_ line: Line, _ open: Int, path: String, depth: Int) throws(ConfigError) -> (YAMLNode, Int) {
        if depth > Self.maxDepth { throw tooDeep(line, open, path) }
        var items: [YAMLNode] = []
        var j = open + 1
        while true {
            j = skipBlanks(line, j)
            guard let ch = line[j], !isCommentStart(line, j) else {
                throw fail(
                    line, j, path, expected: "']' to close the list opened at column \(open + 1)",
                    found: "the end of the line",
                    hint: "flow lists must fit on one line; use '- item' lines for longer lists")
            }
            if ch == "]" { return (YAMLNode(.list(items), mark: line.mark(open)), j + 1) }
            let itemPath = KeyPath.index(path, items.count)
            if ch == "," {
                throw fail(
                    line, j, itemPath, expected: "a list item", found: "','", hint: "empty entries are not allowed")
            }
            let item: YAMLNode
            (item, j) = try flowValue(line, j, path: itemPath, depth: depth)
            items.append(item)
            j = skipBlanks(line, j)
            if line[j] == "," {
                j += 1
                continue
            }
            if line[j] == "]" || isLineEnd(line, j) { continue }
            throw fail(
                line, j, path, expected: "',' or ']' in the list opened at column \(open + 1)", found: rest(line, j))
        }
    }

    /// A flow map on one line: `{key: value, "quoted key": [a, b], nested: {k: v}}`. Keys are
    /// plain or quoted scalars followed by `:` and a blank (or `,`/`}` for an empty value); each
    /// key once, as in block maps.
    func flowMap(_ line: Line, _ open: Int, path: String, depth: Int) throws(ConfigError) -> (YAMLNode, Int) {
        if depth > Self.maxDepth { throw tooDeep(line, open, path) }
        var entries: [YAMLMapEntry] = []
        var seen: [String: YAMLMark] = [:]
        var j = open + 1
        while true {
            j = skipBlanks(line, j)
            guard let ch = line[j], !isCommentStart(line, j) else {
                throw fail(
                    line, j, path, expected: "'}' to close the map opened at column \(open + 1)",
                    found: "the end of the line",
                    hint: "flow maps must fit on one line; use 'key: value' lines for longer maps")
            }
            if ch == "}" { return (YAMLNode(.map(entries), mark: line.mark(open)), j + 1) }
            if ch == "," {
                throw fail(
                    line, j, path, expected: "a 'key: value' entry", found: "','", hint: "empty entries are not allowed"
                )
            }
            let keyMark = line.mark(j)
            let keyText: String
            (keyText, j) = try flowKey(line, j, path: path)
            let keyPath = KeyPath.child(path, keyText)
            if let first = seen[keyText] {
                throw ConfigError(
                    file: file, mark: keyMark, path: keyPath, expected: "each key once per map",
                    found: "\(keyText.debugDescription) again",
                    hint: "first at line \(first.line), column \(first.column)")
            }
            seen[keyText] = keyMark
            j = skipBlanks(line, j + 1)  // past the ':'
            let value: YAMLNode
            if line[j] == "," || line[j] == "}" {
                value = YAMLNode(.scalar(YAMLScalar("")), mark: line.mark(j))
            } else {
                (value, j) = try flowValue(line, j, path: keyPath, depth: depth)
            }
            entries.append(YAMLMapEntry(key: keyText, keyMark: keyMark, value: value))
            j = skipBlanks(line, j)
            if line[j] == "," {
                j += 1
                continue
            }
            if line[j] == "}" || isLineEnd(line, j) { continue }
            throw fail(
                line, j, path, expected: "',' or '}' in the map opened at column \(open + 1)", found: rest(line, j))
        }
    }

    /// The key of a flow-map entry at `c`; returns its text and the column of its `:`.
    private func flowKey(_ line: Line, _ c: Int, path: String) throws(ConfigError) -> (String, Int) {
        var text: String
        var j: Int
        switch line[c] {
        case "\"", "'":
            let (scalar, e) = try quoted(line, c, path: path)
            (text, j) = (scalar.text, skipBlanks(line, e))
        case "[", "{":
            throw fail(
                line, c, path, expected: "a key", found: "a \(line[c] == "[" ? "list" : "map") as a key",
                hint: "complex keys are not supported")
        default:
            try checkPlainStart(line, c, path: path)
            j = c
            while let ch = line[j], !isCommentStart(line, j), !",[]{}".unicodeScalars.contains(ch) {
                if ch == ":", line[j + 1] == nil || " \t,}".unicodeScalars.contains(line[j + 1]!) { break }
                j += 1
            }
            var end = j
            while end > c && (line.text[end - 1] == " " || line.text[end - 1] == "\t") { end -= 1 }
            text = String(String.UnicodeScalarView(line.text[c..<end]))
        }
        guard line[j] == ":" else {
            let glued = text.contains(":")
            throw fail(
                line, j, path, expected: "':' after the key \(text.debugDescription)",
                found: isLineEnd(line, j) ? "the end of the line" : rest(line, j),
                hint: glued ? "put a space after the ':' that ends a key" : "flow map entries are 'key: value'")
        }
        return (text, j)
    }

    /// One value inside a flow collection: a nested flow list or map, a quoted or a plain scalar.
    private func flowValue(_ line: Line, _ j: Int, path: String, depth: Int) throws(ConfigError) -> (YAMLNode, Int) {
        switch line[j] {
        case "[":
            return try flowList(line, j, path: path, depth: depth + 1)
        case "{":
            return try flowMap(line, j, path: path, depth: depth + 1)
        case "\"", "'":
            let (scalar, e) = try quoted(line, j, path: path)
            return (YAMLNode(.scalar(scalar), mark: line.mark(j)), e)
        default:
            try checkPlainStart(line, j, path: path)
            let (text, e) = try plain(line, j, flow: true, path: path)
            return (YAMLNode(.scalar(YAMLScalar(text)), mark: line.mark(j)), e)
        }
    }

    /// A plain scalar from `c`: to the end of the line or a comment (and in a flow collection, to
    /// `,`, `]` or `}`), trailing blanks trimmed. Returns the text and the column after it.
    func plain(_ line: Line, _ c: Int, flow: Bool, path: String) throws(ConfigError) -> (String, Int) {
        var j = c
        while let ch = line[j] {
            if isCommentStart(line, j) { break }
            if flow && (ch == "," || ch == "]" || ch == "[" || ch == "{" || ch == "}") { break }
            if ch == ":"
                && (line[j + 1] == nil || line[j + 1] == " " || line[j + 1] == "\t"
                    || (flow && (line[j + 1] == "," || line[j + 1] == "]" || line[j + 1] == "}")))
            {
                throw fail(
                    line, j, path, expected: "a value",
                    found: "':' followed by a space inside the unquoted value \(rest(line, c))",
                    hint: "quote the value, or start a nested map on the next line")
            }
            j += 1
        }
        var end = j
        while end > c && (line.text[end - 1] == " " || line.text[end - 1] == "\t") { end -= 1 }
        return (String(String.UnicodeScalarView(line.text[c..<end])), end)
    }

    func checkPlainStart(_ line: Line, _ c: Int, path: String) throws(ConfigError) {
        guard let ch = line[c] else { return }
        let unsupported: (String, String)?
        switch ch {
        case "&": unsupported = ("an anchor", "anchors and aliases are not supported")
        case "*": unsupported = ("an alias", "anchors and aliases are not supported")
        case "!": unsupported = ("a tag", "tags are not supported")
        case "|", ">":
            unsupported = (
                "a block scalar ('\(ch)')", "block scalars are not supported; use a quoted string with \\n escapes"
            )
        case "?" where line[c + 1] == nil || line[c + 1] == " ":
            unsupported = ("a complex key ('?')", "complex keys are not supported")
        case "@", "`", "%": unsupported = ("the reserved character '\(ch)'", "quote values that start with it")
        case "}", "]", ",": unsupported = ("'\(ch)'", "quote values that start with it")
        default: unsupported = nil
        }
        if let (found, hint) = unsupported { throw fail(line, c, path, expected: "a value", found: found, hint: hint) }
    }

    /// A quoted scalar starting at `c`; returns it and the column after the closing quote.
    func quoted(_ line: Line, _ c: Int, path: String) throws(ConfigError) -> (YAMLScalar, Int) {
        let q = line.text[c]
        var out = String.UnicodeScalarView()
        var j = c + 1
        while let ch = line[j] {
            if ch == q {
                if q == "'" && line[j + 1] == "'" {
                    out.append("'")
                    j += 2
                    continue
                }
                return (YAMLScalar(String(out), style: q == "'" ? .singleQuoted : .doubleQuoted), j + 1)
            }
            if q == "\"" && ch == "\\" {
                let (scalar, next) = try escape(line, j, path: path)
                out.append(scalar)
                j = next
                continue
            }
            out.append(ch)
            j += 1
        }
        throw fail(
            line, c, path, expected: "a closing \(q == "'" ? "single" : "double") quote on the same line",
            found: "the end of the line",
            hint: "quoted strings must fit on one line")
    }

    private func escape(_ line: Line, _ j: Int, path: String) throws(ConfigError) -> (Unicode.Scalar, Int) {
        guard let e = line[j + 1] else {
            throw fail(
                line, j, path, expected: "an escape after '\\'", found: "the end of the line",
                hint: "quoted strings must fit on one line")
        }
        let simple: [Unicode.Scalar: Unicode.Scalar] = [
            "0": "\u{0}", "a": "\u{7}", "b": "\u{8}", "t": "\t", "n": "\n", "v": "\u{B}", "f": "\u{C}", "r": "\r",
            "e": "\u{1B}", " ": " ", "\"": "\"", "/": "/", "\\": "\\",
        ]
        if let s = simple[e] { return (s, j + 2) }
        let digits: Int
        switch e {
        case "x": digits = 2
        case "u": digits = 4
        case "U": digits = 8
        default:
            throw fail(
                line, j, path,
                expected:
                    "a known escape (\\\\ \\\" \\/ \\n \\t \\r \\0 \\a \\b \\e \\f \\v \\xHH \\uHHHH \\UHHHHHHHH)",
                found: "'\\\(e)'")
        }
        let hex = (0..<digits).compactMap { line[j + 2 + $0] }
        guard hex.count == digits, let value = UInt32(String(String.UnicodeScalarView(hex)), radix: 16),
            let scalar = Unicode.Scalar(value)
        else {
            throw fail(
                line, j, path, expected: "'\\\(e)' followed by \(digits) hex digits of a Unicode scalar",
                found: rest(line, j))
        }
        return (scalar, j + 2 + digits)
    }
}
