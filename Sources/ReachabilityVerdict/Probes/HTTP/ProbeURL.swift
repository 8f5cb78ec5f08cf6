/// An `http` or `https` URL a probe fetches, checked once when the configuration is built so a
/// bad URL is a configuration error, never a probe-time failure. Also resolves redirect
/// `Location` references against itself (RFC 3986 §5.2).
///
/// Not for: user info, non-HTTP schemes, internationalised host names (use the ASCII form).
package struct ProbeURL: Sendable, Hashable, CustomStringConvertible {
    package enum Scheme: String, Sendable, Hashable {
        case http, https

        package var defaultPort: UInt16 { self == .http ? 80 : 443 }
    }

    /// Why a URL (or a redirect reference) was refused.
    package struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The URL as written, its user information replaced (`Redaction`).
        package let input: String
        package let message: String

        package init(input: String, message: String) {
            self.input = Redaction.userinfo(in: input)
            self.message = message
        }
        package var description: String { "invalid URL \(input.debugDescription): \(message)" }
    }

    package let scheme: Scheme
    /// Lower-cased host name or IP literal; an IPv6 literal is held without brackets.
    package let host: String
    package let port: UInt16
    /// The request target: path plus optional `?query`, always starting with `/`; no fragment.
    package let target: String

    /// Parses an absolute URL such as `http://captive.example/generate_204` or `https://[::1]:8443/x?y`.
    package init(_ text: String) throws(ParseError) {
        let input = Self.trimmed(text)
        func fail(_ message: String) -> ParseError { ParseError(input: text, message: message) }
        guard let sep = input.firstRange(of: "://") else { throw fail("expected scheme://host") }
        guard let scheme = Scheme(rawValue: input[..<sep.lowerBound].lowercased()) else {
            throw fail("unsupported scheme \(input[..<sep.lowerBound].debugDescription) (only http and https)")
        }
        let rest = input[sep.upperBound...]
        let authorityEnd =
            rest.firstIndex(where: { (c: Character) in c == "/" || c == "?" || c == "#" }) ?? rest.endIndex
        do throws(Problem) {
            (host, port) = try Self.parseAuthority(rest[..<authorityEnd], scheme: scheme)
            target = try Self.normalizeTarget(rest[authorityEnd...])
        } catch {
            throw fail(error.message)
        }
        self.scheme = scheme
    }

    private init(scheme: Scheme, host: String, port: UInt16, target: String) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.target = target
    }

    package var isIPv6Literal: Bool { host.contains(":") }
    /// True for numeric IPv4 or IPv6 hosts (no SNI is sent for these).
    package var isIPLiteral: Bool { SocketAddress(ip: host) != nil }
    /// The host as written in a URL or Host header: IPv6 literals in brackets.
    package var bracketedHost: String { isIPv6Literal ? "[\(host)]" : host }
    /// Same scheme, host and port: the unit credentials belong to (RFC 6454).
    package func isSameOrigin(as other: ProbeURL) -> Bool {
        scheme == other.scheme && host.lowercased() == other.host.lowercased() && port == other.port
    }

    /// `host[:port]`, the port only when it is not the scheme's default (the Host header value).
    package var authority: String { port == scheme.defaultPort ? bracketedHost : "\(bracketedHost):\(port)" }
    package var path: Substring { target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0] }
    package var description: String { "\(scheme.rawValue)://\(authority)\(target)" }

    /// This URL with `name=value` appended to the query.
    package func appendingQueryItem(name: String, value: String) -> ProbeURL {
        let joiner = target.contains("?") ? "&" : "?"
        return ProbeURL(scheme: scheme, host: host, port: port, target: target + joiner + name + "=" + value)
    }

    /// Resolves a `Location` value (absolute, scheme-relative, absolute-path or relative) against this URL.
    package func resolving(_ reference: String) throws(ParseError) -> ProbeURL {
        var ref = Self.trimmed(reference)
        if let hash = ref.firstIndex(of: "#") { ref = ref[..<hash] }
        if Self.hasScheme(ref) { return try ProbeURL(String(ref)) }
        if ref.hasPrefix("//") { return try ProbeURL(scheme.rawValue + ":" + ref) }
        if ref.isEmpty { return self }
        let refPath: Substring
        let refQuery: Substring?
        if let q = ref.firstIndex(of: "?") {
            refPath = ref[..<q]
            refQuery = ref[ref.index(after: q)...]
        } else {
            refPath = ref
            refQuery = nil
        }
        var newPath: String
        if refPath.isEmpty {
            newPath = String(path)
        } else if refPath.hasPrefix("/") {
            newPath = Self.removeDotSegments(String(refPath))
        } else {
            let base = path
            let directory = base.lastIndex(of: "/").map { base[...$0] } ?? "/"
            newPath = Self.removeDotSegments(String(directory) + refPath)
        }
        if newPath.isEmpty || !newPath.hasPrefix("/") { newPath = "/" + newPath }
        var newTarget = newPath
        if let refQuery {
            newTarget += "?" + refQuery
        } else if refPath.isEmpty, let q = target.firstIndex(of: "?") {
            newTarget += target[q...]
        }
        let encoded: String
        do throws(Problem) {
            encoded = try Self.normalizeTarget(Substring(newTarget))
        } catch {
            throw ParseError(input: reference, message: error.message)
        }
        return ProbeURL(scheme: scheme, host: host, port: port, target: encoded)
    }

    // MARK: - Pieces

    private struct Problem: Error {
        package let message: String
        package init(_ message: String) { self.message = message }
    }

    private static func trimmed(_ s: String) -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
        let sub = Substring(s)
        guard let first = sub.firstIndex(where: { !isSpace($0) }), let last = sub.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return sub[first...last]
    }

    private static func hasScheme(_ s: Substring) -> Bool {
        guard let colon = s.firstIndex(of: ":"), colon != s.startIndex else { return false }
        let name = s[..<colon]
        guard let first = name.first, first.isASCII, first.isLetter else { return false }
        return name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".") }
    }

    private static func parseAuthority(_ authority: Substring, scheme: Scheme) throws(Problem) -> (String, UInt16) {
        if authority.contains("@") { throw Problem("user info (user@host) is not supported") }
        var hostPart: Substring
        var portPart: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw Problem("unclosed [ in the IPv6 literal") }
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw Problem("unexpected text after the IPv6 literal") }
                portPart = after.dropFirst()
            }
            guard hostPart.contains(":"), SocketAddress(ip: String(hostPart)) != nil else {
                throw Problem("\(hostPart.debugDescription) is not an IPv6 address")
            }
        } else {
            let colons = authority.filter { $0 == ":" }.count
            if colons > 1 { throw Problem("an IPv6 literal must be written in brackets, e.g. http://[::1]/") }
            if let colon = authority.firstIndex(of: ":") {
                hostPart = authority[..<colon]
                portPart = authority[authority.index(after: colon)...]
            } else {
                hostPart = authority
            }
            if let problem = hostNameProblem(hostPart) { throw Problem(problem) }
        }
        var port = scheme.defaultPort
        if let portPart, !portPart.isEmpty {
            guard portPart.count <= 5, portPart.allSatisfy({ $0.isASCII && $0.isNumber }),
                let value = UInt16(portPart), value > 0
            else { throw Problem("port \(portPart.debugDescription) is not a number in 1...65535") }
            port = value
        }
        return (hostPart.lowercased(), port)
    }

    /// Same character rules as `Resolver`, so a host that parses here is never refused there.
    private static func hostNameProblem(_ host: Substring) -> String? {
        if host.isEmpty { return "missing host" }
        if host.utf8.count > 253 { return "host name longer than 253 bytes" }
        guard Resolver.isPlausibleHostName(String(host)) else {
            return "host \(host.debugDescription) has characters other than letters, digits, '-', '.', '_'"
        }
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        for (i, label) in labels.enumerated() where label.isEmpty && i != labels.count - 1 {
            return "host \(host.debugDescription) has an empty label"
        }
        if labels.contains(where: { $0.utf8.count > 63 }) { return "a host label is longer than 63 bytes" }
        return nil
    }

    /// Drops the fragment, makes an empty path `/`, percent-encodes spaces and non-ASCII bytes,
    /// and refuses control characters (they could split the request line).
    private static func normalizeTarget(_ raw: Substring) throws(Problem) -> String {
        var text = raw
        if let hash = text.firstIndex(of: "#") { text = text[..<hash] }
        var out = text.hasPrefix("/") ? "" : "/"
        out.reserveCapacity(text.utf8.count + 1)
        let hex: [Character] = Array("0123456789ABCDEF")
        for byte in text.utf8 {
            if byte < 0x20 || byte == 0x7F { throw Problem("control character in the path or query") }
            if byte == 0x20 || byte > 0x7E {
                out.append("%")
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0xF)])
            } else {
                out.append(Character(Unicode.Scalar(byte)))
            }
        }
        return out
    }

    /// RFC 3986 §5.2.4.
    package static func removeDotSegments(_ path: String) -> String {
        var input = Substring(path)
        var output = ""
        func dropLastSegment() {
            if let slash = output.lastIndex(of: "/") { output.removeSubrange(slash...) } else { output = "" }
        }
        while !input.isEmpty {
            if input.hasPrefix("../") {
                input = input.dropFirst(3)
            } else if input.hasPrefix("./") {
                input = input.dropFirst(2)
            } else if input.hasPrefix("/./") {
                input = input.dropFirst(2)
            } else if input == "/." {
                input = "/"
            } else if input.hasPrefix("/../") {
                input = input.dropFirst(3)
                dropLastSegment()
            } else if input == "/.." {
                input = "/"
                dropLastSegment()
            } else if input == "." || input == ".." {
                input = ""
            } else {
                let start = input.hasPrefix("/") ? input.index(after: input.startIndex) : input.startIndex
                let end = input[start...].firstIndex(of: "/") ?? input.endIndex
                output += input[..<end]
                input = input[end...]
            }
        }
        return output
    }
}
