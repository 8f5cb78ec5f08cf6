import ReachabilityVerdict

/// Where the endpoints live, as Prometheus spells the flags: `--web.route-prefix` (every route
/// under it; defaults to `--web.external-url`'s path), `--web.external-url` (the address users
/// reach the exporter at, behind a proxy) and `--web.telemetry-path` (the metrics' route under
/// the prefix, `/metrics` by default). The pages link only relatively (`./metrics`, `../`), so
/// they work at any prefix, whether a proxy passes the prefix on or strips it.
package struct WebPaths: Sendable, Equatable {
    /// The route prefix: `""` for the root, else `/rx` (a leading slash, none trailing).
    package private(set) var prefix = ""
    /// The metrics' route under the prefix.
    package private(set) var telemetry = "/metrics"
    /// `--web.external-url` as given, when it was.
    package private(set) var externalURL: String?

    /// The routes the exporter serves itself; the telemetry path may not take one of them.
    static let reserved: Set<String> = ["/", "/-/healthy", "/-/ready", "/-/reload", "/debug/probe", "/probe"]

    package init() {}

    /// A flag's value these paths cannot take; `message` names the flag, as usage errors do.
    package struct Invalid: Error, Equatable {
        package let message: String
        /// A URL's user information in the message is replaced (`Redaction`).
        init(message: String) { self.message = Redaction.userinfo(in: message) }
    }

    /// Validates the three flags' values (`nil` when not given).
    package init(routePrefix: String?, externalURL: String?, telemetryPath: String?) throws(Invalid) {
        if let externalURL {
            self.externalURL = externalURL
            prefix = try Self.normalized(Self.path(ofExternalURL: externalURL), flag: "web.external-url")
        }
        if let routePrefix { prefix = try Self.normalized(routePrefix, flag: "web.route-prefix") }
        if let telemetryPath {
            let t = try Self.normalized(telemetryPath, flag: "web.telemetry-path")
            guard !t.isEmpty, !Self.reserved.contains(t) else {
                throw Invalid(
                    message:
                        "invalid value \"\(telemetryPath)\" for flag '--web.telemetry-path': "
                        + "it must name a path of its own, not one of \(Self.reserved.sorted().joined(separator: ", "))"
                )
            }
            telemetry = t
        }
    }

    /// The route a request's path asks for, with the prefix taken off; `nil` when the path is
    /// outside the prefix.
    package func route(_ path: String) -> String? {
        guard !prefix.isEmpty else { return path }
        guard path.hasPrefix(prefix) else { return nil }
        let rest = path.dropFirst(prefix.count)
        return rest.first == "/" ? String(rest) : nil
    }

    /// Where a request outside the prefix is sent: the prefix itself (`/rx` and `/` go to
    /// `/rx/`), as a relative reference so a proxy's own prefix survives. `nil`: a 404.
    package func redirect(_ path: String) -> String? {
        guard !prefix.isEmpty else { return nil }
        if path == prefix { return String(prefix.split(separator: "/").last!) + "/" }
        if path == "/" { return "." + prefix + "/" }
        return nil
    }

    /// A relative link from the page at route `page` to route `target` (`./metrics` from `/`,
    /// `../` from `/debug/probe` to `/`).
    package static func link(from page: String, to target: String) -> String {
        let depth = page.split(separator: "/", omittingEmptySubsequences: false).count - 2
        return (depth > 0 ? String(repeating: "../", count: depth) : "./") + target.dropFirst()
    }

    /// The characters a route may hold: letters, digits, `-._~` and `/` (no `%`, `?`, `#`, `:`,
    /// spaces or `..`: a route is matched as sent and must read the same in a link).
    private static func normalized(_ text: String, flag: String) throws(Invalid) -> String {
        let allowed = text.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
                || "-._~/".unicodeScalars.contains($0)
        }
        let segments = text.split(separator: "/")
        guard allowed, !segments.contains(where: { $0 == "." || $0 == ".." }), text.count <= 256 else {
            throw Invalid(
                message:
                    "invalid value \"\(text)\" for flag '--\(flag)': a path holds letters, digits, '-', '.', '_', '~' "
                    + "and '/' only, without '.' or '..' segments, up to 256 characters")
        }
        return segments.isEmpty ? "" : "/" + segments.joined(separator: "/")
    }

    /// The path of an absolute `http(s)://` URL, `/` when it has none.
    private static func path(ofExternalURL url: String) throws(Invalid) -> String {
        let lower = url.lowercased()
        guard let scheme = ["http://", "https://"].first(where: { lower.hasPrefix($0) }) else {
            throw Invalid(
                message:
                    "invalid value \"\(url)\" for flag '--web.external-url': an absolute http:// or https:// URL, "
                    + "as in https://proxy.example/rx/")
        }
        let rest = url.dropFirst(scheme.count)
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.isEmpty, !authority.contains("@"), !url.contains("?"), !url.contains("#") else {
            throw Invalid(
                message:
                    "invalid value \"\(url)\" for flag '--web.external-url': it needs a host and no user, query or fragment"
            )
        }
        let path = rest.dropFirst(authority.count)
        return path.isEmpty ? "/" : String(path)
    }
}
