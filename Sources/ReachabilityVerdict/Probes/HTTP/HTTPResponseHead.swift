/// The status line and header fields of an HTTP/1.x response, as parsed from the wire.
package struct HTTPResponseHead: Sendable, Equatable {
    /// One header field, name as received.
    package struct Field: Sendable, Equatable {
        package var name: String
        package var value: String

        package init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// `HTTP/1.1` or `HTTP/1.0`.
    package var version: String
    package var status: Int
    package var reasonPhrase: String
    package var fields: [Field]

    package init(version: String = "HTTP/1.1", status: Int, reasonPhrase: String = "", fields: [Field] = []) {
        self.version = version
        self.status = status
        self.reasonPhrase = reasonPhrase
        self.fields = fields
    }

    /// The first value of a header, compared case-insensitively.
    package func value(of name: String) -> String? {
        let wanted = name.lowercased()
        return fields.first { $0.name.lowercased() == wanted }?.value
    }

    /// Every value of a header, in order.
    package func values(of name: String) -> [String] {
        let wanted = name.lowercased()
        return fields.filter { $0.name.lowercased() == wanted }.map(\.value)
    }

    /// The media type of `Content-Type`, lower-cased, its parameters left out (`application/json`
    /// of `Application/JSON; charset=utf-8`); nil without the header.
    package var mediaType: String? {
        value(of: "Content-Type")?.split(separator: ";").first?.trimmingSpaces
            .lowercased()
    }

    /// `HTTP/1.1 204 No Content`.
    package var statusLine: String { "\(version) \(status)\(reasonPhrase.isEmpty ? "" : " " + reasonPhrase)" }
}
