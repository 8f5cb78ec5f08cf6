/// A configuration file that cannot be used, told for a person: where (file, line, column),
/// which key (`probes[1].http.expected_status`), what was expected and what was found.
///
/// `rx.yml:7:15: probes[0].interval: expected a duration such as 500ms, 5s or 1m30s, found "5 seconds"`
///
/// Exit status 78 at start-up; a failed reload keeps the running configuration. Never holds a
/// URL's user information or a value under a credential's key (`Redaction`).
package struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    package var file: String
    /// 0 when the error is about the file as a whole (unreadable, empty).
    package var line: Int
    package var column: Int
    /// The key path, `""` for the document itself.
    package var path: String
    package var expected: String
    package var found: String
    /// A short addition: a suggestion, the place of an earlier duplicate, a rule.
    package var hint: String?

    package init(file: String, mark: YAMLMark?, path: String, expected: String, found: String, hint: String? = nil) {
        self.file = file
        line = mark?.line ?? 0
        column = mark?.column ?? 0
        self.path = path
        self.expected = expected
        // Under a credential's key only the value's shape is told (`basic_auth_users: "alice:pw"`).
        let shown = Redaction.isSecret(path: path) ? Redaction.shapeOnly(found) : found
        self.found = Redaction.userinfo(in: shown)
        self.hint = hint.map { Redaction.userinfo(in: $0) }
    }

    package var description: String {
        var out = line > 0 ? "\(file):\(line):\(column): " : "\(file): "
        if !path.isEmpty { out += "\(path): " }
        out += "expected \(expected), found \(found)"
        if let hint { out += " (\(hint))" }
        return out
    }
}

/// Key paths as they appear in error messages: `global.interval`, `probes[2].http.tls.ca_file`.
package enum KeyPath {
    package static func child(_ parent: String, _ key: String) -> String {
        let plain =
            !key.isEmpty
            && key.unicodeScalars.allSatisfy {
                $0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == "-"
            }
        let shown = plain ? key : key.debugDescription
        return parent.isEmpty ? shown : "\(parent).\(shown)"
    }

    package static func index(_ parent: String, _ i: Int) -> String { "\(parent)[\(i)]" }
}
