/// A position in a source file: 1-based line and column (columns count Unicode code points).
package struct YAMLMark: Sendable, Equatable, CustomStringConvertible {
    package var line: Int
    package var column: Int

    package init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    package var description: String { "\(line):\(column)" }
}

/// A scalar as written: its text after unquoting, and how it was quoted. Types (numbers,
/// durations, booleans) are decided by the schema, not by the parser, so `"5s"` and `5s`
/// are the same duration and a quoted `"true"` can still be a name.
package struct YAMLScalar: Sendable, Equatable {
    /// `literal` and `folded` are the block scalars `|` and `>`.
    package enum Style: Sendable, Equatable { case plain, singleQuoted, doubleQuoted, literal, folded }

    package var text: String
    package var style: Style

    package init(_ text: String, style: Style = .plain) {
        self.text = text
        self.style = style
    }

    /// An unquoted empty value, `~` or `null`.
    package var isNull: Bool { style == .plain && (text.isEmpty || text == "~" || text == "null") }
}

/// One `key: value` pair of a block map, in file order.
package struct YAMLMapEntry: Sendable, Equatable {
    package var key: String
    package var keyMark: YAMLMark
    package var value: YAMLNode

    package init(key: String, keyMark: YAMLMark, value: YAMLNode) {
        self.key = key
        self.keyMark = keyMark
        self.value = value
    }
}

/// A node of a parsed file: a scalar, a list or a map, with where it starts. Aliases are
/// already expanded and merge keys merged; there are no tags or complex keys.
package struct YAMLNode: Sendable, Equatable {
    package indirect enum Kind: Sendable, Equatable {
        case scalar(YAMLScalar)
        case list([YAMLNode])
        case map([YAMLMapEntry])
    }

    package var kind: Kind
    package var mark: YAMLMark

    package init(_ kind: Kind, mark: YAMLMark) {
        self.kind = kind
        self.mark = mark
    }

    package var scalar: YAMLScalar? {
        if case .scalar(let s) = kind { return s }
        return nil
    }

    package var isNull: Bool { scalar?.isNull ?? false }

    /// How the node reads in an error message: `"5 seconds"`, `nothing`, `a list`, `a map`.
    package var foundDescription: String {
        switch kind {
        case .scalar(let s):
            s.isNull ? (s.text.isEmpty ? "nothing" : s.text) : Redaction.userinfo(in: s.text).debugDescription
        case .list: "a list"
        case .map: "a map"
        }
    }
}
