import ReachabilityVerdict

extension ConfigSchema {
    static let captivePortalKeys = ["enabled", "dir", "ca_file", "api"]

    /// `captive_portal: {enabled, dir, ca_file, api: {wlan0: https://…}}`: how the network's
    /// captive-portal API (RFC 8908, announced as RFC 8910 says) is learned and read.
    static func captivePortal(_ top: ConfigMap) throws(ConfigError) -> CaptivePortalSettings? {
        guard
            let m = try top.map(
                "captive_portal", keys: captivePortalKeys,
                what: "the captive-portal API settings (enabled, dir, ca_file, api)")
        else { return nil }
        var out = CaptivePortalSettings()
        if let enabled = try m.bool("enabled") { out.enabled = enabled }
        if let dir = try m.string("dir", expected: "an absolute directory path") {
            guard dir.hasPrefix("/"), !dir.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
                throw m.fail("dir", expected: "an absolute directory path")
            }
            out.directory = dir.count > 1 && dir.hasSuffix("/") ? String(dir.dropLast()) : dir
        }
        out.caFile = try m.string("ca_file", expected: "a path to a PEM file of CA certificates")
        // Loaded now, as a probe's `tls.ca_file` is, so a typo fails the load instead of every read.
        if let caFile = out.caFile {
            do throws(TLSContext.Failure) {
                _ = try TLSContext.shared(TLSContext.Options(caFile: caFile, insecureSkipVerify: false))
            } catch {
                throw m.fail("ca_file", expected: "a readable PEM file of CA certificates", hint: error.message)
            }
        }
        guard let node = m.value("api") else { return out }
        guard case .map(let entries) = node.kind else {
            throw m.fail("api", expected: "a map of interface names to https URIs (wlan0: https://portal.example/api)")
        }
        for e in entries {
            let path = KeyPath.child(KeyPath.child(m.path, "api"), e.key)
            if let problem = InterfaceName.problem(e.key) {
                throw ConfigError(
                    file: top.file, mark: e.keyMark, path: path, expected: "an interface name (\(InterfaceName.rule))",
                    found: e.key.debugDescription, hint: problem)
            }
            guard let s = e.value.scalar, !s.isNull else {
                throw ConfigError(
                    file: top.file, mark: e.value.mark, path: path, expected: "an https URI",
                    found: e.value.foundDescription)
            }
            if case .failure(let problem) = CaptivePortalSources.check(s.text) {
                throw ConfigError(
                    file: top.file, mark: e.value.mark, path: path, expected: "an https URI (RFC 8908)",
                    found: String(s.text.prefix(200)).debugDescription, hint: problem.message)
            }
            out.api[e.key] = s.text
        }
        return out
    }
}
