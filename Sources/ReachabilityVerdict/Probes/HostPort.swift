/// A host and port as written in configuration. Accepted forms: `host:port`, `1.2.3.4:port`,
/// `[v6]:port`, and, when a default port exists, `host`, `1.2.3.4`, `[v6]` and a bare `v6`
/// literal. The host is an IP literal or a valid DNS name (see `DNSMessage.validatedLabels`).
package struct HostPort: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// The host without brackets.
    package var host: String
    package var port: UInt16

    package init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses `text`; `defaultPort` nil means the port is required.
    package init(parsing text: String, defaultPort: UInt16? = nil) throws(ProbeConfigError) {
        let quoted = text.debugDescription
        guard !text.isEmpty else { throw ProbeConfigError(.target, "empty address, expected host:port") }
        var host: Substring
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else {
                throw ProbeConfigError(.target, "\(quoted): '[' without ']', expected [ipv6]:port")
            }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else {
                    throw ProbeConfigError(.target, "\(quoted): expected ':port' after ']'")
                }
                portText = rest.dropFirst()
            }
            guard SocketAddress(ip: String(host))?.ipFamily == .ipv6 else {
                throw ProbeConfigError(.target, "\(quoted): brackets must hold an IPv6 address")
            }
        } else if text.filter({ $0 == ":" }).count >= 2 {
            // A bare IPv6 literal: no port can follow without brackets.
            guard SocketAddress(ip: text)?.ipFamily == .ipv6 else {
                throw ProbeConfigError(.target, "\(quoted): not an IPv6 address; write [ipv6]:port or host:port")
            }
            host = Substring(text)
        } else if let colon = text.lastIndex(of: ":") {
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        } else {
            host = Substring(text)
        }
        let port: UInt16
        if let portText {
            guard !portText.isEmpty, portText.allSatisfy(\.isASCII), portText.allSatisfy(\.isNumber),
                let value = Int(portText), (1...65535).contains(value)
            else {
                throw ProbeConfigError(
                    .target, "\(quoted): port must be a number 1–65535, found \(String(portText).debugDescription)")
            }
            port = UInt16(value)
        } else if let defaultPort {
            port = defaultPort
        } else {
            throw ProbeConfigError(.target, "\(quoted): missing port, expected host:port or [ipv6]:port")
        }
        if SocketAddress(ip: String(host)) == nil {
            do {
                _ = try DNSMessage.validatedLabels(String(host))
            } catch {
                throw ProbeConfigError(.target, "\(quoted): host is neither an IP address nor a valid name (\(error))")
            }
            if host.hasSuffix(".") { host = host.dropLast() }
        }
        self.host = String(host)
        self.port = port
    }

    /// The numeric address when the host is an IP literal.
    package var numericAddress: SocketAddress? { SocketAddress(ip: host, port: port) }

    package var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
