import Foundation
import Testing

/// The library's folders form layers, and arrows point one way: a folder may name the types of
/// the folders below it, never of one above. This test holds the table (docs/development.md
/// draws it) and reads the sources as the README tests read the docs: every type, protocol and
/// alias declared at the top level of a file belongs to its folder, and a file that names a type
/// of a folder its own may not use fails with the file and the names.
///
/// It also holds which files may import the system's C modules (Glibc, CShim and the library
/// bindings): the thin system boundary `Posix/`, and the few components that speak a kernel
/// protocol themselves, listed by folder.
@Suite struct ArchitectureTests {
    /// Bottom to top. Each may use those before it.
    static let layers: [(folder: String, role: String)] = [
        ("Posix", "system calls, descriptors and sockets, the reactor, addresses, TLS/zlib/crypt bindings, signals"),
        ("Support", "pure helpers: logging, time, JSON, Base64, duration and size parsers, build info"),
        ("Lifecycle", "Service, ServiceRunner, Broadcaster"),
        ("Path", "the netlink path monitor, its model, the path gate, scopes, gateways' routes, neighbours"),
        ("Probes", "probe specs and probers: ICMP engine, HTTP, DNS, TCP, MTU; what a success can prove"),
        ("Verdict", "probe outcomes to verdicts per scope, fault location, the gateway prober"),
        ("Scheduling", "when rounds run; the monitor and its status"),
        ("Recording", "metrics registry and catalog, history, reports of outages and availability"),
        ("Config", "the YAML file, its schema, probe builders"),
        ("Web", "the HTTP server, web security, routes, the status page"),
        ("(root)", "the library's front door: Reachability"),
        ("Commands", "the command line: flags, the exporter's assembly, subcommands; nothing uses it"),
    ]

    /// Folders (or files) outside `Posix/` that may import the C modules, and why.
    static let systemImports: [String: String] = [
        "Probes/ICMP": "the ICMP engine owns its raw/ping sockets and kernel timestamps",
        "Path/Netlink": "the netlink loop, neighbour dump and sysfs reads",
        "Web/HTTP/HTTPServer.swift": "the server's accept loop and socket options",
        "Web/HTTP/HTTPServer+Listeners.swift": "systemd socket activation (inherited descriptors)",
        "Config/YAMLParser.swift": "libyaml (CYAML)",
        "Config/LibYAMLEvents.swift": "libyaml (CYAML)",
    ]
    static let cModules = ["Glibc", "CShim", "COpenSSL", "CZlib", "CCrypt", "CYAML"]

    static let sourceRoot = RepositoryRoot.url.appendingPathComponent("Sources/Reachability")

    /// Every Swift file of the library: its path below `Sources/Reachability` and its text.
    static func sources() throws -> [(path: String, text: String)] {
        let enumerator = FileManager.default.enumerator(atPath: sourceRoot.path)
        var out: [(String, String)] = []
        while let relative = enumerator?.nextObject() as? String {
            guard relative.hasSuffix(".swift") else { continue }
            out.append((relative, try String(contentsOf: sourceRoot.appendingPathComponent(relative), encoding: .utf8)))
        }
        return out.sorted { $0.0 < $1.0 }
    }

    static func folder(of path: String) -> String {
        path.contains("/") ? String(path.split(separator: "/")[0]) : "(root)"
    }

    /// The text without comments and string literals (their words are not uses of types).
    static func code(_ text: String) -> String {
        var out = ""
        let chars = Array(text)
        var i = 0
        while i < chars.count {
            let c = chars[i]
            let next = i + 1 < chars.count ? chars[i + 1] : "\0"
            if c == "/" && next == "/" {
                while i < chars.count && chars[i] != "\n" { i += 1 }
            } else if c == "/" && next == "*" {
                i += 2
                while i + 1 < chars.count && !(chars[i] == "*" && chars[i + 1] == "/") { i += 1 }
                i += 2
            } else if c == "\"" {
                let triple = i + 2 < chars.count && chars[i + 1] == "\"" && chars[i + 2] == "\""
                if triple {
                    i += 3
                    while i + 2 < chars.count && !(chars[i] == "\"" && chars[i + 1] == "\"" && chars[i + 2] == "\"") {
                        i += 1
                    }
                    i += 3
                } else {
                    i += 1
                    // Interpolations (\(…)) are code, but rare enough in type position to skip.
                    while i < chars.count && chars[i] != "\"" && chars[i] != "\n" {
                        if chars[i] == "\\" { i += 1 }
                        i += 1
                    }
                    i += 1
                }
                out.append("\"\"")
            } else {
                out.append(c)
                i += 1
            }
        }
        return out
    }

