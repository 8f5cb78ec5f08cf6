import CYAML
import ReachabilityVerdict

/// YAML for every file the product reads (the configuration, the web configuration), parsed by
/// libyaml (Debian's libyaml-0-2) into `YAMLNode`s: block and flow collections over any number of
/// lines, plain, quoted and block scalars (`|` and `>` with their chomping and indentation
/// indicators), anchors and aliases, `<<` merge keys, comments anywhere, `%YAML`/`%TAG` directives.
///
/// What libyaml accepts but a configuration must not hold is refused here with file:line:column
/// and the key path: several documents, duplicate keys, keys that are lists or maps, aliases to
/// unknown anchors, tags outside YAML's core schema (`!vault`, `!!binary`), nesting deeper than
/// 64, and more than 100,000 nodes repeated by aliases when that is also over sixteen times the file's own (an alias bomb: a few lines that expand
/// to billions of nodes). Nodes written out are bounded by the file's size (a configuration of
/// 10,000 probes has some 110,000), and at most 1,000,000. What aliases repeat is bounded in
/// bytes too (`maxRepeatedBytes`): a few aliases of one huge scalar are few nodes but many bytes
/// (2,000 aliases of a 400 KB label value made an 806 MB `/metrics`). Types (numbers, durations, booleans) are the schema's business,
/// not the parser's: `"5s"` and `5s` are the same duration.
package struct YAMLParser {
    static let maxDepth = 64
    /// Nodes that aliases repeat; a real configuration has a few hundred.
    static let maxRepeated = 100_000
    /// Nodes in all, aliases expanded.
    static let maxNodes = 1_000_000

    /// Bytes of scalars (keys and values) that aliases may repeat in a file of `fileBytes`:
    /// sixteen times the file, at least 4 MiB (room for a 10,000-probe file merging an anchor
    /// into every probe), at most 64 MiB.
    static func maxRepeatedBytes(fileBytes: Int) -> Int { min(64 << 20, max(4 << 20, 16 * fileBytes)) }

    /// Parses a whole file. Returns nil for a document with no content (only blank lines and
    /// comments, or a lone `~`).
    package static func parse(_ bytes: [UInt8], file: String) throws(ConfigError) -> YAMLNode? {
        let events = LibYAMLEvents(bytes)
        var parser = YAMLParser(
            file: file, events: events, maxRepeatedBytes: maxRepeatedBytes(fileBytes: bytes.count))
        return try parser.parseStream()
    }

    package static func parse(_ text: String, file: String) throws(ConfigError) -> YAMLNode? {
        try parse(Array(text.utf8), file: file)
    }

    let file: String
    let events: LibYAMLEvents
    let maxRepeatedBytes: Int
    var anchors: [String: (node: YAMLNode, size: Int, bytes: Int)] = [:]
    /// Nodes built so far, aliases counted at their expanded size; and those aliases repeated.
    var nodes = 0
    var repeated = 0
    /// Scalar bytes (keys and values) built so far, aliases expanded; and those aliases repeated.
    var bytes = 0
    var repeatedBytes = 0

    init(file: String, events: LibYAMLEvents, maxRepeatedBytes: Int) {
        self.file = file
        self.events = events
        self.maxRepeatedBytes = maxRepeatedBytes
    }
    var depth = 0

    mutating func parseStream() throws(ConfigError) -> YAMLNode? {
        guard case .streamStart = try next(path: "").kind else { return nil }
        let start = try next(path: "")
        guard case .documentStart = start.kind else { return nil }
        let root = try parseNode(try next(path: ""), path: "")
        _ = try next(path: "")  // the document's end
        let after = try next(path: "")
        if case .documentStart = after.kind {
            throw ConfigError(
                file: file, mark: after.mark, path: "", expected: "a single document", found: "a second document",
                hint: "one file holds one document; remove the '---' or split the file")
        }
        return root.isNull ? nil : root
    }

    mutating func next(path: String) throws(ConfigError) -> LibYAMLEvents.Event {
        do throws(LibYAMLEvents.Failure) { return try events.next() } catch {
            throw Self.describe(error, file: file, path: path)
        }
    }

    mutating func parseNode(_ event: LibYAMLEvents.Event, path: String) throws(ConfigError) -> YAMLNode {
        let node: YAMLNode
        let size: Int
        let bytesBefore = bytes
        switch event.kind {
        case .alias(let name):
            guard let anchored = anchors[name] else {
                throw fail(event.mark, path, expected: "an alias to an anchor defined above", found: "*\(name)")
            }
            repeated += anchored.size
            // A file's own anchors repeated once per probe (`<<: *defaults` in 10,000 probes)
            // stay within a few times its own nodes; an alias bomb does not.
            if repeated > Self.maxRepeated, repeated > 16 * (nodes - repeated + anchored.size) {
                throw fail(
                    event.mark, path, expected: "at most \(Self.maxRepeated) values repeated by aliases",
                    found: "more", hint: "aliases that repeat aliases multiply")
            }
            bytes += anchored.bytes
            try repeatBytes(anchored.bytes, alias: name, event.mark, path)
            try count(anchored.size, event.mark, path)
            return anchored.node
        case .scalar(let text, let style, let tag):
            try checkTag(tag, event.mark, path, allowed: Self.scalarTags)
            // `!!str` makes a plain scalar a string: never null, never a boolean.
            let style = tag == "tag:yaml.org,2002:str" && style == .plain ? .singleQuoted : style
            try count(1, event.mark, path)
            bytes += text.utf8.count
            node = YAMLNode(.scalar(YAMLScalar(text, style: style)), mark: event.mark)
            size = 1
        case .sequenceStart(let tag):
            try checkTag(tag, event.mark, path, allowed: ["tag:yaml.org,2002:seq"])
            (node, size) = try parseSequence(event, path: path)
        case .mappingStart(let tag):
            try checkTag(tag, event.mark, path, allowed: ["tag:yaml.org,2002:map"])
            (node, size) = try parseMapping(event, path: path)
        default:
            throw fail(event.mark, path, expected: "a value", found: "the end of a collection")
        }
        if let anchor = event.anchor { anchors[anchor] = (node, size, bytes - bytesBefore) }
        return node
    }

    mutating func parseSequence(
        _ start: LibYAMLEvents.Event, path: String
    ) throws(ConfigError) -> (YAMLNode, Int) {
        try enter(start.mark, path)
        defer { depth -= 1 }
        try count(1, start.mark, path)
        var items: [YAMLNode] = []
        var size = 1
        while true {
            let event = try next(path: KeyPath.index(path, items.count))
            if case .sequenceEnd = event.kind { break }
            let before = nodes
            items.append(try parseNode(event, path: KeyPath.index(path, items.count)))
            size += nodes - before
        }
        return (YAMLNode(.list(items), mark: start.mark), size)
    }

    mutating func parseMapping(
        _ start: LibYAMLEvents.Event, path: String
    ) throws(ConfigError) -> (YAMLNode, Int) {
        try enter(start.mark, path)
        defer { depth -= 1 }
        try count(1, start.mark, path)
        var entries: [YAMLMapEntry] = []
        var seen: [String: YAMLMark] = [:]
        var merged: [YAMLMapEntry] = []
        var mergeMark: YAMLMark?
        let before = nodes
        while true {
            let keyEvent = try next(path: path)
            if case .mappingEnd = keyEvent.kind { break }
            let key = try mapKey(keyEvent, path: path)
            bytes += key.text.utf8.count
            let keyPath = KeyPath.child(path, key.text)
            let value = try parseNode(try next(path: keyPath), path: keyPath)
            if key.isMerge {
                if let first = mergeMark {
                    throw fail(
                        keyEvent.mark, keyPath, expected: "one merge key per map", found: "\"<<\" again",
                        hint:
                            "first at line \(first.line), column \(first.column); merge several maps with <<: [*a, *b]")
                }
                mergeMark = keyEvent.mark
                merged += try mergeSources(value, path: keyPath)
                continue
            }
            if let first = seen[key.text] {
                throw fail(
                    keyEvent.mark, keyPath, expected: "each key once per map",
                    found: "\(key.text.debugDescription) again",
                    hint: "first at line \(first.line), column \(first.column)")
            }
            seen[key.text] = keyEvent.mark
            entries.append(YAMLMapEntry(key: key.text, keyMark: keyEvent.mark, value: value))
        }
        // Merge keys: the map's own keys win, then earlier sources over later ones.
        for entry in merged where seen[entry.key] == nil {
            seen[entry.key] = entry.keyMark
            entries.append(entry)
        }
        return (YAMLNode(.map(entries), mark: start.mark), 1 + nodes - before)
    }

    /// A key: a scalar (or an alias to one). `<<` unquoted is a merge key.
    mutating func mapKey(_ event: LibYAMLEvents.Event, path: String) throws(ConfigError) -> (
        text: String, isMerge: Bool
    ) {
        switch event.kind {
        case .scalar(let text, let style, let tag):
            try checkTag(tag, event.mark, path, allowed: Self.scalarTags)
            try count(1, event.mark, path)
            if let anchor = event.anchor {
                anchors[anchor] = (
                    YAMLNode(.scalar(YAMLScalar(text, style: style)), mark: event.mark), 1, text.utf8.count
                )
            }
            return (text, text == "<<" && style == .plain && tag == nil)
        case .alias(let name):
            guard let anchored = anchors[name], let scalar = anchored.node.scalar else {
                throw fail(event.mark, path, expected: "a key (text)", found: "*\(name), which is not text")
            }
            try repeatBytes(scalar.text.utf8.count, alias: name, event.mark, path)
            return (scalar.text, false)
        default:
            throw fail(
                event.mark, path, expected: "a key (text)", found: "a list or map as a key",
                hint: "complex keys are not supported")
        }
    }

    /// What a `<<` merges: a map, or a list of maps.
    func mergeSources(_ value: YAMLNode, path: String) throws(ConfigError) -> [YAMLMapEntry] {
        switch value.kind {
        case .map(let entries): return entries
        case .list(let items):
            var out: [YAMLMapEntry] = []
            var seen: Set<String> = []
            for item in items {
                guard case .map(let entries) = item.kind else {
                    throw fail(
                        item.mark, path, expected: "a map to merge (usually an alias such as *defaults)",
                        found: item.foundDescription)
                }
                out += entries.filter { seen.insert($0.key).inserted }
            }
            return out
        case .scalar:
            throw fail(
                value.mark, path, expected: "a map to merge (usually an alias such as *defaults)",
                found: value.foundDescription)
        }
    }

    static let scalarTags: Set<String> = [
        "tag:yaml.org,2002:str", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:bool",
        "tag:yaml.org,2002:null",
    ]

    func checkTag(_ tag: String?, _ mark: YAMLMark, _ path: String, allowed: Set<String>) throws(ConfigError) {
        guard let tag, tag != "!", !allowed.contains(tag) else { return }
        let shown = tag.hasPrefix("tag:yaml.org,2002:") ? "!!" + tag.dropFirst(18) : tag
        throw fail(
            mark, path, expected: "a value", found: "the tag \(shown)",
            hint: "only YAML's core tags (!!str, !!int, …) are supported")
    }

    mutating func enter(_ mark: YAMLMark, _ path: String) throws(ConfigError) {
        depth += 1
        if depth > Self.maxDepth {
            throw fail(mark, path, expected: "at most \(Self.maxDepth) levels of nesting", found: "more")
        }
    }

    /// Counts the text an alias repeats against `maxRepeatedBytes`.
    mutating func repeatBytes(_ n: Int, alias name: String, _ mark: YAMLMark, _ path: String) throws(ConfigError) {
        repeatedBytes += n
        guard repeatedBytes > maxRepeatedBytes else { return }
        throw fail(
            mark, path, expected: "at most \(maxRepeatedBytes >> 10) KiB of text repeated by aliases",
            found: "more (\(n) bytes at each *\(name))",
            hint: "an alias copies its anchor's text; write large values once")
    }

    mutating func count(_ n: Int, _ mark: YAMLMark, _ path: String) throws(ConfigError) {
        nodes += n
        if nodes > Self.maxNodes {
            throw fail(
                mark, path, expected: "at most \(Self.maxNodes) values in all", found: "more")
        }
    }

    func fail(
        _ mark: YAMLMark, _ path: String, expected: String, found: String, hint: String? = nil
    ) -> ConfigError {
        ConfigError(file: file, mark: mark, path: path, expected: expected, found: found, hint: hint)
    }

    /// libyaml's message, said for a person: what was expected where, what is there instead, and
    /// the collection or scalar it was reading (with where that starts).
    static func describe(_ failure: LibYAMLEvents.Failure, file: String, path: String) -> ConfigError {
        let trimmed = failure.snippet.trimmingTrailingSpaces
        let there = trimmed.isEmpty ? "the end of the line" : trimmed.debugDescription
        var expected = "valid YAML"
        var found = failure.problem.hasPrefix("found ") ? String(failure.problem.dropFirst(6)) : failure.problem
        var hint: String?
        switch failure.problem {
        case _ where failure.snippet.first == "\t":
            return ConfigError(
                file: file, mark: failure.mark, path: path, expected: "spaces for indentation", found: "a tab",
                hint: "YAML does not allow tabs in indentation")
        case "did not find expected key": (expected, found) = ("a 'key: value' entry at this map's indentation", there)
        case "did not find expected '-' indicator": (expected, found) = ("a '- item' at this list's indentation", there)
        case "did not find expected ',' or '}'": (expected, found) = ("',' or '}'", there)
        case "did not find expected ',' or ']'": (expected, found) = ("',' or ']'", there)
        case "did not find expected node content": (expected, found) = ("a value", there)
        case "could not find expected ':'":
            (expected, found) = ("':' after the key", there)
            hint = "a key's ':' must be followed by a space or the end of the line"
        case "mapping values are not allowed in this context":
            (expected, found) = ("a value", "':' followed by a space inside an unquoted value")
            hint = "quote the value, start a nested map on the next line, or check this line's indentation"
        case "block sequence entries are not allowed in this context":
            (expected, found) = ("a value", "a list item")
            hint = "a list starts on the line after its key"
        case "found character that cannot start any token":
            (expected, found) = ("a value", trimmed.first.map { "'\($0)'" } ?? there)
            hint = "quote values that start with it"
            return ConfigError(file: file, mark: failure.mark, path: path, expected: expected, found: found, hint: hint)
        case "found unexpected end of stream": (expected, found) = ("the closing quote", "the end of the file")
        case "found unknown escape character": (expected, found) = ("a known escape", there)
        case let p where p.hasPrefix("the control character"): expected = "printable text"
        case "bytes that are not valid UTF-8": expected = "UTF-8 text"
        default: break
        }
        if let context = failure.context {
            var said = Self.contexts[context] ?? context
            if let mark = failure.contextMark { said += " at line \(mark.line), column \(mark.column)" }
            hint = hint.map { "\($0); \(said)" } ?? said
        }
        return ConfigError(file: file, mark: failure.mark, path: path, expected: expected, found: found, hint: hint)
    }

    /// What libyaml was reading, in the words of the rest of the messages.
    static let contexts = [
        "while parsing a block mapping": "in the map that starts",
        "while parsing a block collection": "in the list that starts",
        "while parsing a flow mapping": "in the '{' map that opens",
        "while parsing a flow sequence": "in the '[' list that opens",
        "while scanning a quoted scalar": "in the quoted text that starts",
        "while parsing a quoted scalar": "in the quoted text that starts",
        "while scanning a simple key": "reading the key that starts",
        "while scanning a block scalar": "in the block text that starts",
        "while scanning an anchor": "reading the anchor that starts",
        "while scanning an alias": "reading the alias that starts",
        "while scanning a tag": "reading the tag that starts",
        "while scanning a directive": "reading the directive that starts",
        "while scanning for the next token": "reading the value that starts",
        "while parsing a flow node": "reading the value that starts",
        "while parsing a block node": "reading the value that starts",
    ]
}

extension String {
    fileprivate var trimmingTrailingSpaces: String {
        var s = Substring(self)
        while let last = s.last, last == " " || last == "\t" { s = s.dropLast() }
        return String(s)
    }
}
