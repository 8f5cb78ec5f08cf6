import ReachabilityVerdict

/// A blackbox_exporter configuration file (`blackbox.yml`) as `/probe` reads it: `modules:`,
/// each a `prober` (`http`, `tcp`, `icmp`, `dns`), an optional `timeout` and its prober's
/// section. The same file blackbox reads loads here unchanged; a module that asks for what the
/// probers cannot do (gRPC, client certificates, a TTL…) is refused at load with the key and
/// the reason, never ignored, and so is a module with a key blackbox does not know either (with
/// a suggestion). A file that is not YAML, or not `modules:`, is refused whole.
/// docs/probe-endpoint.md lists every key.
package struct BlackboxModuleFile: Sendable {
    /// The modules by name.
    package var modules: [String: BlackboxModule] = [:]
    /// Modules that asked for what these probers cannot do (or were written wrong), with the
    /// error: the file loads without them, each is logged at load, and `/probe` answers `400`
    /// with the error for it. Debian's own `blackbox.yml` has two `grpc` modules: the file's
    /// other modules still work.
    package var refused: [String: ConfigError] = [:]
    /// The file it was read from.
    package var file: String

    /// The largest file read (a module file is a few KiB).
    static let maximumSize = 1 << 20

    package static func load(path: String) throws(ConfigError) -> BlackboxModuleFile {
        let bytes: [UInt8]
        do {
            bytes = try FileContents.read(path, limit: maximumSize)
        } catch {
            throw ConfigError(
                file: path, mark: nil, path: "", expected: "a readable module file (blackbox.yml)",
                found: FileContents.describe(error, limit: maximumSize))
        }
        return try parse(bytes, file: path)
    }

    package static func parse(_ bytes: [UInt8], file: String) throws(ConfigError) -> BlackboxModuleFile {
        var out = BlackboxModuleFile(file: file)
        guard let root = try YAMLParser.parse(bytes, file: file) else {
            throw ConfigError(
                file: file, mark: nil, path: "", expected: "a module file with modules:", found: "an empty file")
        }
        let top = try ConfigMap(root, path: "", file: file, keys: ["modules"], what: "a blackbox module file")
        guard let node = top.value("modules") else { throw top.missing("modules", expected: "a map of modules") }
        guard case .map(let entries) = node.kind else {
            throw top.fail("modules", expected: "a map of module name to module")
        }
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        for (i, e) in entries.enumerated() {
            guard !e.key.isEmpty, e.key.utf8.count <= 200, !e.key.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F })
            else {
                throw ConfigError(
                    file: file, mark: e.keyMark, path: KeyPath.child("modules", e.key),
                    expected: "a module name of 1 to 200 printable bytes", found: e.key.debugDescription)
            }
            var module: BlackboxModule
            do throws(ConfigError) {
                let m = try ConfigMap(
                    e.value, path: KeyPath.child("modules", e.key), file: file, keys: BlackboxModule.keys,
                    what: "a module")
                module = try BlackboxModule.decode(name: e.key, m)
            } catch {
                out.refused[e.key] = error
                continue
            }
            // The module as written, for `debug=true`: its lines, up to the next module.
            // libyaml counts a lone CR as a line break and this split does not: its line numbers
            // can run past these lines (a file with CRs crashed here in the fuzzer).
            let first = min(max(0, e.keyMark.line - 1), lines.count)
            let next = i + 1 < entries.count ? entries[i + 1].keyMark.line - 1 : lines.count
            module.text = lines[first..<max(first, min(next, lines.count))].joined(separator: "\n")
            out.modules[e.key] = module
        }
        return out
    }
}

