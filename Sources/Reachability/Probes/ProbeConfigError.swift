/// A probe configuration value that cannot work, with a message for a person
/// (`tcp target "example.com:99999": port must be 1–65535`). Thrown by the throwing
/// initialisers of the probe config structs; the config loader adds file and line.
public struct ProbeConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}

extension ProbeConfigError {
    /// Checks an interface name for SO_BINDTODEVICE: 1–15 bytes, no '/', ':' or white space.
    static func checkInterface(_ name: String?) throws(ProbeConfigError) {
        guard let name else { return }
        guard !name.isEmpty, name.utf8.count <= 15 else {
            throw ProbeConfigError("interface \(name.debugDescription): must be 1–15 characters")
        }
        guard name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: ":") }) else {
            throw ProbeConfigError("interface \(name.debugDescription): has a character not allowed in interface names")
        }
    }
}
