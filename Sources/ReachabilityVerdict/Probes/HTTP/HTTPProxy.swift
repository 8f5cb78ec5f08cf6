/// A forward HTTP proxy: `http://[user[:password]@]host[:port]` (port 80 when absent, as Go's
/// clients do; `host:port` without a scheme is read as http). Plain-HTTP requests go to it in
/// absolute form; HTTPS goes through a `CONNECT` tunnel, so TLS still runs end to end with the
/// origin. Credentials (percent-decoded) are sent as `Proxy-Authorization: Basic`.
package struct HTTPProxy: Sendable, Equatable, CustomStringConvertible {
    package let endpoint: HostPort
    package let username: String?
    package let password: String?

    package init(parsing text: String) throws(ProbeConfigError) {
        let quoted = Self.redacted(text).debugDescription
        var rest = Substring(text)
        if let sep = rest.firstRange(of: "://") {
            let scheme = rest[..<sep.lowerBound].lowercased()
            guard scheme == "http" else {
                throw ProbeConfigError(
                    .httpProxyURL,
                    "proxy \(quoted): the \(scheme):// scheme is not supported; use an http:// proxy (HTTPS still runs end to end through CONNECT)"
                )
            }
            rest = rest[sep.upperBound...]
        }
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.contains("/"), !rest.contains("?"), !rest.contains("#") else {
            throw ProbeConfigError(.httpProxyURL, "proxy \(quoted): a proxy URL has no path, query or fragment")
        }
        var user: String?
        var pass: String?
        if let at = rest.lastIndex(of: "@") {
            let info = rest[..<at]
            rest = rest[rest.index(after: at)...]
            let parts = info.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard let u = Self.percentDecoded(parts[0]), !u.isEmpty else {
                throw ProbeConfigError(.httpProxyURL, "proxy \(quoted): bad user name in the user information")
            }
            user = u
            if parts.count == 2 {
                guard let p = Self.percentDecoded(parts[1]) else {
                    throw ProbeConfigError(.httpProxyURL, "proxy \(quoted): bad percent-encoding in the password")
                }
                pass = p
            }
        }
        do {
            endpoint = try HostPort(parsing: String(rest), defaultPort: 80)
        } catch {
            throw ProbeConfigError(.httpProxyURL, "proxy \(quoted): \(error.message)")
        }
        username = user
        password = pass
    }

    /// `http://host:port`, without credentials (for details and logs).
    package var description: String { "http://\(endpoint)" }

    /// The `Proxy-Authorization` value, when the URL carries credentials.
    package var authorization: String? {
        guard let username else { return nil }
        return "Basic " + Base64.encode(Array("\(username):\(password ?? "")".utf8))
    }

    /// `text` with its user information replaced, so messages and logs never carry a password.
    package static func redacted(_ text: String) -> String {
        if text.contains("://") { return Redaction.userinfo(in: text) }
        guard let at = text.lastIndex(of: "@") else { return text }
        return Redaction.credentials + String(text[at...])
    }

    private static func percentDecoded(_ text: Substring) -> String? {
        var out: [UInt8] = []
        var bytes = Array(text.utf8)[...]
        while let b = bytes.popFirst() {
            guard b == UInt8(ascii: "%") else {
                out.append(b)
                continue
            }
            guard bytes.count >= 2, let v = UInt8(String(decoding: bytes.prefix(2), as: UTF8.self), radix: 16) else {
                return nil
            }
            out.append(v)
            bytes = bytes.dropFirst(2)
        }
        return String(validating: out, as: UTF8.self)
    }
}

/// Which proxy, if any, a request goes through.
package enum HTTPProxySetting: Sendable, Equatable {
    /// Straight to the origin (the default).
    case direct
    /// Every request through this proxy (`http.proxy_url`).
    case fixed(HTTPProxy)
    /// As the environment says (`http.proxy_from_environment`), read once when the probe is built.
    case environment(ProxyEnvironment)

    /// The proxy for a request to `url`; nil: direct.
    package func proxy(for url: ProbeURL) -> HTTPProxy? {
        switch self {
        case .direct: nil
        case .fixed(let proxy): proxy
        case .environment(let env): env.proxy(for: url)
        }
    }

    /// Whether some request may go through a proxy.
    package var mayProxy: Bool {
        switch self {
        case .direct: false
        case .fixed: true
        case .environment(let env): env.http != nil || env.https != nil
        }
    }
}

/// `HTTP_PROXY`, `HTTPS_PROXY` and `NO_PROXY` (the first non-empty of upper and lower case), with the
/// rules of Go's `httpproxy` that Prometheus exporters follow: `NO_PROXY` is a comma-separated
/// list of `*`, host names (`example.com` also covers its subdomains; `.example.com` only
/// them), IP addresses and CIDR prefixes, each optionally with `:port`; requests to `localhost`
/// and loopback addresses never use a proxy.
package struct ProxyEnvironment: Sendable, Equatable {
    package let http: HTTPProxy?
    package let https: HTTPProxy?
    package let noProxy: [String]

    package init(_ environment: [String: String]) throws(ProbeConfigError) {
        func value(_ name: String) -> String? {
            [environment[name], environment[name.lowercased()]].compactMap { $0 }.first { !$0.isEmpty }
        }
        do {
            http = try value("HTTP_PROXY").map { v throws(ProbeConfigError) in try HTTPProxy(parsing: v) }
            https = try value("HTTPS_PROXY").map { v throws(ProbeConfigError) in try HTTPProxy(parsing: v) }
        } catch {
            throw ProbeConfigError(.httpProxyFromEnvironment, "proxy_from_environment: \(error.message)")
        }
        noProxy = (value("NO_PROXY") ?? "").split(separator: ",").map { $0.trimmingSpaces.lowercased() }.filter {
            !$0.isEmpty
        }
    }

    package func proxy(for url: ProbeURL) -> HTTPProxy? {
        guard let proxy = url.scheme == .https ? https : http else { return nil }
        let host = url.host.lowercased()
        if host == "localhost" { return nil }
        if let b = SocketAddress(ip: host)?.addressBytes,
            b.count == 4 ? b[0] == 127 : b == [UInt8](repeating: 0, count: 15) + [1]
        {
            return nil
        }
        return noProxy.contains { Self.matches($0, host: host, port: url.port) } ? nil : proxy
    }

    /// Whether one `NO_PROXY` entry covers `host` (lower-cased, without brackets) on `port`.
    package static func matches(_ entry: String, host: String, port: UInt16) -> Bool {
        if entry == "*" { return true }
        var pattern = Substring(entry)
        // host:port or [v6]:port: neither a bare IPv6 literal nor a prefix.
        if !entry.contains("/"), SocketAddress(ip: entry) == nil, let colon = entry.lastIndex(of: ":") {
            guard UInt16(entry[entry.index(after: colon)...]) == port else { return false }
            pattern = entry[..<colon]
        }
        if pattern.hasPrefix("["), pattern.hasSuffix("]") { pattern = pattern.dropFirst().dropLast() }
        let hostBytes = SocketAddress(ip: host)?.addressBytes
        if let slash = pattern.firstIndex(of: "/") {
            guard let network = SocketAddress(ip: String(pattern[..<slash]))?.addressBytes,
                let bits = Int(pattern[pattern.index(after: slash)...]), let hostBytes
            else { return false }
            return AddressLocality.samePrefix(network, hostBytes, length: bits)
        }
        if let ip = SocketAddress(ip: String(pattern)) { return ip.addressBytes == hostBytes }
        if pattern.hasPrefix(".") { return host.hasSuffix(pattern) }
        return host == pattern || host.hasSuffix("." + pattern)
    }
}
