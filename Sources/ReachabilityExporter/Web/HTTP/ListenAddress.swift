import ReachabilityVerdict

/// A `--web.listen-address` value: `:10361`, `0.0.0.0:10361`, `127.0.0.1:0`, `[::1]:10361`,
/// `localhost:10361`. An empty host means every address (dual-stack where IPv6 exists).
package struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    package var host: String
    package var port: UInt16

    package init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    package struct Invalid: Error, CustomStringConvertible, Equatable {
        package let description: String
    }

    package static func parse(_ text: String) throws(Invalid) -> ListenAddress {
        guard let colon = text.lastIndex(of: ":") else {
            throw Invalid(
                description: "listen address \(text.debugDescription) needs a port, as in :10361 or 127.0.0.1:10361")
        }
        var host = String(text[..<colon])
        let portText = text[text.index(after: colon)...]
        guard let port = UInt16(portText) else {
            throw Invalid(
                description:
                    "listen address \(text.debugDescription): port \(String(portText).debugDescription) is not a number from 0 to 65535"
            )
        }
        if host.hasPrefix("[") {
            guard host.hasSuffix("]") else {
                throw Invalid(description: "listen address \(text.debugDescription): unbalanced brackets")
            }
            host = String(host.dropFirst().dropLast())
        } else if host.contains(":") {
            throw Invalid(
                description:
                    "listen address \(text.debugDescription): write IPv6 addresses in brackets, as in [::1]:10361")
        }
        if host == "localhost" { host = "127.0.0.1" }
        if !host.isEmpty && SocketAddress(ip: host) == nil {
            throw Invalid(
                description: "listen address \(text.debugDescription): \(host.debugDescription) is not an IP address")
        }
        return ListenAddress(host: host, port: port)
    }

    package var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
