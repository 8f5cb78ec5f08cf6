/// A probe configuration value that cannot work, with a message for a person
/// (`tcp target "example.com:99999": port must be 1–65535`). Thrown by the throwing
/// initialisers of the probe config structs; the config loader adds file and line.
package struct ProbeConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    package let message: String

    package init(_ message: String) { self.message = message }

    package var description: String { message }
}

extension ProbeConfigError {
    /// Checks an interface name for SO_BINDTODEVICE (`InterfaceName`).
    static func checkInterface(_ name: String?) throws(ProbeConfigError) {
        guard let name, let problem = InterfaceName.problem(name) else { return }
        throw ProbeConfigError("interface \(name.debugDescription): \(problem)")
    }
}
