/// The status line and header fields of an HTTP/1.x response, as parsed from the wire.
public struct HTTPResponseHead: Sendable, Equatable {
    /// One header field, name as received.
    public struct Field: Sendable, Equatable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// `HTTP/1.1` or `HTTP/1.0`.
    public var version: String
    public var status: Int
    public var reasonPhrase: String
    public var fields: [Field]

    public init(version: String = "HTTP/1.1", status: Int, reasonPhrase: String = "", fields: [Field] = []) {
        self.version = version
        self.status = status
        self.reasonPhrase = reasonPhrase
        self.fields = fields
    }

    /// The first value of a header, compared case-insensitively.
    public func value(of name: String) -> String? {
        let wanted = name.lowercased()
        return fields.first { $0.name.lowercased() == wanted }?.value
    }

    /// Every value of a header, in order.
    public func values(of name: String) -> [String] {
        let wanted = name.lowercased()
        return fields.filter { $0.name.lowercased() == wanted }.map(\.value)
    }

    /// `HTTP/1.1 204 No Content`.
    public var statusLine: String { "\(version) \(status)\(reasonPhrase.isEmpty ? "" : " " + reasonPhrase)" }
}
