/// The one rule for network interface names, wherever one is given (`--probe.uplink`, the
/// file's `uplinks`, a probe bound with `SO_BINDTODEVICE`): Linux's `dev_valid_name` — 1 to 15
/// bytes, not `.` or `..`, no `/`, `:` or white space — and no control characters.
package enum InterfaceName {
    /// The rule in a few words, for messages.
    package static let rule = "1–15 bytes, no '/', ':', white space or control characters"

    /// Why `name` cannot be an interface name, or nil when it can.
    package static func problem(_ name: String) -> String? {
        let bytes = Array(name.utf8)
        if bytes.isEmpty || bytes.count > 15 { return "must be 1–15 bytes" }
        if name == "." || name == ".." { return "cannot be \(name)" }
        if bytes.contains(where: { $0 == 0x2F || $0 == 0x3A || $0 <= 0x20 || $0 == 0x7F }) {
            return "must not contain '/', ':', white space or control characters"
        }
        return nil
    }
}
