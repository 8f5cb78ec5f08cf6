/// A map of the configuration file read against a fixed set of keys: unknown keys are errors
/// (with a suggestion), and every typed accessor reports a wrong value with its key path,
/// position, what was expected and what was found. Absent keys read as nil; a key present
/// with no value is an error for every typed accessor (an empty `interval:` is a mistake,
/// not a default).
package struct ConfigMap {
    package let file: String
    package let path: String
    package let node: YAMLNode
    package let entries: [YAMLMapEntry]

    /// - Parameter what: what the map is, for the error when the node is not a map ("the probe").
    package init(_ node: YAMLNode, path: String, file: String, keys allowed: [String], what: String) throws(ConfigError)
    {
        guard case .map(let entries) = node.kind else {
            throw ConfigError(
                file: file, mark: node.mark, path: path, expected: "a map (\(what))", found: node.foundDescription)
        }
        for e in entries where !allowed.contains(e.key) {
            var hint: String?
            if let near = allowed.min(by: { editDistance($0, e.key) < editDistance($1, e.key) }),
                editDistance(near, e.key) <= max(1, e.key.count / 3)
            {
                hint = "did you mean \(near.debugDescription)?"
            }
            throw ConfigError(
                file: file, mark: e.keyMark, path: KeyPath.child(path, e.key),
                expected: "one of the keys \(allowed.joined(separator: ", "))", found: "an unknown key", hint: hint)
        }
        self.file = file
        self.path = path
        self.node = node
        self.entries = entries
    }

    package var keys: [String] { entries.map(\.key) }

    package func has(_ key: String) -> Bool { entries.contains { $0.key == key } }

    package func value(_ key: String) -> YAMLNode? { entries.first { $0.key == key }?.value }

    package func keyMark(_ key: String) -> YAMLMark? { entries.first { $0.key == key }?.keyMark }

    package func path(_ key: String) -> String { KeyPath.child(path, key) }

    package func fail(_ key: String, expected: String, found: String? = nil, hint: String? = nil) -> ConfigError {
        let node = value(key)
        return ConfigError(
            file: file, mark: node?.mark ?? keyMark(key) ?? self.node.mark, path: path(key),
            expected: expected, found: found ?? node?.foundDescription ?? "nothing", hint: hint)
    }

    /// A required key that is missing: reported at the map.
    package func missing(_ key: String, expected: String) -> ConfigError {
        ConfigError(
            file: file, mark: node.mark, path: path, expected: "a key \(key.debugDescription) (\(expected))",
            found: "none")
    }

    /// A scalar's text (any quoting); nil if the key is absent.
    package func scalar(_ key: String, expected: String) throws(ConfigError) -> (text: String, node: YAMLNode)? {
        guard let node = value(key) else { return nil }
        guard let s = node.scalar, !s.isNull else { throw fail(key, expected: expected) }
        return (s.text, node)
    }

    package func string(_ key: String, expected: String = "a non-empty string") throws(ConfigError) -> String? {
        guard let (text, _) = try scalar(key, expected: expected) else { return nil }
        guard !text.isEmpty else { throw fail(key, expected: expected, found: "an empty string") }
        return text
    }

    package func duration(_ key: String) throws(ConfigError) -> Duration? {
        let expected = "a duration such as 500ms, 5s or 1m30s"
        guard let (text, _) = try scalar(key, expected: expected) else { return nil }
        do throws(DurationParser.Invalid) { return try DurationParser.parse(text) } catch {
            throw fail(key, expected: expected, hint: error.message)
        }
    }

    package func int(_ key: String, _ range: ClosedRange<Int>) throws(ConfigError) -> Int? {
        let expected = "a whole number from \(range.lowerBound) to \(range.upperBound)"
        guard let (text, _) = try scalar(key, expected: expected) else { return nil }
        guard let v = Int(text), range.contains(v) else { throw fail(key, expected: expected) }
        return v
    }

    /// `true` or `false`, unquoted (YAML 1.1's yes/no/on/off are refused: they surprise).
    package func bool(_ key: String) throws(ConfigError) -> Bool? {
        guard let node = value(key) else { return nil }
        guard let s = node.scalar, s.style == .plain, s.text == "true" || s.text == "false" else {
            throw fail(key, expected: "true or false")
        }
        return s.text == "true"
    }

    package func choice<T: RawRepresentable & CaseIterable>(_ key: String, _: T.Type) throws(ConfigError) -> T?
    where T.RawValue == String {
        let expected = "one of " + T.allCases.map(\.rawValue).joined(separator: ", ")
        guard let (text, _) = try scalar(key, expected: expected) else { return nil }
        guard let v = T(rawValue: text) else { throw fail(key, expected: expected) }
        return v
    }

    package func list(_ key: String, expected: String) throws(ConfigError) -> [YAMLNode]? {
        guard let node = value(key) else { return nil }
        guard case .list(let items) = node.kind else { throw fail(key, expected: expected) }
        return items
    }

    package func map(_ key: String, keys: [String], what: String) throws(ConfigError) -> ConfigMap? {
        guard let node = value(key) else { return nil }
        return try ConfigMap(node, path: path(key), file: file, keys: keys, what: what)
    }
}

/// Levenshtein distance, for "did you mean" (keys are short).
package func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a)
    let b = Array(b)
    guard !a.isEmpty else { return b.count }
    guard !b.isEmpty else { return a.count }
    var row = Array(0...b.count)
    for i in 1...a.count {
        var previous = row[0]
        row[0] = i
        for j in 1...b.count {
            let current = row[j]
            row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
            previous = current
        }
    }
    return row[b.count]
}
