import ReachabilityVerdict

/// A command-line error shown to a person: one line naming the flag, then a usage hint; exit 64.
package struct UsageError: Error, Equatable, CustomStringConvertible {
    package let message: String
    /// A URL's user information in the message (a flag's value quoted) is replaced (`Redaction`),
    /// and control characters a value brought are escaped (the message goes to a terminal).
    package init(_ message: String) { self.message = Redaction.userinfo(in: message).escapingControlCharacters }
    package var description: String { message }
}

/// One flag a command accepts.
package struct FlagSpec: Sendable {
    package enum Kind: Sendable, Equatable {
        /// Takes a value; the last one given wins.
        case value(default: String?)
        /// Takes a value; may be given many times.
        case repeated
        /// `--name` sets it, `--no-name` clears it.
        case bool(default: Bool)
    }
    package let name: String
    package let kind: Kind
    package let placeholder: String
    package let help: String
    /// The configuration file's key for the same setting, where the file has one and its name
    /// differs from the flag's (`--probe.mode` is `global.policy`); `--help` names it.
    package let fileKey: String?

    package init(_ name: String, _ kind: Kind, placeholder: String = "", help: String, file fileKey: String? = nil) {
        self.name = name
        self.kind = kind
        self.placeholder = placeholder
        self.help = help
        self.fileKey = fileKey
    }
}

/// Parsed flags: typed accessors report malformed values as `UsageError`s naming the flag.
package struct ParsedFlags: Sendable {
    var values: [String: [String]] = [:]
    var bools: [String: Bool] = [:]
    let specs: [String: FlagSpec]
    package var positional: [String] = []

    /// The flag's value (last one given), or its default.
    package func string(_ name: String) -> String? {
        if let v = values[name]?.last { return v }
        if case .value(let d)? = specs[name]?.kind { return d }
        return nil
    }

    package func strings(_ name: String) -> [String] { values[name] ?? [] }

    package func bool(_ name: String) -> Bool {
        if let b = bools[name] { return b }
        if case .bool(let d)? = specs[name]?.kind { return d }
        return false
    }

    /// Whether the flag appeared on the command line at all.
    package func isSet(_ name: String) -> Bool { values[name] != nil || bools[name] != nil }

    package func duration(_ name: String) throws(UsageError) -> Duration? {
        guard let text = string(name) else { return nil }
        do { return try DurationParser.parse(text) } catch {
            throw UsageError("invalid value \(text.debugDescription) for flag '--\(name)': \(error.message)")
        }
    }

    package func int(_ name: String, range: ClosedRange<Int>) throws(UsageError) -> Int? {
        guard let text = string(name) else { return nil }
        guard let v = Int(text), range.contains(v) else {
            throw UsageError(
                "invalid value \(text.debugDescription) for flag '--\(name)': expected a whole number from \(range.lowerBound) to \(range.upperBound)"
            )
        }
        return v
    }

    package func choice<T: RawRepresentable & CaseIterable>(_ name: String, as: T.Type) throws(UsageError) -> T?
    where T.RawValue == String {
        guard let text = string(name) else { return nil }
        guard let v = T(rawValue: text) else {
            let allowed = T.allCases.map(\.rawValue).joined(separator: ", ")
            throw UsageError("invalid value \(text.debugDescription) for flag '--\(name)': expected one of \(allowed)")
        }
        return v
    }
}

/// Parses arguments in the Prometheus exporters' (kingpin) convention: `--name=value`,
/// `--name value`, `--flag` / `--no-flag`, `-h`. Anything after `--` is positional.
package struct FlagParser: Sendable {
    package let specs: [FlagSpec]
    package let allowsPositional: Bool

    package init(_ specs: [FlagSpec], allowsPositional: Bool = false) {
        self.specs = specs
        self.allowsPositional = allowsPositional
    }

    package func parse(_ args: [String]) throws(UsageError) -> ParsedFlags {
        let byName = Dictionary(specs.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        var out = ParsedFlags(specs: byName)
        var i = 0
        var onlyPositional = false
        while i < args.count {
            let arg = args[i]
            i += 1
            if onlyPositional || !arg.hasPrefix("-") || arg == "-" {
                guard allowsPositional else { throw UsageError("unexpected argument \(arg.debugDescription)") }
                out.positional.append(arg)
                continue
            }
            if arg == "--" {
                onlyPositional = true
                continue
            }
            if arg == "-h" {
                out.bools["help"] = true
                continue
            }
            guard arg.hasPrefix("--") else { throw UsageError("unknown short flag '\(arg)'") }
            let body = arg.dropFirst(2)
            let name: String
            var inlineValue: String?
            if let eq = body.firstIndex(of: "=") {
                name = String(body[..<eq])
                inlineValue = String(body[body.index(after: eq)...])
            } else {
                name = String(body)
            }
            if let spec = byName[name] {
                switch spec.kind {
                case .bool:
                    if let v = inlineValue {
                        guard let b = Bool(v) else {
                            throw UsageError(
                                "invalid value \(v.debugDescription) for flag '--\(name)': expected true or false")
                        }
                        out.bools[name] = b
                    } else {
                        out.bools[name] = true
                    }
                case .value, .repeated:
                    let value: String
                    if let v = inlineValue {
                        value = v
                    } else {
                        guard i < args.count else { throw UsageError("expected argument for flag '--\(name)'") }
                        value = args[i]
                        i += 1
                    }
                    out.values[name, default: []].append(value)
                }
            } else if name.hasPrefix("no-"), inlineValue == nil, let spec = byName[String(name.dropFirst(3))],
                case .bool = spec.kind
            {
                out.bools[spec.name] = false
            } else {
                throw UsageError("unknown long flag '--\(name)'")
            }
        }
        return out
    }

    /// The flags section of `--help`, one flag per entry, aligned.
    package func helpText() -> String {
        var lines: [String] = []
        for s in specs {
            var head = "--"
            switch s.kind {
            case .bool: head += "[no-]\(s.name)"
            case .value, .repeated: head += "\(s.name)=\(s.placeholder.isEmpty ? "VALUE" : s.placeholder)"
            }
            var help = s.help
            if case .value(let d?) = s.kind, !d.isEmpty { help += " (default: \(d))" }
            if case .repeated = s.kind { help += " (repeatable)" }
            if let key = s.fileKey { help += " (file: \(key))" }
            lines.append("  " + head.padding(32) + " " + help)
        }
        return lines.joined(separator: "\n")
    }
}

extension String {
    func padding(_ width: Int) -> String {
        count >= width
            ? self + "\n" + String(repeating: " ", count: width + 2)
            : self + String(repeating: " ", count: width - count)
    }
}