/// One module of a blackbox module file, checked and ready to build a prober for a target.
package struct BlackboxModule: Sendable {
    /// The probers `/probe` runs; blackbox's `grpc` and `unix` are refused.
    package enum ProberKind: String, Sendable, CaseIterable {
        case http, tcp, icmp, dns
    }

    /// What its prober section says.
    package enum Settings: Sendable {
        case http(BlackboxHTTP)
        case tcp(BlackboxTCP)
        case icmp(BlackboxICMP)
        case dns(BlackboxDNS)
    }

    /// blackbox's `preferred_ip_protocol` and `ip_protocol_fallback`: which family the target's
    /// name is resolved to first, and whether the other one may do when it has no address.
    package struct IPProtocol: Sendable, Equatable {
        /// `ip6` (blackbox's default) or `ip4`.
        package var preferred: IPFamily = .ipv6
        /// blackbox's default: true.
        package var fallback = true
        package init() {}
    }

    package var name: String
    package var prober: ProberKind
    /// `timeout`; nil: the scrape's timeout less the offset.
    package var timeout: Duration?
    package var settings: Settings
    package var ipProtocol = IPProtocol()
    /// `uplink` (ours): the interface every probe of the module is bound to (`SO_BINDTODEVICE`).
    package var uplink: String?
    /// The module's lines as written.
    package var text = ""

    static let keys = ["prober", "timeout", "http", "tcp", "icmp", "dns", "grpc", "unix", "uplink"]

    static func decode(name: String, _ m: ConfigMap) throws(ConfigError) -> BlackboxModule {
        guard let proberText = try m.string("prober", expected: "http, tcp, icmp or dns") else {
            throw m.missing("prober", expected: "http, tcp, icmp or dns")
        }
        guard let prober = ProberKind(rawValue: proberText) else {
            let hint =
                ["grpc", "unix"].contains(proberText)
                ? "this exporter has no \(proberText) prober" : nil
            throw m.fail("prober", expected: "http, tcp, icmp or dns", hint: hint)
        }
        for section in ["grpc", "unix"] where m.has(section) {
            throw m.fail(
                section, expected: "no \(section) section", found: "a \(section) section",
                hint: "this exporter has no \(section) prober")
        }
        for section in ProberKind.allCases.map(\.rawValue) where section != prober.rawValue && m.has(section) {
            // blackbox ignores the sections of other probers; a module that sets them was meant otherwise.
            throw m.fail(
                section, expected: "only the \(prober.rawValue) section (prober: \(prober.rawValue))",
                found: "a \(section) section")
        }
        let timeout = try m.duration("timeout")
        if let timeout, timeout <= .zero {
            throw m.fail("timeout", expected: "a duration above 0")
        }
        let uplink = try m.string("uplink", expected: "an interface name")
        if let uplink, let problem = InterfaceName.problem(uplink) {
            throw m.fail("uplink", expected: "an interface name", hint: problem)
        }
        let section = try m.map(
            prober.rawValue, keys: BlackboxKeys.all(prober), what: "the \(prober.rawValue) prober's settings")
        let empty = try ConfigMap(
            YAMLNode(.map([]), mark: m.node.mark), path: m.path(prober.rawValue), file: m.file, keys: [], what: "")
        let s = section ?? empty
        try BlackboxKeys.refuseUnsupported(s, prober)
        var module = BlackboxModule(
            name: name, prober: prober, timeout: timeout, settings: .icmp(BlackboxICMP()), uplink: uplink)
        module.ipProtocol = try Self.ipProtocol(s)
        switch prober {
        case .http: module.settings = .http(try BlackboxHTTP(s))
        case .tcp: module.settings = .tcp(try BlackboxTCP(s))
        case .icmp: module.settings = .icmp(try BlackboxICMP(s))
        case .dns: module.settings = .dns(try BlackboxDNS(s))
        }
        return module
    }

    private static func ipProtocol(_ s: ConfigMap) throws(ConfigError) -> IPProtocol {
        var p = IPProtocol()
        if let text = try s.string("preferred_ip_protocol", expected: "ip4 or ip6") {
            switch text {
            case "ip4": p.preferred = .ipv4
            case "ip6": p.preferred = .ipv6
            default: throw s.fail("preferred_ip_protocol", expected: "ip4 or ip6")
            }
        }
        p.fallback = try s.bool("ip_protocol_fallback") ?? true
        return p
    }
}
