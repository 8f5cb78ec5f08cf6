import Foundation
import Testing

/// The two modules' folders form layers, and arrows point one way: a folder may name the types of
/// the folders below it, never of one above. This test holds the table (docs/development.md
/// draws it) and reads the sources as the README tests read the docs: every type, protocol and
/// alias declared at the top level of a file belongs to its folder, and so does every free
/// function; a file that names a type, or calls a free function, of a folder its own may not use
/// fails with the file and the names.
///
/// It also holds which files may import the system's C modules (Glibc, CShim and the library
/// bindings): the thin system boundary `Posix/`, and the few components that speak a kernel
/// protocol themselves, listed by folder.
@Suite struct ArchitectureTests {
    /// Bottom to top. Each may use those before it.
    static let layers: [(folder: String, role: String)] = [
        (
            "Posix",
            "system calls, descriptors and sockets, the reactor, addresses, TLS/zlib/crypt/PCRE2 bindings, signals"
        ),
        ("Support", "pure helpers: logging, time, JSON, Base64, duration and size parsers, build info"),
        ("Lifecycle", "Service, ServiceRunner, Broadcaster"),
        ("Path", "the netlink path monitor, its model, the path gate, scopes, gateways' routes, neighbours"),
        ("Probes", "probe specs and probers: ICMP engine, HTTP, DNS, TCP, MTU; what a success can prove"),
        ("Verdict", "probe outcomes to verdicts per scope, fault location, the gateway prober"),
        ("Scheduling", "when rounds run; the monitor and its status"),
        ("(root)", "the library's front door: Reachability (the last layer of ReachabilityVerdict)"),
        ("Recording", "metrics registry and catalog, history, reports of outages and availability"),
        ("Config", "the YAML file, its schema, probe builders"),
        ("Web", "the HTTP server, web security, routes, the status page"),
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
    static let cModules = ["Glibc", "CShim", "COpenSSL", "CZlib", "CCrypt", "CYAML", "CPCRE2"]

    /// The library (`ReachabilityVerdict`: Posix to the front door) and the exporter on top of it
    /// (`ReachabilityExporter`: its own Posix bindings, Recording to Commands). The compiler keeps
    /// the library from naming the exporter; the table keeps the folders of each in order.
    static let libraryRoot = RepositoryRoot.url.appendingPathComponent("Sources/ReachabilityVerdict")
    static let exporterRoot = RepositoryRoot.url.appendingPathComponent("Sources/ReachabilityExporter")

    /// The folders the exporter's module may hold; the library holds the rest of the table.
    static let exporterFolders: Set<String> = ["Posix", "Recording", "Config", "Web", "Commands"]
    /// C modules only the exporter links (the library's product must not bring them).
    static let exporterOnlyCModules = ["CZlib", "CCrypt", "CYAML"]

    /// Every Swift file of one module: its path below the module's folder and its text.
    static func sources(in root: URL) throws -> [(path: String, text: String)] {
        let enumerator = FileManager.default.enumerator(atPath: root.path)
        var out: [(String, String)] = []
        while let relative = enumerator?.nextObject() as? String {
            guard relative.hasSuffix(".swift") else { continue }
            out.append((relative, try String(contentsOf: root.appendingPathComponent(relative), encoding: .utf8)))
        }
        return out.sorted { $0.0 < $1.0 }
    }

    /// Every Swift file of both modules.
    static func sources() throws -> [(path: String, text: String)] {
        try sources(in: libraryRoot) + sources(in: exporterRoot)
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
                    // An interpolation (\(…)) is code: kept, up to its closing parenthesis.
                    while i < chars.count && chars[i] != "\"" && chars[i] != "\n" {
                        if chars[i] == "\\" && i + 1 < chars.count && chars[i + 1] == "(" {
                            var depth = 0
                            i += 1
                            while i < chars.count {
                                if chars[i] == "(" { depth += 1 }
                                if chars[i] == ")" { depth -= 1 }
                                out.append(chars[i])
                                i += 1
                                if depth == 0 { break }
                            }
                            out.append(" ")
                            continue
                        }
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

    static let modifiers: Set<Substring> = [
        "public", "package", "internal", "private", "fileprivate", "final", "indirect", "nonisolated",
    ]

    /// Names declared at the top level (column 0) of a file, and those declared directly in a
    /// top-level `extension` (a type nested in a type of another folder belongs to this file's).
    /// Members (lowercase names) are not seen: the check is about types, as the table is.
    static func declarations(_ code: String) -> [String] {
        let keywords: Set<Substring> = ["struct", "enum", "class", "protocol", "actor", "typealias"]
        func declared(_ line: Substring) -> String? {
            let words = line.split(whereSeparator: { $0 == " " || $0 == ":" || $0 == "<" || $0 == "{" || $0 == "=" })
            var k = 0
            while k < words.count && (modifiers.contains(words[k]) || words[k].hasPrefix("@")) { k += 1 }
            return k + 1 < words.count && keywords.contains(words[k]) ? String(words[k + 1]) : nil
        }
        return declarationsAndNested(code, declared).owned
    }

    /// The top-level declarations and those directly in a top-level extension (`owned`), and the
    /// types nested directly in other top-level types (`nested`: `UDPSocket.Received`), whose
    /// names are too common to tell a folder by.
    static func declarationsAndNested(_ code: String, _ declared: (Substring) -> String?) -> (
        owned: [String], nested: [String]
    ) {
        var owned: [String] = []
        var nested: [String] = []
        var inExtension = false
        for line in code.split(separator: "\n") {
            if !(line.first?.isWhitespace ?? true) {
                inExtension = line.split(separator: " ").contains { $0 == "extension" } && !line.hasSuffix("}")
                if let name = declared(line) { owned.append(name) }
            } else if line.hasPrefix("    "), !line.dropFirst(4).hasPrefix(" "), let name = declared(line.dropFirst(4))
            {
                if inExtension { owned.append(name) } else { nested.append(name) }
            }
        }
        return (owned, nested)
    }

    /// Names of types nested directly in top-level types (not extensions).
    static func nestedTypes(_ code: String) -> [String] {
        let keywords: Set<Substring> = ["struct", "enum", "class", "protocol", "actor", "typealias"]
        return declarationsAndNested(code) { line in
            let words = line.split(whereSeparator: { $0 == " " || $0 == ":" || $0 == "<" || $0 == "{" || $0 == "=" })
            let k = words.firstIndex { keywords.contains($0) }
            return k.flatMap { $0 + 1 < words.count ? String(words[$0 + 1]) : nil }
        }.nested
    }

    /// Free functions: `func` declarations at the top level (column 0) of a file.
    static func freeFunctions(_ code: String) -> [String] {
        code.split(separator: "\n").compactMap { line in
            guard !(line.first?.isWhitespace ?? true) else { return nil }
            let words = line.split(whereSeparator: { $0 == " " || $0 == "(" || $0 == "<" })
            guard let k = words.firstIndex(where: { !modifiers.contains($0) && !$0.hasPrefix("@") }),
                words[k] == "func", k + 1 < words.count
            else { return nil }
            return String(words[k + 1])
        }
    }

    /// Lowercase identifiers used unqualified (not after `.`, nor declared by `func`): the
    /// calls a free function may receive.
    static func unqualifiedNames(_ code: String) -> Set<String> {
        var out = Set<String>()
        var current = ""
        var qualified = false
        var previousWord = ""
        for c in code + " " {
            if c.isLetter || c.isNumber || c == "_" {
                current.append(c)
                continue
            }
            if let f = current.first, f.isLowercase, !qualified, previousWord != "func" { out.insert(current) }
            if !current.isEmpty { previousWord = current }
            current = ""
            if !c.isWhitespace { qualified = c == "." }
        }
        return out
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
        try #require(files.count > 100, "sources not found at \(Self.libraryRoot.path)")
        let rank = Dictionary(uniqueKeysWithValues: Self.layers.enumerated().map { ($1.folder, $0) })
        // A name declared in two folders (a nested `Received` in two extensions) names neither.
        var owners: [String: Set<String>] = [:]
        var codes: [(path: String, code: String)] = []
        for (path, text) in files {
            let folder = Self.folder(of: path)
            #expect(rank[folder] != nil, "\(path): folder \(folder) is not in the layer table")
            let code = Self.code(text)
            for name in Self.declarations(code) + Self.freeFunctions(code) { owners[name, default: []].insert(folder) }
            for name in Self.nestedTypes(code) { owners[name, default: []].insert("(nested)") }
            codes.append((path, code))
        }
        let owner = owners.compactMapValues { $0.count == 1 ? $0.first : nil }
        #expect(owner["HTTPServer"] == "Web" && owner["ICMPEngine"] == "Probes" && owner["Scope"] == "Path")
        #expect(owner["connectSocket"] == "Posix", "free functions belong to their folder")
        var violations: [String] = []
        for (path, code) in codes {
            let folder = Self.folder(of: path)
            guard let mine = rank[folder] else { continue }
            let above = Self.identifiers(code).union(Self.unqualifiedNames(code)).filter { name in
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
        // A type nested in an extension of another folder's type is this file's.
        #expect(
            Self.declarations("extension Low {\n    package struct Sneaky {}\n        struct Deeper {}\n}\n") == [
                "Sneaky"
            ])
        // An interpolation is code.
        #expect(Self.identifiers(Self.code("let s = \"a \\(WebRoutes.self) b\"\n")).contains("WebRoutes"))
        #expect(
            Self.importsCModule("import struct Glibc.timespec") && Self.importsCModule("@preconcurrency import CShim"))
        #expect(!Self.importsCModule("import Synchronization"))
        #expect(
            Self.declarations("package struct A: B {}\n@usableFromInline final class C {}\n  struct Nested {}\n") == [
                "A", "C",
            ])
        // Free functions: declared at the top level, seen where called unqualified.
        #expect(
            Self.freeFunctions("package func spread<T>(_ x: T) {}\n@inlinable func g() {}\n    func member() {}\n") == [
                "spread", "g",
            ])
        let calls = Self.unqualifiedNames(Self.code("let r = await spread(items)\nx.member()\nfunc own() {}\n"))
        #expect(calls.contains("spread") && !calls.contains("member") && !calls.contains("own"))
    }

    /// `import M`, `import struct M.x`, `@preconcurrency import M` of a C module.
    static func importsCModule(_ line: Substring) -> Bool {
        let words = line.split(separator: " ")
        guard let i = words.firstIndex(of: "import") else { return false }
        return words[(i + 1)...].contains { word in
            cModules.contains { word == $0 || word.hasPrefix("\($0).") }
        }
    }

    /// The library's product links what checking needs (OpenSSL, PCRE2, the kernel headers): no
    /// file of it imports zlib, libcrypt or libyaml, and its folders are the library's layers.
    @Test func theLibraryLinksNoExporterLibrary() throws {
        let library = try Self.sources(in: Self.libraryRoot)
        try #require(library.count > 100)
        for (path, text) in library {
            let imports = text.split(separator: "\n").filter { line in
                Self.exporterOnlyCModules.contains { line.hasSuffix("import \($0)") }
            }
            #expect(imports.isEmpty, "\(path): \(imports)")
            let folder = Self.folder(of: path)
            #expect(folder == "Posix" || !Self.exporterFolders.contains(folder), "\(path) is the exporter's")
        }
        for (path, _) in try Self.sources(in: Self.exporterRoot) {
            #expect(Self.exporterFolders.contains(Self.folder(of: path)), "\(path) belongs in the library")
        }
    }

    @Test func onlyTheSystemBoundaryImportsCModules() throws {
        var offenders: [String] = []
        for (path, text) in try Self.sources() where Self.folder(of: path) != "Posix" {
            let imports = text.split(separator: "\n").filter { Self.importsCModule($0) }
            guard !imports.isEmpty else { continue }
            let allowed = Self.systemImports.keys.contains { path == $0 || path.hasPrefix($0 + "/") }
            if !allowed { offenders.append("\(path): \(imports.joined(separator: ", "))") }
        }
        #expect(
            offenders.isEmpty,
            "C modules imported outside Posix/ and the listed components:\n\(offenders.joined(separator: "\n"))")
    }
}
