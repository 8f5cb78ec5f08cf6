/// One `probes:` entry of the configuration file as its kind's decoder sees it: the settings
/// every kind shares, already checked, and where each key was written (for errors).
package struct ProbeEntry: Sendable, Equatable {
    /// The `target` label of its series; defaults to `target`.
    package var name: String
    /// Its `type:`.
    package var type: ProbeType
    /// URL (http, https), host (icmp, mtu), host:port (tcp) or the name to look up (dns).
    package var target: String
    /// Its own interval and timeout, if set.
    package var interval: Duration?
    package var timeout: Duration?
    /// The family it is pinned to, if set.
    package var family: FamilyPreference?
    /// Its constant labels (`labels:`).
    package var labels: [ProbeLabel] = []
    /// The file, where the entry starts and its key path (`probes[2]`).
    package var file: String = ""
    package var mark: YAMLMark = YAMLMark(line: 0, column: 0)
    package var path: String = ""
    /// Where each key of the entry was, by relative key path (`http.tls.ca_file`).
    package var marks: [String: YAMLMark] = [:]

    /// An entry of `type` probing `target`, reported as `name`.
    package init(name: String, type: ProbeType, target: String) {
        self.name = name
        self.type = type
        self.target = target
    }

    /// The error for `key` (a key path below the entry): at that key, else at its nearest
    /// parent that was written, else at the entry.
    package func fail(_ key: String, expected: String, found: String) -> ConfigError {
        var mark = marks[key]
        var prefix = key
        while mark == nil, let dot = prefix.lastIndex(of: ".") {
            prefix = String(prefix[..<dot])
            mark = marks[prefix]
        }
        return ConfigError(
            file: file, mark: mark ?? self.mark, path: "\(path).\(key)", expected: expected, found: found)
    }

    /// Runs a configuration's own checks; a setting that cannot work is reported at its key
    /// (`ProbeConfigError.field`), with what the setting expects.
    package func checked<T>(_ build: () throws(ProbeConfigError) -> T) throws(ConfigError) -> T {
        do throws(ProbeConfigError) {
            return try build()
        } catch {
            let expected = error.field == .target ? type.kind.targetText(type) : error.field.expected
            throw fail(error.field.key, expected: expected, found: error.message)
        }
    }

    /// Why an ICMP or MTU target cannot be probed (an IP address its family does not admit, or
    /// not a plausible host name): thrown before the configuration is built.
    package func checkHost() throws(ConfigError) {
        if let literal = SocketAddress(ip: target) {
            if let f = family, !f.admits(literal.ipFamily) {
                throw fail(
                    "family", expected: "a family that admits the \(literal.ipFamily.rawValue) address \(target)",
                    found: f.rawValue)
            }
        } else if !Resolver.isPlausibleHostName(target) {
            throw fail("target", expected: "a host name or IP address", found: target.debugDescription)
        }
    }

    /// Where and how often its spec runs: its name, target text, pinned family, interval, timeout.
    package var placement: ProbeSpec.Placement {
        ProbeSpec.Placement(
            name: name, target: target, family: family.flatMap { IPFamily(rawValue: $0.rawValue) },
            interval: interval, timeout: timeout)
    }
}

/// A kind's one validated configuration as the configuration file gives it: decoded from the
/// entry's section straight into the configuration, starting from the kind's default for the
/// entry's target, and turned into the scheduler's spec.
package protocol ProbeConfiguration: Sendable, Equatable {
    /// Reads the kind's section of `entry` (`p` is the entry's map; the section may be absent)
    /// into a configuration, reporting a wrong value at the key it was reading. Records where
    /// each key it reads was written in `entry.marks`.
    static func decode(_ entry: inout ProbeEntry, in p: ConfigMap) throws(ConfigError) -> Self

    /// The scheduler's spec of this configuration, placed as `at` says.
    func spec(_ at: ProbeSpec.Placement) -> ProbeSpec

    /// What `check-config` says of its settings, beside the shared ones ("count 3").
    var summary: [String] { get }
}

extension ProbeConfiguration {
    /// Whether `other` is a configuration of the same kind with the same settings.
    package func isEqual(to other: any ProbeConfiguration) -> Bool { (other as? Self) == self }
}
