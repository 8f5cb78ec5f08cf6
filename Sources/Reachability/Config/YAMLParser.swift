/// A strict parser for the small YAML subset the configuration file uses (docs/configuration.md):
/// block maps and block lists by indentation, one-line flow lists and flow maps, nested
/// (`[a, "b"]`, `{interval: 5s}`, `[{targets: [a, b]}]`), plain, single-quoted and
/// double-quoted scalars (with escapes), and `#` comments.
///
/// Everything outside the subset is an error that names the construct (anchors, aliases, tags,
/// block scalars, complex keys, multi-line scalars and flow collections, several documents), as are tabs in
/// indentation, duplicate keys and inconsistent indentation. Errors carry file:line:column and
/// the key path. Not for: general YAML; the schema (types, known keys) is `ConfigSchema`'s job.
package struct YAMLParser {
    struct Line {
        let number: Int
        let text: [Unicode.Scalar]
        /// Column (0-based) where the line's content starts; moved right for the content after `- `.
        var indent: Int
        /// A tab in the indentation (an error, reported with the key path when the line is reached).
        var tabColumn: Int?

        func mark(_ col: Int) -> YAMLMark { YAMLMark(line: number, column: col + 1) }
        subscript(_ i: Int) -> Unicode.Scalar? { i < text.count ? text[i] : nil }
    }

    let file: String
    var lines: [Line]
    var pos = 0
    /// Block nesting so far; bounded so that no input can exhaust the stack.
    var depth = 0
    static let maxDepth = 64

    /// Parses a whole file. Returns nil for a document with no content (only blank lines and comments).
    package static func parse(_ bytes: [UInt8], file: String) throws(ConfigError) -> YAMLNode? {
        var parser = try YAMLParser(bytes: bytes, file: file)
        return try parser.parseDocument()
    }

    package static func parse(_ text: String, file: String) throws(ConfigError) -> YAMLNode? {
        try parse(Array(text.utf8), file: file)
    }

    init(bytes: [UInt8], file: String) throws(ConfigError) {
        self.file = file
        var out: [Line] = []
        var raw = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
        if let first = raw.first, first.starts(with: [0xEF, 0xBB, 0xBF]) { raw[0] = first.dropFirst(3) }
        var sawContent = false
        for (index, var bytes) in raw.enumerated() {
            let number = index + 1
            if bytes.last == 0x0D { bytes = bytes.dropLast() }
            guard let string = String(validating: bytes, as: UTF8.self) else {
                throw ConfigError(
                    file: file, mark: YAMLMark(line: number, column: 1), path: "", expected: "UTF-8 text",
                    found: "bytes that are not valid UTF-8")
            }
            let text = Array(string.unicodeScalars)
            if let bad = text.firstIndex(where: { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }) {
                throw ConfigError(
                    file: file, mark: YAMLMark(line: number, column: bad + 1), path: "", expected: "printable text",
                    found:
                        "the control character U+\(String(text[bad].value, radix: 16, uppercase: true).leftPadded(4))")
            }
            guard let first = text.firstIndex(where: { $0 != " " && $0 != "\t" }), text[first] != "#" else { continue }
            let line = Line(number: number, text: text, indent: first, tabColumn: text[..<first].firstIndex(of: "\t"))
            if first == 0, text.first == "%" {
                throw ConfigError(
                    file: file, mark: line.mark(0), path: "", expected: "a key or a list item", found: "a directive",
                    hint: "directives (%YAML, %TAG) are not supported")
            }
            if first == 0, Self.isMarker(text, "---") || Self.isMarker(text, "...") {
                if !sawContent && Self.isMarker(text, "---") && Self.restIsBlank(text, from: 3) {
                    sawContent = true
                    continue
                }
                throw ConfigError(
                    file: file, mark: line.mark(0), path: "", expected: "a single document",
                    found: String(String.UnicodeScalarView(text.prefix(3))).debugDescription,
                    hint: "several documents, or content on the '---' line, are not supported")
            }
            sawContent = true
            out.append(line)
        }
        lines = out
    }

    private static func isMarker(_ text: [Unicode.Scalar], _ marker: String) -> Bool {
        let m = Array(marker.unicodeScalars)
        return text.count >= 3 && Array(text.prefix(3)) == m && (text.count == 3 || text[3] == " " || text[3] == "\t")
    }

    private static func restIsBlank(_ text: [Unicode.Scalar], from: Int) -> Bool {
        guard let j = text[from...].firstIndex(where: { $0 != " " && $0 != "\t" }) else { return true }
        return text[j] == "#"
    }

    mutating func parseDocument() throws(ConfigError) -> YAMLNode? {
        guard pos < lines.count else { return nil }
        let root = try parseBlock(path: "")
        if pos < lines.count {
            let line = lines[pos]
            throw fail(
                line, line.indent, "", expected: "the end of the document", found: rest(line, line.indent),
                hint: "this line does not belong to the document's top-level \(kindName(root))")
        }
        return root
    }

    /// A map, a list, or a lone value, starting at the current line's indentation.
    mutating func parseBlock(path: String) throws(ConfigError) -> YAMLNode {
        let line = lines[pos]
        try checkTabs(line, path: path)
        depth += 1
        defer { depth -= 1 }
        if depth > Self.maxDepth { throw tooDeep(line, line.indent, path) }
        let n = line.indent
        if isListItem(line, n) { return try parseList(indent: n, path: path) }
        if try key(line, n, path: path) != nil { return try parseMap(indent: n, path: path) }
        let value = try parseInlineValue(line, from: n, path: path)
        pos += 1
        try checkNotDeeper(than: n, container: path, value: path)
        return value
    }

    mutating func parseMap(indent n: Int, path: String) throws(ConfigError) -> YAMLNode {
        var entries: [YAMLMapEntry] = []
        var seen: [String: YAMLMark] = [:]
        let start = lines[pos].mark(n)
        while pos < lines.count {
            let line = lines[pos]
            try checkTabs(line, path: path)
            if line.indent < n { break }
            if line.indent > n { throw badIndentation(line, expected: n, path: path) }
            if isListItem(line, n) {
                throw fail(
                    line, n, path, expected: "a 'key: value' entry (this map's keys are at column \(n + 1))",
                    found: "a list item")
            }
            guard let k = try key(line, n, path: path) else {
                throw fail(
                    line, n, path, expected: "a 'key: value' entry", found: rest(line, n),
                    hint: line.text[n...].contains(":")
                        ? "a key's ':' must be followed by a space or the end of the line" : nil)
            }
            let keyPath = KeyPath.child(path, k.text)
            if let first = seen[k.text] {
                throw fail(
                    line, n, keyPath, expected: "each key once per map", found: "\(k.text.debugDescription) again",
                    hint: "first at line \(first.line), column \(first.column)")
            }
            seen[k.text] = k.mark
            let after = skipBlanks(line, k.afterColon)
            let value: YAMLNode
            if isLineEnd(line, after) {
                pos += 1
                value = try parseNested(
                    under: n, sameIndentList: true, emptyMark: line.mark(k.afterColon), path: keyPath)
            } else {
                value = try parseInlineValue(line, from: after, path: keyPath)
                pos += 1
                try checkNotDeeper(than: n, container: path, value: keyPath)
            }
            entries.append(YAMLMapEntry(key: k.text, keyMark: k.mark, value: value))
        }
        return YAMLNode(.map(entries), mark: start)
    }

    mutating func parseList(indent n: Int, path: String) throws(ConfigError) -> YAMLNode {
        var items: [YAMLNode] = []
        let start = lines[pos].mark(n)
        while pos < lines.count {
            let line = lines[pos]
            try checkTabs(line, path: path)
            if line.indent < n { break }
            if line.indent > n { throw badIndentation(line, expected: n, path: path) }
            guard isListItem(line, n) else { break }
            let itemPath = KeyPath.index(path, items.count)
            if line[n + 1] == "\t" {
                throw fail(
                    line, n + 1, itemPath, expected: "a space after '-'", found: "a tab",
                    hint: "YAML does not allow tabs in indentation")
            }
            let c = skipBlanks(line, n + 1)
            var startsBlock = isListItem(line, c)
            if !startsBlock && !isLineEnd(line, c) { startsBlock = try key(line, c, path: itemPath) != nil }
            let item: YAMLNode
            if isLineEnd(line, c) {
                pos += 1
                item = try parseNested(under: n, sameIndentList: false, emptyMark: line.mark(n), path: itemPath)
            } else if startsBlock {
                // A map or list that starts on the dash's line: the rest reads as a line indented to `c`.
                lines[pos].indent = c
                item = try parseBlock(path: itemPath)
            } else {
                item = try parseInlineValue(line, from: c, path: itemPath)
                pos += 1
                try checkNotDeeper(than: n, container: path, value: itemPath)
            }
            items.append(item)
        }
        return YAMLNode(.list(items), mark: start)
    }

    /// The value of `key:` (or `-`) with nothing after it: a deeper block, a list at the key's
    /// own indentation (`key:` then `- item`), or an empty (null) value.
    mutating func parseNested(under n: Int, sameIndentList: Bool, emptyMark: YAMLMark, path: String) throws(ConfigError)
        -> YAMLNode
    {
        if pos < lines.count {
            let next = lines[pos]
            if next.indent > n { return try parseBlock(path: path) }
            if sameIndentList && next.indent == n && isListItem(next, n) { return try parseList(indent: n, path: path) }
        }
        return YAMLNode(.scalar(YAMLScalar("")), mark: emptyMark)
    }

    /// After a value that ended its line, the next line may not be indented deeper than `n`:
    /// a deeper key or item is misplaced, anything else would be a multi-line value.
    func checkNotDeeper(than n: Int, container: String, value: String) throws(ConfigError) {
        guard pos < lines.count, lines[pos].indent > n else { return }
        let next = lines[pos]
        if next.tabColumn == nil, isListItem(next, next.indent) || (try? key(next, next.indent, path: value)) != nil {
            throw badIndentation(next, expected: n, path: container)
        }
        try checkTabs(next, path: value)
        throw fail(
            next, next.indent, value, expected: "a new entry at \(n) spaces or less after a one-line value",
            found: rest(next, next.indent),
            hint: "multi-line values are not supported; write the value on one line, quoted if needed")
    }

    // MARK: - Line helpers

    /// A key at `c`: plain (up to `: `) or quoted, followed by `:` and a blank or the line end.
    func key(_ line: Line, _ c: Int, path: String) throws(ConfigError) -> (
        text: String, mark: YAMLMark, afterColon: Int
    )? {
        guard let ch = line[c] else { return nil }
        if ch == "\"" || ch == "'" {
            let (scalar, end) = try quoted(line, c, path: path)
            let j = skipBlanks(line, end)
            guard line[j] == ":", line[j + 1] == nil || line[j + 1] == " " || line[j + 1] == "\t" else { return nil }
            return (scalar.text, line.mark(c), j + 1)
        }
        if "[{&*!|>%@`#,]}".unicodeScalars.contains(ch) { return nil }
        if (ch == "-" || ch == "?") && (line[c + 1] == nil || line[c + 1] == " ") { return nil }
        var j = c
        while let x = line[j] {
            if isCommentStart(line, j) { return nil }
            if x == ":" && (line[j + 1] == nil || line[j + 1] == " " || line[j + 1] == "\t") {
                var end = j
                while end > c && (line.text[end - 1] == " " || line.text[end - 1] == "\t") { end -= 1 }
                return (String(String.UnicodeScalarView(line.text[c..<end])), line.mark(c), j + 1)
            }
            j += 1
        }
        return nil
    }

    func isListItem(_ line: Line, _ c: Int) -> Bool {
        line[c] == "-" && (line[c + 1] == nil || line[c + 1] == " " || line[c + 1] == "\t")
    }

    func skipBlanks(_ line: Line, _ c: Int) -> Int {
        var j = c
        while line[j] == " " || line[j] == "\t" { j += 1 }
        return j
    }

    func isCommentStart(_ line: Line, _ j: Int) -> Bool {
        line[j] == "#" && (j == 0 || line.text[j - 1] == " " || line.text[j - 1] == "\t")
    }

    func isLineEnd(_ line: Line, _ j: Int) -> Bool { line[j] == nil || isCommentStart(line, j) }

    /// The rest of the line from `c`, without a trailing comment, quoted and shortened for a message.
    func rest(_ line: Line, _ c: Int) -> String {
        var end = line.text.count
        for j in c..<line.text.count where isCommentStart(line, j) {
            end = j
            break
        }
        while end > c && line.text[end - 1] == " " { end -= 1 }
        var text = String(String.UnicodeScalarView(line.text[min(c, end)..<end]))
        if text.count > 40 { text = String(text.prefix(37)) + "..." }
        return text.debugDescription
    }

    func badIndentation(_ line: Line, expected n: Int, path: String) -> ConfigError {
        fail(
            line, line.indent, path, expected: "indentation of \(n) spaces (as the entries above)",
            found: "\(line.indent) spaces")
    }

    func tooDeep(_ line: Line, _ col: Int, _ path: String) -> ConfigError {
        fail(line, col, path, expected: "at most \(Self.maxDepth) levels of nesting", found: "more")
    }

    func checkTabs(_ line: Line, path: String) throws(ConfigError) {
        guard let tab = line.tabColumn else { return }
        throw fail(
            line, tab, path, expected: "spaces for indentation", found: "a tab",
            hint: "YAML does not allow tabs in indentation")
    }

    func fail(_ line: Line, _ col: Int, _ path: String, expected: String, found: String, hint: String? = nil)
        -> ConfigError
    {
        ConfigError(file: file, mark: line.mark(col), path: path, expected: expected, found: found, hint: hint)
    }

    private func kindName(_ node: YAMLNode) -> String {
        switch node.kind {
        case .map: "map"
        case .list: "list"
        case .scalar: "value"
        }
    }
}

extension String {
    func leftPadded(_ width: Int, with pad: Character = "0") -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}