    /// Names declared at the top level (column 0) of a file.
    static func declarations(_ code: String) -> [String] {
        let keywords: Set<Substring> = ["struct", "enum", "class", "protocol", "actor", "typealias"]
        let modifiers: Set<Substring> = [
            "public", "package", "internal", "private", "fileprivate", "final", "indirect", "nonisolated",
        ]
        var names: [String] = []
        for line in code.split(separator: "\n") where !(line.first?.isWhitespace ?? true) {
            let words = line.split(whereSeparator: { $0 == " " || $0 == ":" || $0 == "<" || $0 == "{" || $0 == "=" })
            var k = 0
            while k < words.count && (modifiers.contains(words[k]) || words[k].hasPrefix("@")) { k += 1 }
            if k + 1 < words.count, keywords.contains(words[k]) { names.append(String(words[k + 1])) }
        }
        return names
    }

    /// Capitalised identifiers in code.
    static func identifiers(_ code: String) -> Set<String> {
        var out = Set<String>()
        var current = ""
        for c in code {
            if c.isLetter || c.isNumber || c == "_" {
                current.append(c)
            } else {
                if let f = current.first, f.isUppercase { out.insert(current) }
                current = ""
            }
        }
        if let f = current.first, f.isUppercase { out.insert(current) }
        return out
    }

    @Test func arrowsPointOneWay() throws {
        let files = try Self.sources()
        try #require(files.count > 100, "library sources not found at \(Self.sourceRoot.path)")
        let rank = Dictionary(uniqueKeysWithValues: Self.layers.enumerated().map { ($1.folder, $0) })
        var owner: [String: String] = [:]
        var codes: [(path: String, code: String)] = []
        for (path, text) in files {
            let folder = Self.folder(of: path)
            #expect(rank[folder] != nil, "\(path): folder \(folder) is not in the layer table")
            let code = Self.code(text)
            for name in Self.declarations(code) { owner[name] = owner[name] ?? folder }
            codes.append((path, code))
        }
        #expect(owner["HTTPServer"] == "Web" && owner["ICMPEngine"] == "Probes" && owner["Scope"] == "Path")
        var violations: [String] = []
        for (path, code) in codes {
            let folder = Self.folder(of: path)
            guard let mine = rank[folder] else { continue }
            let above = Self.identifiers(code).filter { name in
                guard let o = owner[name], let r = rank[o] else { return false }
                return r > mine
            }
            if !above.isEmpty {
                violations.append(
                    "\(path) names \(above.sorted().map { "\($0) (\(owner[$0]!))" }.joined(separator: ", "))")
            }
        }
        #expect(
            violations.isEmpty, "a folder names a type of a folder above it:\n\(violations.joined(separator: "\n"))")
    }

    /// The check itself catches what it must: a Posix file naming a Web type is a violation.
    @Test func theCheckSeesAUseOfATypeAbove() {
        let code = Self.code(
            "import Glibc\n// HTTPRequest in a comment\nfunc f(_ r: HTTPRequest) { _ = \"WebSecurity\" }\n")
        let names = Self.identifiers(code)
        #expect(names.contains("HTTPRequest") && !names.contains("WebSecurity"))
        #expect(
            Self.declarations("package struct A: B {}\n@usableFromInline final class C {}\n  struct Nested {}\n") == [
                "A", "C",
            ])
    }

    @Test func onlyTheSystemBoundaryImportsCModules() throws {
        var offenders: [String] = []
        for (path, text) in try Self.sources() where Self.folder(of: path) != "Posix" {
            let imports = text.split(separator: "\n").filter { line in
                Self.cModules.contains { line == "import \($0)" || line.hasSuffix(" import \($0)") }
            }
            guard !imports.isEmpty else { continue }
            let allowed = Self.systemImports.keys.contains { path == $0 || path.hasPrefix($0 + "/") }
            if !allowed { offenders.append("\(path): \(imports.joined(separator: ", "))") }
        }
        #expect(
            offenders.isEmpty,
            "C modules imported outside Posix/ and the listed components:\n\(offenders.joined(separator: "\n"))")
    }
}
