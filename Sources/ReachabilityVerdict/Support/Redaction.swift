/// What never appears in an error, a log line or a response body: a URL's user information
/// (`scheme://user:password@host`) and anything written under a key that holds a credential.
/// Applied where errors are built (`ConfigError`, `ProbeConfigError`, `UsageError`,
/// `ProbeURL.ParseError`, a YAML node's "found" text), so every path that shows them (check-config,
/// flags, the start error, the reload log line, the `POST /-/reload` body) shows the redacted text.
///
/// Not for: telling what is secret in free text that names no key and has no `://` (nothing can).
package enum Redaction {
    /// What stands in for user information: `http://<credentials>@host/`.
    package static let credentials = "<credentials>"

    /// `text` with the user information of every `scheme://user[:password]@host` in it replaced.
    package static func userinfo(in text: String) -> String {
        guard text.contains("@"), text.contains("://") else { return text }
        var out = ""
        var rest = Substring(text)
        while let sep = rest.firstRange(of: "://") {
            out += rest[..<sep.upperBound]
            rest = rest[sep.upperBound...]
            // Where the quoted URL ends. A password may hold "/", "?" or "#" (written unescaped
            // by hand), so the userinfo runs to the last "@" before that end, not before the path:
            // `http://user:pa#ss@proxy:3128` is redacted whole.
            let end = rest.firstIndex(where: { "\"' \t\r\n<>\\".contains($0) }) ?? rest.endIndex
            // A userinfo never starts with "[" (RFC 3986): `http://[user:password@]host` is a pattern.
            if let at = rest[..<end].lastIndex(of: "@"), rest.first != "[" {
                out += credentials
                rest = rest[at...]
            }
        }
        return out + rest
    }

    /// Keys whose values are credentials, lower-cased: web `basic_auth_users`, a TLS `key`,
    /// headers that carry credentials, and the usual names of passwords and tokens.
    package static let secretKeys: Set<String> = [
        "basic_auth_users", "password", "passwd", "key", "bearer_token", "token", "secret", "credentials",
        "authorization", "proxy-authorization", "cookie", "cookie2", "x-api-key", "api_key", "api-key",
    ]

    /// Whether a key path (`probes[0].http.headers.Authorization`, `basic_auth_users.alice`) runs
    /// through a key whose value is a credential.
    package static func isSecret(path: String) -> Bool {
        path.split(whereSeparator: { $0 == "." || $0 == "[" }).contains { part in
            let name = part.hasPrefix("\"") && part.hasSuffix("\"") ? part.dropFirst().dropLast() : part
            return secretKeys.contains(name.lowercased())
        }
    }

    /// YAML text as written, with the value of every credential key (`password: x`,
    /// `{password: x}`, `Authorization: Bearer x`) shown as `<secret>`, as blackbox's `Secret`
    /// marshals, and URL user information replaced: for showing a module as written.
    package static func yamlSecrets(in text: String) -> String {
        var out = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var l = Substring(line)
            var done = ""
            while let colon = l.firstIndex(of: ":") {
                let keyStart =
                    l[..<colon].lastIndex(where: { $0 == " " || $0 == "{" || $0 == "," || $0 == "-" }).map {
                        l.index(after: $0)
                    } ?? l.startIndex
                let key = l[keyStart..<colon].trimmingCharacters(in: "\"'")
                let afterColon = l.index(after: colon)
                guard secretKeys.contains(key.lowercased()), afterColon == l.endIndex || l[afterColon] == " " else {
                    done += l[...colon]
                    l = l[afterColon...]
                    continue
                }
                let valueEnd = l[afterColon...].firstIndex(where: { $0 == "," || $0 == "}" || $0 == "#" }) ?? l.endIndex
                let value = l[afterColon..<valueEnd]
                done += l[..<afterColon] + (value.allSatisfy { $0 == " " } ? value : " <secret>")
                l = l[valueEnd...]
            }
            out += (out.isEmpty ? "" : "\n") + userinfo(in: done + l)
        }
        return out
    }

    /// What an error says it found under a secret key: the value's shape, never its text.
    package static func shapeOnly(_ found: String) -> String {
        found.hasPrefix("\"") ? "a string (not shown: it may be a secret)" : found
    }
}

extension Substring {
    /// Without these characters at either end.
    fileprivate func trimmingCharacters(in set: String) -> Substring {
        var s = self
        while let f = s.first, set.contains(f) { s = s.dropFirst() }
        while let l = s.last, set.contains(l) { s = s.dropLast() }
        return s
    }
}
